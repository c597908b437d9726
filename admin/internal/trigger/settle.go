package trigger

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Settle records results of running runs (see store.SettleRuns), with
// their dispatches when those were not recorded yet, and hands the retries
// and child runs it creates to the scheduler. Results that arrive together
// are settled in one transaction.
func (t *Trigger) Settle(ctx context.Context, results []store.Result) error {
	results = t.killed(results)
	results, taken := t.deferred.attach(results)
	select {
	case err := <-t.resultWrites.add(results):
		if err != nil && len(taken) > 0 {
			t.deferred.hold(whole(taken), time.Time{}) // the executor will report again
		}
		return err
	case <-ctx.Done():
		return ctx.Err() // the results may still be settled; repeating them is harmless
	}
}

// settleNow settles results in one transaction.
func (t *Trigger) settleNow(results []store.Result) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	settled, err := t.cfg.Store.SettleRuns(ctx, t.cfg.FollowUp, results)
	if err != nil {
		return err
	}
	if t.cfg.Metrics != nil {
		started := make(map[int64]time.Time, len(results))
		for _, r := range results {
			if !r.StartedAt.IsZero() {
				started[r.RunID] = r.StartedAt
			}
		}
		for _, r := range settled.Runs {
			due := r.DueAt // a retry's: the end of its delay
			if due.IsZero() {
				due = r.ScheduledAt
			}
			t.cfg.Metrics.Executed(due, started[r.ID], r.FinishedAt)
		}
	}
	t.followUp(settled)
	return nil
}

// followUp logs settled runs and queues their follow-ups.
func (t *Trigger) followUp(s store.Settled) {
	for _, r := range s.Runs {
		t.cfg.Logger.Info("run finished", "run", r.ID, "job", r.JobID, "status", r.Status.String(),
			"attempt", r.Attempt, "executor", r.ExecutorAddress, "message", r.Message)
		t.cfg.Metrics.Finished(r.Status)
	}
	retries := 0
	for _, r := range s.FollowUps {
		if r.TriggerType == carillonv1.TriggerType_TRIGGER_TYPE_RETRY {
			retries++
		}
	}
	t.cfg.Metrics.Retries(retries)
	if len(s.FollowUps) > 0 {
		t.cfg.Queue.Enqueue(s.FollowUps...)
	}
	if s.Rescheduled {
		t.cfg.Queue.Wake()
	}
}

// killed returns results with those of runs being killed (Kill) taken as
// KILLED, and forgets the runs it settles KILLED.
func (t *Trigger) killed(results []store.Result) []store.Result {
	for i, r := range results {
		if _, ok := t.killing.Load(r.RunID); !ok {
			continue
		}
		if r.Status != carillonv1.RunStatus_RUN_STATUS_KILLED {
			r.Message = fmt.Sprintf("killed; the executor then reported %s: %s", strings.TrimPrefix(r.Status.String(), "RUN_STATUS_"), r.Message)
			r.Status = carillonv1.RunStatus_RUN_STATUS_KILLED
			results[i] = r
		}
		t.killing.Delete(r.RunID)
	}
	return results
}

// HeldAddress returns the executor run was sent to while its dispatch is
// held for its result, not recorded yet; "" when none is held.
func (t *Trigger) HeldAddress(run int64) string { return t.deferred.address(run) }
