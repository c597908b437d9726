package store

import (
	"context"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Exported for tests.
const (
	SQLRunning = sqlRunning
	SQLPending = sqlPending
)

// ClaimRun claims one pending run with ClaimRuns; ok is false when it is
// no longer pending.
func (s *Store) ClaimRun(ctx context.Context, id int64, trigger carillonv1.TriggerType, now time.Time) (r Run, ok bool, err error) {
	runs, err := s.ClaimRuns(ctx, []RunClaim{{RunID: id, TriggerType: trigger}}, now)
	if err != nil || len(runs) == 0 {
		return Run{}, false, err
	}
	return runs[0], true, nil
}

// JobsChanged marks the job cache stale, as a job write does.
func (s *Store) JobsChanged() { s.jobs.changed() }

// JobReads is how many jobs the job cache has read from the database.
func (s *Store) JobReads() int64 { return s.jobs.reads.Load() }
