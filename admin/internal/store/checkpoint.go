package store

import (
	"context"
	"time"

	"github.com/carillonhq/carillon/admin/internal/service"
)

// checkpointInterval is how often committed pages are copied from the WAL
// into the database file.
const checkpointInterval = 250 * time.Millisecond

// CheckpointLoop returns the service that copies committed pages from
// the write-ahead log into the SQLite database file (checkpoints): an
// admin runs it while it writes. Over PostgreSQL it ends at once.
func (s *Store) CheckpointLoop() service.Service { return service.NewLoop(s.checkpoints) }

// checkpoints copies committed pages from the write-ahead log into the
// database file every checkpointInterval until stop ends, on a reader
// connection. SQLite's automatic checkpoint runs inside the writer's commit
// that passes 1,000 WAL pages: the one writer then copies pages and waits
// for fsync while every fire waits for the writer. Done here first, a
// PASSIVE checkpoint (which never blocks the writer or readers) copies most
// pages, and the writer's own runs only past 10,000 pages (see Open). It
// must stay on: under steady load only a checkpoint by the writer, just
// before its next write, lets the WAL start over from its beginning;
// without it the WAL file grows without bound.
func (s *db) checkpoints(stop context.Context) error {
	if s.pg != nil {
		return nil
	}
	return every(stop, checkpointInterval, 30*time.Second, func(ctx context.Context) {
		var busy, logPages, copied int
		// An error (the database closing) is retried at the next tick.
		_ = s.r.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logPages, &copied)
	})
}
