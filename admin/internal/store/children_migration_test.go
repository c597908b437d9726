package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
)

// migratePostgresTo applies the embedded PostgreSQL migrations up to
// version to the new database at url, as a release that had only those
// did.
func migratePostgresTo(t *testing.T, url string, version int) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	applyMigrations(t, db, "migrations_postgres", version)
	return db
}

// TestChildrenMigrated migrates a database of the release before
// job_children (SQLite's migration 0021, PostgreSQL's 0022), whose jobs
// list their children as text: each keeps them in order, a child listed
// twice once, a child that no longer exists none; the text column is
// gone, and a child still cannot be deleted.
func TestChildrenMigrated(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			path := be.DB(t)
			var old *sql.DB
			if be.Name == "postgres" {
				old = migratePostgresTo(t, path, 22)
			} else {
				old = migrateTo(t, path, 21)
			}
			for _, q := range []string{
				`INSERT INTO groups (id, app_name, title, address_mode, created_at, updated_at) VALUES (1, 'a', 'A', 1, 1, 1)`,
				`INSERT INTO jobs (id, group_id, description, schedule_type, misfire_strategy, route_strategy, block_strategy, child_job_ids, created_at, updated_at)
					VALUES (1, 1, 'one', 0, 1, 1, 1, '3,2,4', 1, 1), (2, 1, 'two', 0, 1, 1, 1, '', 1, 1),
					(3, 1, 'three', 0, 1, 1, 1, '4,9', 1, 1), (4, 1, 'four', 0, 1, 1, 1, '2,2', 1, 1)`,
			} {
				if _, err := old.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			old.Close()

			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for id, want := range map[int64][]int64{1: {3, 2, 4}, 2: nil, 3: {4}, 4: {2}} {
				j, err := s.Jobs.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(j.ChildJobIDs, want) {
					t.Errorf("job %d after the migration: children %v, want %v", id, j.ChildJobIDs, want)
				}
			}
			if _, err := s.r.Exec(`SELECT child_job_ids FROM jobs`); err == nil {
				t.Error("jobs.child_job_ids is still there after the migration")
			}
			if err := s.Jobs.Delete(ctx, 2); !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "job 1 (") || !strings.Contains(err.Error(), "job 4 (") {
				t.Errorf("deleting job 2, a child of jobs 1 and 4: %v, want ErrInUse naming both", err)
			}
		})
	}
}
