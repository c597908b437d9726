package store

// Exported for tests.
const (
	SQLRunning = sqlRunning
	SQLPending = sqlPending
)

// JobsChanged marks the job cache stale, as a job write does.
func (s *Store) JobsChanged() { s.jobs.changed() }

// JobReads is how many jobs the job cache has read from the database.
func (s *Store) JobReads() int64 { return s.jobs.reads.Load() }
