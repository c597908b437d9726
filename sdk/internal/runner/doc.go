// Package runner runs the runs an executor accepts: it applies each job's
// block strategy, runs a job's runs one at a time and the runs of
// different jobs concurrently, starts a run sent ahead on its due instant,
// kills, times out and drains runs, and ends each run with its result,
// handed to package report, and its log, closed in package runlog.
//
// A run's handler always runs on a goroutine of its own. A run queued
// behind its job's running run is started by its job's worker goroutine,
// which waits for its end; a run launched on its due instant (launcher.go) has
// no worker: its instant's timer launches it (launcher.go), and the
// collector finishes it in a batch with the rest of its burst
// (collector.go). Either way the run goes through the same states
// (state.go), and ends one way: finish, which writes its last log line,
// tells its observer and makes its result, for the recorder to write its
// log and spool its result (recorder.go), or to report at once.
package runner
