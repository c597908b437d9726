package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// CountExecutors returns how many distinct executor addresses registered
// at or after since.
func (s *Store) CountExecutors(ctx context.Context, since time.Time) (int64, error) {
	var n int64
	err := s.r.QueryRowContext(ctx, `SELECT count(DISTINCT address) FROM registry WHERE updated_at >= ?`, since.UnixMilli()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count executors: %w", err)
	}
	return n, nil
}

// CountRuns returns how many runs scheduled in [from, to) have each status.
func (s *Store) CountRuns(ctx context.Context, from, to time.Time) (map[carillonv1.RunStatus]int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT status, count(*) FROM runs WHERE scheduled_at >= ? AND scheduled_at < ? GROUP BY status`,
		from.UnixMilli(), to.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("store: count runs: %w", err)
	}
	defer rows.Close()
	counts := map[carillonv1.RunStatus]int64{}
	for rows.Next() {
		var st carillonv1.RunStatus
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("store: count runs: %w", err)
		}
		counts[st] = n
	}
	return counts, rows.Err()
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

// DeleteRuns deletes up to limit runs of sel and returns how many it
// deleted; call it again until it returns 0. Small batches keep each write
// transaction short, so deleting never holds up scheduling for long.
func (s *Store) DeleteRuns(ctx context.Context, sel RunSelection, limit int) (int64, error) {
	where := []string{"status NOT IN (?, ?)"}
	args := []any{carillonv1.RunStatus_RUN_STATUS_RUNNING, carillonv1.RunStatus_RUN_STATUS_PENDING}
	if sel.JobID != 0 {
		where, args = append(where, "job_id = ?"), append(args, sel.JobID)
	}
	if sel.GroupID != 0 {
		where, args = append(where, "group_id = ?"), append(args, sel.GroupID)
	}
	cond := strings.Join(where, " AND ")
	q := `DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE ` + cond
	all := append([]any(nil), args...)
	if !sel.Before.IsZero() {
		q += ` AND scheduled_at < ?`
		all = append(all, sel.Before.UnixMilli())
	}
	if sel.KeepLast > 0 {
		q += ` AND id NOT IN (SELECT id FROM runs WHERE ` + cond + ` ORDER BY id DESC LIMIT ?)`
		all = append(all, args...)
		all = append(all, sel.KeepLast)
	}
	q += ` ORDER BY id LIMIT ?)`
	all = append(all, limit)
	var n int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, all...)
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
