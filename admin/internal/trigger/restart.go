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

// restarted is told of each executor registration (Trigger.Registered):
// the instance (process) that registered at address, and the one that
// registered there before. When they differ, the executor restarted on
// the same address: the runs its previous process held there will never
// report, and the monitor's next sweep settles LOST each run sent there
// before that the new process does not hold, or says was cut short.
func (rs *Rescuer) restarted(address, instance, previous string) {
	if previous == "" || instance == "" || previous == instance {
		return
	}
	now := rs.cfg.Clock.Now()
	rs.restartsMu.Lock()
	rs.restarts[address] = now
	rs.restartsMu.Unlock()
	rs.cfg.Logger.Info("executor restarted: runs its previous process held will be settled LOST",
		"executor", address, "previous_instance", previous, "instance", instance)
}

// restartedRuns returns the LOST results of runs sent to executors before
// their process restarted, that the new process does not hold, or says
// were cut short (HELD_RUN_STATE_CUT_SHORT: accepted by the process that
// was killed, and not ended). Runs sent ahead of an instant after the
// restart, which the new process does not hold, never started: they are
// sent again there (resendAhead).
func (rs *Rescuer) restartedRuns(ctx context.Context, now time.Time) ([]store.Result, error) {
	rs.restartsMu.Lock()
	restarts := make(map[string]time.Time, len(rs.restarts))
	for addr, at := range rs.restarts {
		restarts[addr] = at
	}
	rs.restartsMu.Unlock()
	var results []store.Result
	for addr, at := range restarts {
		runs, err := rs.cfg.Store.Runs.At(ctx, addr, at)
		if err != nil {
			return nil, err
		}
		ahead, err := rs.cfg.Store.Runs.DueAt(ctx, addr, at)
		if err != nil {
			return nil, err
		}
		if len(ahead) > 0 {
			results = append(results, rs.resendAhead(ctx, addr, at, ahead, now)...)
		}
		if len(runs) == 0 {
			if now.Sub(at) > restartSettle {
				rs.restartsMu.Lock()
				if rs.restarts[addr].Equal(at) {
					delete(rs.restarts, addr)
				}
				rs.restartsMu.Unlock()
			}
			continue
		}
		a := rs.gateway.heldAt(ctx, addr, runs)
		if a.err != nil && a.err != errCannotAnswer {
			rs.cfg.Logger.Warn("trigger: ask a restarted executor which runs it holds; asking again at the next sweep",
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
func (rs *Rescuer) resendAhead(ctx context.Context, addr string, at time.Time, runs []store.Run, now time.Time) []store.Result {
	a := rs.gateway.heldAt(ctx, addr, runs)
	if a.err != nil {
		return nil // it cannot say, or did not answer: asked again at the next sweep, or judged as any run
	}
	var jobIDs []int64
	for _, r := range runs {
		jobIDs = append(jobIDs, r.JobID)
	}
	jobs, err := rs.cfg.Store.Jobs.Definitions(ctx, jobIDs)
	if err != nil {
		rs.cfg.Logger.Warn("trigger: read the jobs of runs a restarted executor dropped before their instant; asking again at the next sweep", "err", err)
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
		f := fireOf(&r, r.TriggeredAt, 0)
		req := f.request(job, rs.cfg.Store.DatabaseID(), rs.cfg.Store.AdminID())
		if r.TriggeredAt.After(now) {
			req.DueAt = timestamppb.New(r.TriggeredAt)
		}
		cctx, cancel := context.WithTimeout(ctx, rs.cfg.DispatchTimeout)
		_, err := rs.gateway.client(cctx, r.GroupID, addr).Run(cctx, req)
		cancel()
		if err != nil && !isDuplicate(err) {
			lost = append(lost, store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_LOST, FinishedAt: now, ByAdmin: true,
				Message: fmt.Sprintf("lost: executor %s restarted (its new process registered at %s) before this run's instant, "+
					"dropping it, and refused it when sent again: %s", addr, at.UTC().Format(time.RFC3339Nano), describe(err))})
			continue
		}
		rs.cfg.Logger.Info("trigger: a restarted executor dropped a run sent ahead of its instant; sent again", "run", r.ID, "executor", addr)
	}
	return lost
}
