package trigger

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
//   - a job updated before the instant has its runs dropped on their
//     executors (KillRequest.before_start and replace: no result) and sent
//     again on the instant, to the same executors with the same run IDs,
//     built from the job's new definition; a run started already goes on
//     with the definition it was sent with;
//   - an admin that dies between the send and the instant leaves the run
//     RUNNING with no executor recorded; the next admin's Reconcile asks
//     the executors, which hold it (waiting counts as ACTIVE), and records
//     it as sent there: it is neither sent again nor lost.

// aheadRun is a run sent ahead of its instant.
type aheadRun struct {
	run     sentRun
	address string
	group   int64
}

// sentRun is what a run sent ahead keeps until its instant, to cancel it,
// drop it or send it again: the request's part of it.
type sentRun struct {
	ID, JobID              int64
	ShardIndex, ShardTotal int32
	ScheduledAt            time.Time
	Handler, Param         string
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
	failed, rerouted := t.sendHeld(ctx, calls)
	refused := make(map[int64]bool, len(failed))
	for _, d := range failed {
		refused[d.RunID] = true
	}
	calls = append(calls, rerouted...) // a re-routed run's last call, the one that holds it, comes last
	sent = make([]aheadRun, 0, len(calls)*batchMax/2)
	var at map[int64]int // the index in sent of each re-routed run
	if len(rerouted) > 0 {
		at = map[int64]int{}
	}
	for _, c := range calls {
		for _, s := range c.sends {
			if refused[s.run.ID] {
				continue
			}
			a := aheadRun{run: s.run.sentRun, address: c.address, group: c.group}
			if i, ok := at[s.run.ID]; ok {
				sent[i] = a
				continue
			}
			if at != nil {
				at[s.run.ID] = len(sent)
			}
			sent = append(sent, a)
		}
		// Made: the requests and routes are garbage while the runs wait
		// for their instant (a burst of 100,000 holds them seconds).
		c.reqs, c.sends, c.ds = nil, nil, nil
	}
	return failed, sent
}

// awaitInstant waits for instant at and, until it comes, cancels the runs
// of sent whose job is stopped or deleted (since the stop sequence seqs
// holds for it), once more on the instant. The runs whose job is updated
// meanwhile are dropped by their executors (a before_start kill with
// replace) and returned as replaced, to be sent again on the instant with
// the job's new definition (resend). It returns when the instant has come
// or ctx ends.
func (t *Trigger) awaitInstant(ctx context.Context, at time.Time, sent []aheadRun, seqs map[int64]uint64) (replaced []aheadRun, err error) {
	if len(sent) == 0 {
		sleep(ctx, t.clock, at.Sub(t.clock.Now()))
		return nil, nil
	}
	var errs []error
	check := func() {
		var cancel, update []aheadRun
		sent, cancel, update = t.stoppedAhead(sent, seqs)
		if len(cancel) > 0 {
			errs = append(errs, t.cancelAhead(ctx, cancel))
		}
		if len(update) > 0 {
			replaced = append(replaced, t.replaceAhead(ctx, update)...)
		}
	}
	for {
		stopped := t.cfg.Store.Stopped() // before the check: a stop or update after it wakes the wait
		check()
		if sleepOr(ctx, t.clock, at.Sub(t.clock.Now()), stopped) || ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() == nil {
		check() // most likely started already
	}
	return replaced, errors.Join(errs...)
}

// stoppedAhead splits sent into the runs whose job was neither stopped nor
// updated since seqs, those whose job was stopped, and those whose job
// was updated.
func (t *Trigger) stoppedAhead(sent []aheadRun, seqs map[int64]uint64) (kept, stopped, updated []aheadRun) {
	changed := func(a aheadRun) bool {
		return t.cfg.Store.StoppedSince(a.run.JobID, seqs[a.run.JobID]) || t.cfg.Store.UpdatedSince(a.run.JobID, seqs[a.run.JobID])
	}
	if !slices.ContainsFunc(sent, changed) {
		return sent, nil, nil // most often: no copy of a burst's runs
	}
	kept = sent[:0:0]
	for _, a := range sent {
		switch {
		case t.cfg.Store.StoppedSince(a.run.JobID, seqs[a.run.JobID]):
			stopped = append(stopped, a)
		case t.cfg.Store.UpdatedSince(a.run.JobID, seqs[a.run.JobID]):
			updated = append(updated, a)
		default:
			kept = append(kept, a)
		}
	}
	return kept, stopped, updated
}

// replaceReason is the message of a run sent ahead and dropped to be sent
// again.
const replaceReason = "the job was updated before this fire's instant; dropped on its executor before it started, to be sent again on the instant with the job's new definition"

// replaceAhead asks the executors of runs sent ahead, whose job was
// updated since, to drop them silently if they have not started
// (KillRequest.before_start and replace), and returns those they dropped,
// to be sent again on the instant (resend). A run already started, or
// whose executor does not answer, goes on with the definition it was sent
// with, as any run sent.
func (t *Trigger) replaceAhead(ctx context.Context, runs []aheadRun) []aheadRun {
	return t.dropAhead(ctx, runs, true, replaceReason,
		"trigger: replace a run sent ahead of its instant, whose job was updated; it may run with the job's former definition",
		"trigger: a run sent ahead had started when its job was updated; it goes on with the job's former definition")
}

// dropAhead asks the executors of runs sent ahead, all at once, to drop
// each if it has not started (KillRequest.before_start, with replace as
// given, and reason), and returns those they dropped. A run whose
// executor does not answer is logged with unanswered, one that started
// with started.
func (t *Trigger) dropAhead(ctx context.Context, runs []aheadRun, replace bool, reason, unanswered, started string) []aheadRun {
	var mu sync.Mutex
	var dropped []aheadRun
	var wg sync.WaitGroup
	for _, a := range runs {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(forGroup(ctx, a.group), t.cfg.DispatchTimeout)
			defer cancel()
			res, err := t.executors.client(cctx, a.address).Kill(cctx, &carillonv1.KillRequest{
				JobId: a.run.JobID, RunId: a.run.ID, DatabaseId: t.cfg.Store.DatabaseID(), BeforeStart: true, Replace: replace, Reason: reason,
			})
			switch {
			case err != nil:
				t.cfg.Logger.Warn(unanswered, "run", a.run.ID, "job", a.run.JobID, "executor", a.address, "err", describe(err))
			case !res.Cancelled:
				t.cfg.Logger.Info(started, "run", a.run.ID, "job", a.run.JobID, "executor", a.address)
			default:
				mu.Lock()
				dropped = append(dropped, a)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return dropped
}

// resend sends again, on the instant and to the same executors, the runs
// sent ahead and dropped because their job was updated (replaceAhead),
// each with a request built from its job's definition now. A run whose
// job was stopped or deleted since is handed to skip instead. It returns
// the dispatch outcomes of the runs that failed, to be recorded; the
// others' dispatches stay held, as when they were sent ahead.
func (t *Trigger) resend(ctx context.Context, runs []aheadRun, seqs map[int64]uint64, skip func(run int64)) []store.Dispatch {
	if len(runs) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(runs))
	for _, a := range runs {
		ids = append(ids, a.run.JobID)
	}
	jobs, err := t.cfg.Store.JobDefinitions(ctx, ids)
	var mu sync.Mutex
	var failed []store.Dispatch
	fail := func(a aheadRun, why string) {
		d, ok := t.deferred.release(a.run.ID)
		if !ok {
			d = store.Dispatch{RunID: a.run.ID, ExecutorAddress: a.address, ShardIndex: a.run.ShardIndex, ShardTotal: a.run.ShardTotal}
		}
		d.Failed, d.FinishedAt = true, t.clock.Now()
		d.Message = why
		d.TriggerMessage += "; sent again on the instant after its job was updated; failed"
		mu.Lock()
		failed = append(failed, d)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, a := range runs {
		job, ok := jobs[a.run.JobID]
		switch {
		case err != nil:
			fail(a, fmt.Sprintf("dropped on its executor when its job was updated, then not sent again: read the job: %v", err))
			continue
		case !ok || t.cfg.Store.StoppedSince(a.run.JobID, seqs[a.run.JobID]):
			skip(a.run.ID)
			continue
		}
		wg.Go(func() {
			run := a.run
			run.Handler, run.Param = job.Handler, job.Param // a scheduled run carries its job's
			req := runRequest(job, run, t.cfg.Store.DatabaseID())
			cctx, cancel := context.WithTimeout(forGroup(ctx, a.group), t.cfg.DispatchTimeout)
			defer cancel()
			if run.Handler != a.run.Handler || run.Param != a.run.Param {
				if err := t.cfg.Store.RedefineRun(cctx, run.ID, run.Handler, run.Param); err != nil {
					t.cfg.Logger.Warn("trigger: store the new handler and param of a run sent again; its record keeps the former ones",
						"run", run.ID, "job", run.JobID, "err", err)
				}
			}
			if _, err := t.executors.client(cctx, a.address).Run(cctx, req); err != nil {
				fail(a, fmt.Sprintf("executor %s refused or did not answer: %s", a.address, describe(err)))
				return
			}
			t.deferred.note(a.run.ID, "; its job was updated before the instant: dropped on the executor and sent again on the instant with the new definition")
			t.cfg.Logger.Info("trigger: run sent again on its instant with its job's new definition", "run", a.run.ID, "job", a.run.JobID, "executor", a.address)
		})
	}
	wg.Wait()
	return failed
}

// cancelReason is the message of a run sent ahead and cancelled.
const cancelReason = "the job was stopped or deleted before this fire's instant; cancelled on its executor before it started"

// cancelAhead asks the executors of runs sent ahead to drop them if they
// have not started (KillRequest.before_start), and settles SKIPPED those
// they dropped. A run already started, or whose executor does not answer,
// is left to its result, as any run sent.
func (t *Trigger) cancelAhead(ctx context.Context, runs []aheadRun) error {
	dropped := t.dropAhead(ctx, runs, false, cancelReason,
		"trigger: cancel a run sent ahead of its instant, whose job was stopped; it may run",
		"trigger: a run sent ahead had started when its job was stopped; it goes on")
	results := make([]store.Result, 0, len(dropped))
	for _, a := range dropped {
		results = append(results, store.Result{RunID: a.run.ID, Status: carillonv1.RunStatus_RUN_STATUS_SKIPPED,
			Message: cancelReason, FinishedAt: t.clock.Now()})
	}
	if len(results) == 0 {
		return nil
	}
	if err := t.Settle(ctx, results); err != nil {
		return fmt.Errorf("settle runs cancelled before their instant: %w", err)
	}
	return nil
}
