package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// OpenReadOnlyWriter opens the database at path as Open does, but with its
// writer connection read-only, as on a read-only file or file system.
func OpenReadOnlyWriter(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, "ro")
}

// RunCountsDrift returns the (bucket, group, status) keys where run_counts
// differs from a GROUP BY count over the runs folded into it, as
// "bucket/status: counter vs count"; empty when they agree. Zero counters
// count as absent.
func (s *Store) RunCountsDrift(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `
		WITH actual AS (SELECT scheduled_at / 900000 AS bucket, group_id, status, count(*) AS n FROM runs
		                WHERE id <= (SELECT id FROM run_counts_upto) GROUP BY 1, 2, 3),
		     kept AS (SELECT bucket, group_id, status, n FROM run_counts WHERE n != 0)
		SELECT coalesce(k.bucket, a.bucket), coalesce(k.status, a.status), coalesce(k.n, 0), coalesce(a.n, 0)
		FROM kept k FULL JOIN actual a ON a.bucket = k.bucket AND a.group_id = k.group_id AND a.status = k.status
		WHERE coalesce(k.n, 0) != coalesce(a.n, 0)`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var drift []string
	for rows.Next() {
		var bucket, status, kept, actual int64
		if err := rows.Scan(&bucket, &status, &kept, &actual); err != nil {
			return nil, err
		}
		drift = append(drift, fmt.Sprintf("%d/%d: counter %d vs count %d", bucket, status, kept, actual))
	}
	return drift, rows.Err()
}

// RunCounters returns how many (bucket, status) counters there are.
func (s *Store) RunCounters(ctx context.Context) (n int64, err error) {
	err = s.r.QueryRowContext(ctx, `SELECT count(*) FROM run_counts WHERE n != 0`).Scan(&n)
	return n, err
}

// UndoRunCounts drops migrations 0005 and 0007, as on a database made
// before them.
func (s *Store) UndoRunCounts(ctx context.Context) error {
	for _, q := range []string{
		`DROP TRIGGER run_counts_update`, `DROP TRIGGER run_counts_delete`,
		`DROP TABLE run_counts`, `DROP TABLE run_counts_upto`, `DELETE FROM schema_migrations WHERE version IN (5, 7)`,
	} {
		if _, err := s.w.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// CountRunsScan counts the runs scheduled in [from, to) per status over
// the runs table, as RunStore.Count did before migration 0005.
func (s *Store) CountRunsScan(ctx context.Context, from, to time.Time, g Groups) (map[carillonv1.RunStatus]int64, error) {
	counts := map[carillonv1.RunStatus]int64{}
	return counts, countRuns(ctx, s.r, s.d, counts, from.UnixMilli(), to.UnixMilli(), g)
}

// FoldRunCounts folds every run not in run_counts yet into it, also runs
// in flight (which the store's folds leave out while fewer than foldLag),
// and returns how many it folded.
func (s *Store) FoldRunCounts(ctx context.Context) (int64, error) {
	return s.foldRunCounts(ctx, 1<<62, 0, true)
}

// FoldRunCountsLag folds as the store's folds do, with limit and lag of
// its own, past PostgreSQL's settle marks (all), and returns how many it
// folded.
func (s *Store) FoldRunCountsLag(ctx context.Context, limit, lag int64) (int64, error) {
	return s.foldRunCounts(ctx, limit, lag, true)
}

// RunCountsUpTo returns the id of the last run folded into run_counts.
func (s *Store) RunCountsUpTo(ctx context.Context) (id int64, err error) {
	err = s.r.QueryRowContext(ctx, `SELECT id FROM run_counts_upto`).Scan(&id)
	return id, err
}

// HoldAPIReads takes every connection of the API's readers and returns a
// function that gives them back, as API reads that run long do.
func (s *Store) HoldAPIReads(ctx context.Context) (release func(), err error) {
	var conns []*sql.Conn
	release = func() {
		for _, c := range conns {
			c.Close()
		}
	}
	for range APIReadConns {
		c, err := s.api.Conn(ctx)
		if err != nil {
			release()
			return nil, err
		}
		conns = append(conns, c)
	}
	return release, nil
}
