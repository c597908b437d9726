package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Run is one execution of a job on one executor (one shard of a fire).
type Run struct {
	ID              int64
	JobID           int64
	GroupID         int64
	ExecutorAddress string
	Handler         string
	Param           string
	ShardIndex      int32
	ShardTotal      int32
	TriggerType     carillonv1.TriggerType
	ScheduledAt     time.Time
	TriggeredAt     time.Time
	TriggerMessage  string
	Status          carillonv1.RunStatus
	Message         string
	FinishedAt      time.Time
	Attempt         int32
}

const runColumns = `id, job_id, group_id, executor_address, handler, param, shard_index, shard_total, trigger_type,
	scheduled_at, triggered_at, trigger_message, status, message, finished_at, attempt`

func scanRun(row interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var scheduled, triggered, finished sql.NullInt64
	err := row.Scan(&r.ID, &r.JobID, &r.GroupID, &r.ExecutorAddress, &r.Handler, &r.Param, &r.ShardIndex, &r.ShardTotal,
		&r.TriggerType, &scheduled, &triggered, &r.TriggerMessage, &r.Status, &r.Message, &finished, &r.Attempt)
	if err != nil {
		return Run{}, err
	}
	r.ScheduledAt, r.TriggeredAt, r.FinishedAt = fromMillis(scheduled), fromMillis(triggered), fromMillis(finished)
	return r, nil
}

func insertRun(ctx context.Context, tx *sql.Tx, r *Run) error {
	res, err := tx.ExecContext(ctx, `INSERT INTO runs (`+strings.TrimPrefix(runColumns, "id, ")+`) VALUES (?`+strings.Repeat(", ?", 14)+`)`,
		r.JobID, r.GroupID, r.ExecutorAddress, r.Handler, r.Param, r.ShardIndex, r.ShardTotal, r.TriggerType,
		millis(r.ScheduledAt), millis(r.TriggeredAt), r.TriggerMessage, r.Status, r.Message, millis(r.FinishedAt), r.Attempt)
	if err != nil {
		return err
	}
	r.ID, err = res.LastInsertId()
	return err
}

// InsertRuns stores new runs and returns them with their IDs.
func (s *Store) InsertRuns(ctx context.Context, runs []Run) ([]Run, error) {
	err := s.write(ctx, func(tx *sql.Tx) error {
		for i := range runs {
			if err := insertRun(ctx, tx, &runs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: insert runs: %w", err)
	}
	return runs, nil
}

// Run returns the run with the given ID.
func (s *Store) Run(ctx context.Context, id int64) (Run, error) {
	r, err := scanRun(s.r.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("%w: run %d", ErrNotFound, id)
	}
	if err != nil {
		return Run{}, fmt.Errorf("store: run %d: %w", id, err)
	}
	return r, nil
}

// RunFilter selects runs for Runs. Zero fields select everything.
type RunFilter struct {
	JobID   int64
	GroupID int64
	Status  carillonv1.RunStatus
	// From and To bound the scheduled instant: From <= scheduled_at < To.
	From, To time.Time
	// BeforeID pages: only runs with a smaller ID.
	BeforeID int64
	Limit    int
}

// Runs returns the runs f selects, newest (largest ID) first.
func (s *Store) Runs(ctx context.Context, f RunFilter) ([]Run, error) {
	var where []string
	var args []any
	add := func(cond string, arg any) { where, args = append(where, cond), append(args, arg) }
	if f.BeforeID > 0 {
		add("id < ?", f.BeforeID)
	}
	if f.JobID != 0 {
		add("job_id = ?", f.JobID)
	}
	if f.GroupID != 0 {
		add("group_id = ?", f.GroupID)
	}
	if f.Status != carillonv1.RunStatus_RUN_STATUS_UNSPECIFIED {
		add("status = ?", f.Status)
	}
	if !f.From.IsZero() {
		add("scheduled_at >= ?", f.From.UnixMilli())
	}
	if !f.To.IsZero() {
		add("scheduled_at < ?", f.To.UnixMilli())
	}
	q := `SELECT ` + runColumns + ` FROM runs`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	args = append(args, cmpLimit(f.Limit))
	return s.queryRuns(ctx, q+` ORDER BY id DESC LIMIT ?`, args...)
}

func (s *Store) queryRuns(ctx context.Context, q string, args ...any) ([]Run, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: runs: %w", err)
	}
	defer rows.Close()
	var rs []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("store: runs: %w", err)
		}
		rs = append(rs, r)
	}
	return rs, rows.Err()
}

// RunsWithStatus returns every run with the given status, oldest scheduled
// instant first.
func (s *Store) RunsWithStatus(ctx context.Context, status carillonv1.RunStatus) ([]Run, error) {
	return s.queryRuns(ctx, `SELECT `+runColumns+` FROM runs WHERE status = ? ORDER BY scheduled_at, id`, status)
}

// ClaimRun moves a pending run to RUNNING, stamped triggered at now, and
// returns it. ok is false when the run is no longer pending (its job was
// stopped, changed or deleted after the run was read ahead), in which case
// it must not be dispatched.
func (s *Store) ClaimRun(ctx context.Context, id int64, trigger carillonv1.TriggerType, now time.Time) (r Run, ok bool, err error) {
	err = s.write(ctx, func(tx *sql.Tx) error {
		r, err = scanRun(tx.QueryRowContext(ctx,
			`UPDATE runs SET status = ?, trigger_type = ?, triggered_at = ? WHERE id = ? AND status = ? RETURNING `+runColumns,
			carillonv1.RunStatus_RUN_STATUS_RUNNING, trigger, now.UnixMilli(), id, carillonv1.RunStatus_RUN_STATUS_PENDING))
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, false, nil
	}
	if err != nil {
		return Run{}, false, fmt.Errorf("store: claim run %d: %w", id, err)
	}
	return r, true, nil
}

// Dispatch is how a running run was routed: its executor and shard, and,
// for a run that could not be dispatched, its failure.
type Dispatch struct {
	RunID           int64
	ExecutorAddress string
	ShardIndex      int32
	ShardTotal      int32
	TriggerMessage  string
	// Failed settles the run as FAILED with Message at FinishedAt.
	Failed     bool
	Message    string
	FinishedAt time.Time
}

// RecordDispatches stores how runs were dispatched. A result that arrived
// before its dispatch was recorded is kept.
func (s *Store) RecordDispatches(ctx context.Context, ds []Dispatch) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		for _, d := range ds {
			_, err := tx.ExecContext(ctx, `UPDATE runs SET executor_address = ?, shard_index = ?, shard_total = ?, trigger_message = ? WHERE id = ?`,
				d.ExecutorAddress, d.ShardIndex, d.ShardTotal, d.TriggerMessage, d.RunID)
			if err != nil {
				return err
			}
			if d.Failed {
				if _, err := settle(ctx, tx, Result{RunID: d.RunID, Status: carillonv1.RunStatus_RUN_STATUS_FAILED, Message: d.Message, FinishedAt: d.FinishedAt}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: record dispatch: %w", err)
	}
	return nil
}

// Result is the outcome of a run.
type Result struct {
	RunID      int64
	Status     carillonv1.RunStatus
	Message    string
	FinishedAt time.Time
}

// SettleRuns records results of running runs and returns the runs they
// settled. A result for a run that is not running (already settled, or
// unknown) is ignored, so repeating a result is harmless. When the last
// running shard of a FIX_DELAY job's fire settles, the job's next fire is
// set to its finish time plus the interval.
func (s *Store) SettleRuns(ctx context.Context, results []Result) ([]Run, error) {
	var settled []Run
	err := s.write(ctx, func(tx *sql.Tx) error {
		settled = settled[:0]
		for _, res := range results {
			r, err := settle(ctx, tx, res)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			settled = append(settled, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: settle runs: %w", err)
	}
	return settled, nil
}

// settle moves one running run to a final status; sql.ErrNoRows means it
// was not running.
func settle(ctx context.Context, tx *sql.Tx, res Result) (Run, error) {
	r, err := scanRun(tx.QueryRowContext(ctx,
		`UPDATE runs SET status = ?, message = ?, finished_at = ? WHERE id = ? AND status = ? RETURNING `+runColumns,
		res.Status, res.Message, millis(res.FinishedAt), res.RunID, carillonv1.RunStatus_RUN_STATUS_RUNNING))
	if err != nil {
		return Run{}, err
	}
	if r.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE && r.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_MISFIRE {
		return r, nil
	}
	// FIX_DELAY: schedule the next fire once every shard of this fire is done.
	_, err = tx.ExecContext(ctx, `UPDATE jobs SET next_fire_at = ? + interval_seconds * 1000
		WHERE id = ? AND enabled = 1 AND schedule_type = ? AND next_fire_at IS NULL
		AND NOT EXISTS (SELECT 1 FROM runs WHERE job_id = ? AND scheduled_at = ? AND status IN (?, ?))`,
		r.FinishedAt.UnixMilli(), r.JobID, carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY, r.JobID, r.ScheduledAt.UnixMilli(),
		carillonv1.RunStatus_RUN_STATUS_RUNNING, carillonv1.RunStatus_RUN_STATUS_PENDING)
	return r, err
}

// CountRunsByStatus returns how many runs have each status.
func (s *Store) CountRunsByStatus(ctx context.Context) (map[carillonv1.RunStatus]int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT status, count(*) FROM runs GROUP BY status`)
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
