package store

import (
	"context"
	"time"
)

// checkpointInterval is how often committed pages are copied from the WAL
// into the database file.
const checkpointInterval = 250 * time.Millisecond

// checkpoints copies committed pages from the write-ahead log into the
// database file every checkpointInterval until stop is closed, on a reader
// connection. SQLite's automatic checkpoint runs inside the writer's commit
// that passes 1,000 WAL pages: the one writer then copies pages and waits
// for fsync while every fire waits for the writer. Done here first, a
// PASSIVE checkpoint (which never blocks the writer or readers) copies most
// pages, and the writer's own runs only past 10,000 pages (see Open). It
// must stay on: under steady load only a checkpoint by the writer, just
// before its next write, lets the WAL start over from its beginning;
// without it the WAL file grows without bound.
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
