package trigger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Sending ahead (Config.SendAhead): the calls of a scheduled fire to
// executors that take RunRequest.due_at leave SendAhead before the
// instant, and the executors start each run on it by their own clock. The
// rules of a fire sent on its instant hold:
//   - its dispatch is held (deferredRecords) as any other, and recorded
//     with its result, triggered_at staying the instant;
//   - a job stopped or deleted before the instant has its runs cancelled
//     on their executors (KillRequest.before_start) and settled SKIPPED, as
//     a run not sent yet would be; a run the executor started already (its
//     clock ahead of the admin's, or the stop came too late) goes on;
//   - an admin that dies between the send and the instant leaves the run
//     RUNNING with no executor recorded; the next admin's Reconcile asks
//     the executors, which hold it (waiting counts as ACTIVE), and records
//     it as sent there: it is neither sent again nor lost.

// aheadRun is a run sent ahead of its instant.
type aheadRun struct {
	run     store.Run
	address string
	group   int64
}

// splitAhead splits calls into those to send on the instant and those to
// send ahead of it (their dueAt set by calls).
func splitAhead(calls []*call) (onInstant, ahead []*call) {
	for _, c := range calls {
		if c.dueAt.IsZero() {
			onInstant = append(onInstant, c)
		} else {
			ahead = append(ahead, c)
		}
	}
	return onInstant, ahead
}

// sendAhead makes calls, whose runs carry due_at, and returns the
// dispatch outcomes of the runs that failed, to be recorded, and the runs
// the executors accepted.
func (t *Trigger) sendAhead(ctx context.Context, calls []*call) (failed []store.Dispatch, sent []aheadRun) {
	failed = t.sendHeld(ctx, calls)
	refused := make(map[int64]bool, len(failed))
	for _, d := range failed {
		refused[d.RunID] = true
	}
	for _, c := range calls {
		for _, s := range c.sends {
			if !refused[s.run.ID] {
				sent = append(sent, aheadRun{run: s.run, address: c.address, group: c.group})
			}
		}
	}
	return failed, sent
}

// awaitInstant waits for instant at and, until it comes, cancels the runs
// of sent whose job is stopped or deleted (since the stop sequence seqs
// holds for it), once more on the instant. It returns when the instant has
// come or ctx ends.
func (t *Trigger) awaitInstant(ctx context.Context, at time.Time, sent []aheadRun, seqs map[int64]uint64) error {
	if len(sent) == 0 {
		sleep(ctx, t.clock, at.Sub(t.clock.Now()))
		return nil
	}
	var errs []error
	for {
		stopped := t.cfg.Store.Stopped() // before the check: a stop after it wakes the wait
		var cancel []aheadRun
		sent, cancel = t.stoppedAhead(sent, seqs)
		if len(cancel) > 0 {
			errs = append(errs, t.cancelAhead(ctx, cancel))
		}
		if sleepOr(ctx, t.clock, at.Sub(t.clock.Now()), stopped) || ctx.Err() != nil {
			break
		}
	}
	if _, cancel := t.stoppedAhead(sent, seqs); len(cancel) > 0 && ctx.Err() == nil {
		errs = append(errs, t.cancelAhead(ctx, cancel)) // most likely started already
	}
	return errors.Join(errs...)
}

// stoppedAhead splits sent into the runs whose job was not stopped since
// seqs and those whose job was.
func (t *Trigger) stoppedAhead(sent []aheadRun, seqs map[int64]uint64) (kept, stopped []aheadRun) {
	kept = sent[:0:0]
	for _, a := range sent {
		if t.cfg.Store.StoppedSince(a.run.JobID, seqs[a.run.JobID]) {
			stopped = append(stopped, a)
		} else {
			kept = append(kept, a)
		}
	}
	return kept, stopped
}

// cancelReason is the message of a run sent ahead and cancelled.
const cancelReason = "the job was stopped or deleted before this fire's instant; cancelled on its executor before it started"

// cancelAhead asks the executors of runs sent ahead to drop them if they
// have not started (KillRequest.before_start), and settles SKIPPED those
// they dropped. A run already started, or whose executor does not answer,
// is left to its result, as any run sent.
func (t *Trigger) cancelAhead(ctx context.Context, runs []aheadRun) error {
	var mu sync.Mutex
	var results []store.Result
	var wg sync.WaitGroup
	for _, a := range runs {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(forGroup(ctx, a.group), t.cfg.DispatchTimeout)
			defer cancel()
			res, err := t.executors.client(cctx, a.address).Kill(cctx, &carillonv1.KillRequest{
				JobId: a.run.JobID, RunId: a.run.ID, DatabaseId: t.cfg.Store.DatabaseID(), BeforeStart: true, Reason: cancelReason,
			})
			switch {
			case err != nil:
				t.cfg.Logger.Warn("trigger: cancel a run sent ahead of its instant, whose job was stopped; it may run",
					"run", a.run.ID, "job", a.run.JobID, "executor", a.address, "err", describe(err))
			case !res.Cancelled:
				t.cfg.Logger.Info("trigger: a run sent ahead had started when its job was stopped; it goes on",
					"run", a.run.ID, "job", a.run.JobID, "executor", a.address)
			default:
				mu.Lock()
				results = append(results, store.Result{RunID: a.run.ID, Status: carillonv1.RunStatus_RUN_STATUS_SKIPPED,
					Message: cancelReason, FinishedAt: t.clock.Now()})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(results) == 0 {
		return nil
	}
	if err := t.Settle(ctx, results); err != nil {
		return fmt.Errorf("settle runs cancelled before their instant: %w", err)
	}
	return nil
}
