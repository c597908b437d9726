package store

// Exported for tests.
const (
	SQLRunning = sqlRunning
	SQLPending = sqlPending
)
