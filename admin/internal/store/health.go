package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// storageError returns err marked with ErrFull or ErrReadOnly when SQLite
// said the disk is full or the database read-only, else err.
func storageError(err error) error {
	var se *sqlite.Error
	if err == nil || !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff { // the primary result code, without the extended part
	case sqlite3.SQLITE_FULL:
		return fmt.Errorf("%w: %w", ErrFull, err)
	case sqlite3.SQLITE_READONLY:
		return fmt.Errorf("%w: %w", ErrReadOnly, err)
	}
	return err
}

// writeHealth remembers whether the last write transaction failed for
// want of storage (ErrFull, ErrReadOnly).
type writeHealth struct {
	err atomic.Pointer[error]
}

// record notes the outcome of a write transaction: a storage error, or
// any other outcome, which shows the database took writes again (an error
// such as a unique key is the caller's, not the storage's).
func (h *writeHealth) record(err error) {
	if errors.Is(err, ErrFull) || errors.Is(err, ErrReadOnly) {
		h.err.Store(&err)
		return
	}
	if err == nil && h.err.Load() != nil {
		h.err.Store(nil)
	}
}

// Writable returns nil unless the last write transaction failed because
// the database's disk was full or the database read-only; then it returns
// that error (matching ErrFull or ErrReadOnly) until a write succeeds.
func (s *Store) Writable() error {
	if p := s.health.err.Load(); p != nil {
		return *p
	}
	return nil
}

// probe makes a real write transaction (a row inserted and deleted) so
// that Open fails on a database the admin cannot write, rather than every
// scan failing later.
func (s *db) probe(ctx context.Context, path string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)`,
			`INSERT OR REPLACE INTO schema_migrations (version) VALUES (0)`,
			`DELETE FROM schema_migrations WHERE version = 0`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		return nil
	}
	hint := "check that the file and its directory are writable by this user and that its file system is mounted read-write"
	if errors.Is(err, ErrFull) {
		hint = "free space on its disk"
	}
	return fmt.Errorf("store: open %s: the admin cannot write the database (%w); %s", path, err, hint)
}

// LimitPages caps the database at n pages of the writer connection
// (SQLite's max_page_count, never below the pages in use), so that a write
// needing more fails with ErrFull as on a full disk. It is for tests and
// drills of a full disk; a large n lifts the cap.
func (s *Store) LimitPages(ctx context.Context, n int64) error {
	if n <= 0 {
		return fmt.Errorf("store: limit pages: %d: must be positive", n)
	}
	if s.pg != nil {
		return errors.New("store: limit pages: a SQLite database's limit; PostgreSQL has none")
	}
	_, err := s.w.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", n))
	return err
}
