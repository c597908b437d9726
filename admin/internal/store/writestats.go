package store

import (
	"os"
	"sync/atomic"
	"time"
)

// writeStats counts the write transactions waiting for the one writer
// connection, and hands the time each held it to an observer: what
// metrics report of the writer.
type writeStats struct {
	waiting  atomic.Int64
	observer atomic.Pointer[func(held time.Duration)]
}

// WritesWaiting returns how many write transactions wait for the
// database's one writer connection now.
func (s *Store) WritesWaiting() int64 { return s.writes.waiting.Load() }

// ObserveWrites makes fn see, after each write transaction the Store
// makes, how long it held the writer connection (from its BEGIN to its
// COMMIT or ROLLBACK). fn runs on the writer's path: it must be quick. A
// nil fn observes nothing.
func (s *Store) ObserveWrites(fn func(held time.Duration)) {
	if fn == nil {
		s.writes.observer.Store(nil)
		return
	}
	s.writes.observer.Store(&fn)
}

// observe hands held to the observer, if any.
func (w *writeStats) observe(held time.Duration) {
	if fn := w.observer.Load(); fn != nil {
		(*fn)(held)
	}
}

// Size returns the bytes the database takes on disk: its file and its
// write-ahead log.
func (s *Store) Size() (int64, error) {
	fi, err := os.Stat(s.path)
	if err != nil {
		return 0, err
	}
	n := fi.Size()
	if wal, err := os.Stat(s.path + "-wal"); err == nil {
		n += wal.Size()
	}
	return n, nil
}
