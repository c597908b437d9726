package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// DueJobs returns enabled jobs whose next fire is at or before before,
// earliest first, at most limit of them.
func (s *Store) DueJobs(ctx context.Context, before time.Time, limit int) ([]Job, error) {
	rows, err := s.r.QueryContext(ctx,
		`SELECT `+jobColumns+` FROM jobs WHERE enabled = 1 AND next_fire_at IS NOT NULL AND next_fire_at <= ?
		 ORDER BY next_fire_at LIMIT ?`, before.UnixMilli(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: due jobs: %w", err)
	}
	defer rows.Close()
	var js []Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("store: due jobs: %w", err)
		}
		js = append(js, j)
	}
	return js, rows.Err()
}

// Claim advances one job's schedule by one fire.
type Claim struct {
	JobID int64
	// Due is the job's next fire as read; the claim applies only if it is
	// still the job's next fire (nobody changed the job since).
	Due time.Time
	// Next becomes the job's next fire; zero when nothing is scheduled.
	Next time.Time
	// Run, if not nil, is stored in the same transaction as the advance:
	// the fire of the scheduled instant Run.ScheduledAt.
	Run *Run
}

// ClaimFires applies claims in one transaction and returns the runs it
// stored. Advancing a job and storing its run together, with a unique key
// on (job, scheduled instant, shard, attempt), is what makes each scheduled
// instant fire exactly once across crashes: a claim either happened with
// its run or not at all.
func (s *Store) ClaimFires(ctx context.Context, claims []Claim) ([]Run, error) {
	var runs []Run
	err := s.write(ctx, func(tx *sql.Tx) error {
		runs = runs[:0]
		for _, c := range claims {
			res, err := tx.ExecContext(ctx,
				`UPDATE jobs SET next_fire_at = ?, last_fire_at = coalesce(?, last_fire_at) WHERE id = ? AND enabled = 1 AND next_fire_at = ?`,
				millis(c.Next), runInstant(c.Run), c.JobID, c.Due.UnixMilli())
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 || c.Run == nil {
				if err != nil {
					return err
				}
				continue
			}
			r := *c.Run
			if err := insertRun(ctx, tx, &r); err != nil {
				return err
			}
			runs = append(runs, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim fires: %w", err)
	}
	return runs, nil
}

func runInstant(r *Run) sql.NullInt64 {
	if r == nil {
		return sql.NullInt64{}
	}
	return millis(r.ScheduledAt)
}

// SkipRun settles a pending run as SKIPPED (a misfire under DO_NOTHING).
func (s *Store) SkipRun(ctx context.Context, id int64, message string, now time.Time) error {
	_, err := s.w.ExecContext(ctx, `UPDATE runs SET status = ?, message = ?, finished_at = ? WHERE id = ? AND status = ?`,
		carillonv1.RunStatus_RUN_STATUS_SKIPPED, message, now.UnixMilli(), id, carillonv1.RunStatus_RUN_STATUS_PENDING)
	if err != nil {
		return fmt.Errorf("store: skip run %d: %w", id, err)
	}
	return nil
}
