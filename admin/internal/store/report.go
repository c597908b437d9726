package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Groups selects the groups a count covers: every group, or those of IDs
// (none when IDs is empty), as a MEMBER sees.
type Groups struct {
	All bool
	IDs []int64
}

// AllGroups selects every group.
var AllGroups = Groups{All: true}

// where returns the condition on column that selects g's groups, its
// argument added to a: "" for every group.
func (g Groups) where(d dialect, a *args, column string) string {
	if g.All {
		return ""
	}
	return ` AND ` + column + ` IN (` + d.idRows(a.add(jsonIDs(g.IDs))) + `)`
}

// Count returns how many distinct executor addresses of g's
// groups' apps registered at or after since.
func (s RegistryStore) Count(ctx context.Context, since time.Time, g Groups) (int64, error) {
	var n int64
	a := args{since.UnixMilli()}
	cond := g.where(s.d, &a, "(SELECT id FROM groups WHERE groups.app_name = registry.app_name)")
	err := s.reader(ctx).QueryRowContext(ctx, `SELECT count(DISTINCT address) FROM registry WHERE updated_at >= $1`+cond, a...).Scan(&n) //nolint:gosec // concatenates constant SQL fragments; values are placeholders
	if err != nil {
		return 0, fmt.Errorf("store: count executors: %w", err)
	}
	return n, nil
}

// bucketMillis is the width of run_counts' buckets: 15 minutes, which
// divides every zone offset in use, so a day in any zone is whole buckets.
const bucketMillis = 15 * 60 * 1000

// Count returns how many runs of g's groups scheduled in [from, to)
// have each status.
// It reads the counts kept per 15 minutes and status (migration 0005) and
// counts over the runs table only the runs not folded into them yet (at
// most a few seconds' worth) and those of a partial bucket at either end of
// the range (a zone offset that is not a multiple of 15 minutes), so its
// cost does not grow with the runs table and its answer is exact.
func (s RunStore) Count(ctx context.Context, from, to time.Time, g Groups) (map[carillonv1.RunStatus]int64, error) {
	counts := map[carillonv1.RunStatus]int64{}
	f, t := from.UnixMilli(), to.UnixMilli()
	if t <= f {
		return counts, nil
	}
	tx, err := s.reader(ctx).BeginTx(ctx, nil) // one snapshot: the counters and the runs after them
	if err != nil {
		return nil, fmt.Errorf("store: count runs: %w", err)
	}
	defer tx.Rollback()
	first, end := (f+bucketMillis-1)/bucketMillis, t/bucketMillis // whole buckets [first, end)
	if f < 0 || first >= end {
		return counts, countRuns(ctx, tx, s.d, counts, f, t, g)
	}
	if err := countRuns(ctx, tx, s.d, counts, f, first*bucketMillis, g); err != nil {
		return nil, err
	}
	if err := countRuns(ctx, tx, s.d, counts, end*bucketMillis, t, g); err != nil {
		return nil, err
	}
	var upto int64
	if err := tx.QueryRowContext(ctx, `SELECT id FROM run_counts_upto`).Scan(&upto); err != nil {
		return nil, fmt.Errorf("store: count runs: %w", err)
	}
	a := args{first, end}
	cond := g.where(s.d, &a, "group_id")
	rows, err := tx.QueryContext(ctx, `SELECT status, sum(n) FROM run_counts WHERE bucket >= $1 AND bucket < $2`+cond+` GROUP BY status`, a...) //nolint:gosec // concatenates constant SQL fragments; values are placeholders
	if err := addCounts(counts, rows, err); err != nil {
		return nil, err
	}
	// NOT INDEXED: the rowid range of the runs not folded yet, never the
	// scheduled_at index over the whole range.
	a = args{upto, first * bucketMillis, end * bucketMillis}
	cond = g.where(s.d, &a, "group_id")
	rows, err = tx.QueryContext(ctx, `SELECT status, count(*) FROM runs`+s.d.notIndexed()+` WHERE id > $1 AND scheduled_at >= $2 AND scheduled_at < $3`+cond+` GROUP BY status`, a...) //nolint:gosec // concatenates constant SQL fragments; values are placeholders
	if err := addCounts(counts, rows, err); err != nil {
		return nil, err
	}
	return counts, nil
}

// countRuns adds to counts the runs of g's groups scheduled in [from,
// to), unix milliseconds, counted over the runs table.
func countRuns(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, d dialect, counts map[carillonv1.RunStatus]int64, from, to int64, g Groups) error {
	if to <= from {
		return nil
	}
	a := args{from, to}
	cond := g.where(d, &a, "group_id")
	rows, err := q.QueryContext(ctx, `SELECT status, count(*) FROM runs WHERE scheduled_at >= $1 AND scheduled_at < $2`+cond+` GROUP BY status`, a...)
	return addCounts(counts, rows, err)
}

// addCounts adds rows of (status, count) to counts.
func addCounts(counts map[carillonv1.RunStatus]int64, rows *sql.Rows, err error) error {
	if err != nil {
		return fmt.Errorf("store: count runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var st carillonv1.RunStatus
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			return fmt.Errorf("store: count runs: %w", err)
		}
		if n != 0 { // a counter whose runs all changed or went
			counts[st] += n
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: count runs: %w", err)
	}
	return nil
}

// RunSelection selects settled runs for DeleteRuns. Running and pending
// runs are never deleted.
type RunSelection struct {
	JobID   int64
	GroupID int64
	// Before selects runs scheduled before it; zero selects any age.
	Before time.Time
	// KeepLast keeps the newest N runs of the selection.
	KeepLast int
}

// Delete deletes up to limit runs of sel and returns how many it
// deleted; call it again until it returns 0. Small batches keep each write
// transaction short, so deleting never holds up scheduling for long.
func (s RunStore) Delete(ctx context.Context, sel RunSelection, limit int) (int64, error) {
	q, all := sel.query(limit)
	var n int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id IN (`+q+`)`, all...) //nolint:gosec // q is constant SQL fragments; values are placeholders
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: delete runs: %w", err)
	}
	return n, nil
}

// CountSelection returns how many runs RunStore.Delete would delete of sel
// (called until it returns 0): a dry run, for a confirmation.
func (s RunStore) CountSelection(ctx context.Context, sel RunSelection) (int64, error) {
	q, all := sel.query(0)
	var n int64
	if err := s.reader(ctx).QueryRowContext(ctx, `SELECT count(*) FROM (`+q+`) AS selected`, all...).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count runs to delete: %w", err)
	}
	return n, nil
}

// query returns the SELECT of the ids of sel's runs, the oldest limit of
// them (every one with limit 0), and its arguments.
func (sel RunSelection) query(limit int) (string, []any) {
	var a args
	where := []string{"status NOT IN (" + a.add(carillonv1.RunStatus_RUN_STATUS_RUNNING) + ", " + a.add(carillonv1.RunStatus_RUN_STATUS_PENDING) + ")"}
	if sel.JobID != 0 {
		where = append(where, "job_id = "+a.add(sel.JobID))
	}
	if sel.GroupID != 0 {
		where = append(where, "group_id = "+a.add(sel.GroupID))
	}
	cond := strings.Join(where, " AND ")
	q := `SELECT id FROM runs WHERE ` + cond //nolint:gosec // concatenates constant SQL fragments; values are placeholders
	if !sel.Before.IsZero() {
		q += ` AND scheduled_at < ` + a.add(sel.Before.UnixMilli())
	}
	if sel.KeepLast > 0 {
		// cond again, with the same arguments.
		q += ` AND id NOT IN (SELECT id FROM runs WHERE ` + cond + ` ORDER BY id DESC LIMIT ` + a.add(sel.KeepLast) + `)`
	}
	if limit > 0 {
		q += ` ORDER BY id LIMIT ` + a.add(limit)
	}
	return q, a
}
