package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
)

// TestNewDatabaseOwnerOnly: a new database file, and the WAL SQLite makes
// beside it, are readable by their owner only: they hold the executor
// token and password hashes.
func TestNewDatabaseOwnerOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "carillon.db")
	s, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Groups.Create(ctx, store.Group{AppName: "app", Title: "app"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + ".lock"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s: mode %s, want no access for group and others", filepath.Base(p), perm)
		}
	}
}
