package trigger

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// restartSettle is how long after an executor's new process registered
// the monitor keeps looking for runs of the previous process at its
// address: long enough for the dispatches sent just before the restart to
// be recorded (recordDelay).
const restartSettle = 5 * recordDelay

// Registered is told of each executor registration: the instance (process)
// that registered at address, and the one that registered there before.
// An executor that refused a connection may be picked again from then on
// (reroute.go). When they differ, the executor restarted on the same address: the runs
// its previous process held there will never report, and the monitor's
// next sweep settles LOST each run sent there before that the new process
// does not hold, or says was cut short.
func (t *Trigger) Registered(address, instance, previous string) {
	t.refused.beat(address) // it is back: it may be picked again
	if previous == "" || instance == "" || previous == instance {
		return
	}
	now := t.clock.Now()
	t.restartsMu.Lock()
	t.restarts[address] = now
	t.restartsMu.Unlock()
	t.cfg.Logger.Info("executor restarted: runs its previous process held will be settled LOST",
		"executor", address, "previous_instance", previous, "instance", instance)
}

// restartedRuns returns the LOST results of runs sent to executors before
// their process restarted, that the new process does not hold, or says
// were cut short (HELD_RUN_STATE_CUT_SHORT: accepted by the process that
// was killed, and not ended). Runs sent ahead of an instant after the
// restart, which the new process does not hold, never started: they are
// sent again there (resendAhead).
func (t *Trigger) restartedRuns(ctx context.Context, now time.Time) ([]store.Result, error) {
	t.restartsMu.Lock()
	restarts := make(map[string]time.Time, len(t.restarts))
	for addr, at := range t.restarts {
		restarts[addr] = at
	}
	t.restartsMu.Unlock()
	var results []store.Result
	for addr, at := range restarts {
		runs, err := t.cfg.Store.RunsAt(ctx, addr, at)
		if err != nil {
			return nil, err
		}
		ahead, err := t.cfg.Store.RunsDueAt(ctx, addr, at)
		if err != nil {
			return nil, err
		}
		if len(ahead) > 0 {
			results = append(results, t.resendAhead(ctx, addr, at, ahead, now)...)
		}
		if len(runs) == 0 {
			if now.Sub(at) > restartSettle {
				t.restartsMu.Lock()
				if t.restarts[addr].Equal(at) {
					delete(t.restarts, addr)
				}
				t.restartsMu.Unlock()
			}
			continue
		}
		a := t.heldAt(ctx, addr, runs)
		if a.err != nil && a.err != errCannotAnswer {
			t.cfg.Logger.Warn("trigger: ask a restarted executor which runs it holds; asking again at the next sweep",
				"executor", addr, "err", a.err)
			continue
		}
		for _, r := range runs {
			state, ok := a.held[r.ID]
			if state == carillonv1.HeldRunState_HELD_RUN_STATE_CUT_SHORT {
				results = append(results, cutShortResult(r.ID, addr, now))
				continue
			}
			if ok {
				continue
			}
			results = append(results, store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_LOST, FinishedAt: now, ByAdmin: true,
				Message: fmt.Sprintf("%s: executor %s's new process (registered at %s) does not hold it", cutShortMessage,
					addr, at.UTC().Format(time.RFC3339Nano))})
		}
	}
	return results, nil
}

// resendAhead sends again to the executor at addr, whose new process
// registered at at, the runs of runs, sent there ahead of an instant after
// at, that the new process does not hold: they were waiting for their
// instant in the earlier process, and never started. It returns the LOST
// results of those it could not send again.
func (t *Trigger) resendAhead(ctx context.Context, addr string, at time.Time, runs []store.Run, now time.Time) []store.Result {
	a := t.heldAt(ctx, addr, runs)
	if a.err != nil {
		return nil // it cannot say, or did not answer: asked again at the next sweep, or judged as any run
	}
	var jobIDs []int64
	for _, r := range runs {
		jobIDs = append(jobIDs, r.JobID)
	}
	jobs, err := t.cfg.Store.JobDefinitions(ctx, jobIDs)
	if err != nil {
		t.cfg.Logger.Warn("trigger: read the jobs of runs a restarted executor dropped before their instant; asking again at the next sweep", "err", err)
		return nil
	}
	var lost []store.Result
	for _, r := range runs {
		if _, ok := a.held[r.ID]; ok {
			continue
		}
		job, ok := jobs[r.JobID]
		if !ok {
			continue // deleted: settled by its deletion
		}
		req := runRequest(job, sentRun{ID: r.ID, JobID: r.JobID, ShardIndex: r.ShardIndex, ShardTotal: r.ShardTotal,
			ScheduledAt: r.ScheduledAt, Handler: r.Handler, Param: r.Param}, t.cfg.Store.DatabaseID())
		if r.TriggeredAt.After(now) {
			req.DueAt = timestamppb.New(r.TriggeredAt)
		}
		cctx, cancel := context.WithTimeout(forGroup(ctx, r.GroupID), t.cfg.DispatchTimeout)
		_, err := t.executors.client(cctx, addr).Run(cctx, req)
		cancel()
		if err != nil && !isDuplicate(err) {
			lost = append(lost, store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_LOST, FinishedAt: now, ByAdmin: true,
				Message: fmt.Sprintf("lost: executor %s restarted (its new process registered at %s) before this run's instant, "+
					"dropping it, and refused it when sent again: %s", addr, at.UTC().Format(time.RFC3339Nano), describe(err))})
			continue
		}
		t.cfg.Logger.Info("trigger: a restarted executor dropped a run sent ahead of its instant; sent again", "run", r.ID, "executor", addr)
	}
	return lost
}
