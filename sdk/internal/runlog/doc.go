// Package runlog is the executor's store of run logs: each run's log is
// kept in memory while it is short ([Log]) and spills to a file of its own
// when it grows; when the run ends it is appended, in one write, as a
// checksummed record to the segment of its run id's bucket, in one
// directory per day and admin database ([Store]). It reads a log back one
// page at a time ([ReadPage]), tells a restarted executor which runs it
// accepted before and which of them ended or were cut short
// ([Store.EarlierRuns], [Store.States]), and deletes the days past their
// retention ([CleanLoop]).
//
// The on-disk format is described at the top of logsegment.go (segments
// and records) and logstore.go (the directory layout).
package runlog
