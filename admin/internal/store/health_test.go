package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
)

// TestOpenUnwritable checks that Open refuses a database it cannot write,
// naming the file and the cause. Tests run as root, which chmod does not
// stop, so the writer connection is opened read-only (SQLite's mode=ro),
// which answers writes as a read-only file or file system does.
func TestOpenUnwritable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t, sqliteDB(t))
	s.Close()
	s, err := store.OpenReadOnlyWriter(ctx, b.path)
	if err == nil {
		s.Close()
		t.Fatal("Open of a database it cannot write succeeded")
	}
	if !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("error %v does not match ErrReadOnly", err)
	}
	if msg := err.Error(); !strings.Contains(msg, b.path) || !strings.Contains(msg, "writable") {
		t.Errorf("error %q: want the path and what to check", msg)
	}
	// The lock is released: a writable Open works.
	s, err = store.Open(ctx, b.path)
	if err != nil {
		t.Fatalf("Open after the refused one: %v", err)
	}
	s.Close()
}

// TestFullDisk checks that a write on a full database fails with ErrFull,
// that Writable says so until a write succeeds, and that writes work again
// once there is space. A full disk is simulated with SQLite's
// max_page_count on the writer connection.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t, sqliteDB(t))
	if err := s.Writable(); err != nil {
		t.Fatalf("Writable on a new database: %v", err)
	}
	if err := s.LimitPages(ctx, 1); err != nil { // no page beyond those in use
		t.Fatal(err)
	}
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		_, err = s.Jobs.Create(ctx, newJob(b.group.ID, t0.Add(time.Duration(i)*time.Second)), t0)
	}
	if !errors.Is(err, store.ErrFull) {
		t.Fatalf("writes on a full database: got %v, want ErrFull", err)
	}
	if !errors.Is(s.Writable(), store.ErrFull) {
		t.Errorf("Writable after a failed write: got %v, want ErrFull", s.Writable())
	}
	if err := s.LimitPages(ctx, 1<<30); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Jobs.Create(ctx, newJob(b.group.ID, t0), t0); err != nil {
		t.Fatalf("write with space again: %v", err)
	}
	if err := s.Writable(); err != nil {
		t.Errorf("Writable after a write succeeded: %v", err)
	}
}
