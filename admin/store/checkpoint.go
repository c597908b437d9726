package store

import (
	"context"
	"time"
)

// checkpointInterval is how often committed pages are copied from the WAL
// into the database file.
const checkpointInterval = time.Second

// checkpoints copies committed pages from the write-ahead log into the
// database file every checkpointInterval until stop is closed, on a reader
// connection. The writer's own automatic checkpoint is off (see Open):
// done inside a commit, it made the one writer copy pages and wait for
// fsync while every fire waited for the writer. A PASSIVE checkpoint never
// blocks the writer or readers; it copies what no reader still needs.
func (s *Store) checkpoints(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(checkpointInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var busy, logPages, copied int
		// An error (the database closing) is retried at the next tick.
		_ = s.r.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logPages, &copied)
		cancel()
	}
}
