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

// sendBatch reads the jobs of a batch of claimed fires, then sends the
// fires of each instant on that instant (instant.send), concurrently. It
// is called holding slot (busy 1), and lets it go. burst counts the fires
// of each instant handed over with the batch (SendLead).
func (d *Dispatcher) sendBatch(ctx context.Context, slot *batchSlot, fs []fire, burst map[time.Time]int) error {
	ids := make([]int64, 0, len(fs))
	for i := range fs {
		ids = append(ids, fs[i].jobID)
	}
	jobs, err := d.cfg.Store.Jobs.Definitions(ctx, ids)
	if err != nil {
		slot.idle()
		return errors.Join(err, d.refuse(ctx, fs, fmt.Sprintf("read the jobs: %v", err)))
	}
	byInstant := map[time.Time][]*fire{}
	for i := range fs {
		byInstant[fs[i].at] = append(byInstant[fs[i].at], &fs[i])
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(byInstant))
	for at, group := range byInstant {
		delete(byInstant, at) // the instant's, from now on
		slot.work(ctx)
		in := &instant{d: d, slot: slot, at: at, lead: SendLead(d.cfg.SendAhead, burst[at]), fires: group}
		wg.Go(func() {
			defer slot.idle()
			errs <- in.send(ctx, jobs)
		})
	}
	slot.idle() // the batch's own hold, taken by startBatch: its instants' from now on
	wg.Wait()
	close(errs)
	for e := range errs {
		err = errors.Join(err, e)
	}
	return err
}

// instant is the fires of one dispatch batch due on one instant, on their
// way from the plan to their calls.
//
// Sending ahead (Config.SendAhead): the calls of a scheduled fire to
// executors that take RunRequest.due_at leave SendAhead before the
// instant, and the executors start each run on it by their own clock. The
// rules of a fire sent on its instant hold:
//   - its dispatch record is deferred (deferredRecords) as any other, and
//     stored with its result, triggered_at staying the instant;
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
//     RUNNING with its route recorded; the admin that takes over asks that
//     executor, which holds it (waiting counts as ACTIVE), and records it
//     as sent there: it is neither sent again nor lost.
type instant struct {
	d     *Dispatcher
	slot  *batchSlot
	at    time.Time
	lead  time.Duration // how long before at its fires are sent ahead (SendLead)
	fires []*fire
	// seqs is, by job, the stop sequence before its earliest claim here.
	seqs    map[int64]uint64
	skipped []store.Result // fires whose job was stopped or deleted since their claim
}

// send plans the instant's fires, waits for the instant, and sends them,
// except those whose job was stopped since their claim: those are settled
// SKIPPED. Fires to executors that take due_at are sent ahead of it.
func (in *instant) send(ctx context.Context, jobs map[int64]*store.JobDefinition) error {
	d := in.d
	in.seqs = make(map[int64]uint64, len(in.fires))
	for _, f := range in.fires {
		if s, ok := in.seqs[f.jobID]; !ok || f.stopSeq < s {
			in.seqs[f.jobID] = f.stopSeq
		}
	}
	fires := make([]*fire, 0, len(in.fires))
	for _, f := range in.fires {
		job, ok := jobs[f.jobID]
		if !ok && d.cfg.Store.Jobs.StoppedSince(f.jobID, f.stopSeq) {
			in.skip(f.id) // deleted since the claim
			continue
		}
		f.job = job
		fires = append(fires, f)
	}
	in.fires = nil
	n := len(fires) // for the log: fires is not kept once planned
	p, err := d.router.plan(ctx, fires)
	if err != nil {
		return err
	}
	// The fires sent ahead have their routes recorded now, while they
	// wait: their executors say which runs they hold (HeldRuns) to an
	// admin that takes over. Those sent on the instant, to executors that
	// mostly cannot say, have theirs recorded just before their calls
	// (routeCalls), which leaves the least doubt after a crash.
	if p.fires, err = d.routeAhead(ctx, p.fires, in.at, in.at.Add(-in.lead)); err != nil {
		if errors.Is(err, store.ErrLeaseLost) {
			return d.leaseRanOut(n)
		}
		return err
	}
	// Everything but the calls themselves, before the instant; the calls
	// to executors that take due_at are made ahead of it.
	calls, ahead := splitAhead(d.calls(p.fires, in.at))
	p.fires = nil
	var sent []*fire
	if len(ahead) > 0 {
		in.slot.idle()
		sleep(ctx, d.cfg.Clock, in.at.Add(-in.lead).Sub(d.cfg.Clock.Now()))
		in.slot.work(ctx)
		if !d.cfg.Store.AwaitLease(ctx) {
			return d.leaseRanOut(n)
		}
		var failed []store.Dispatch
		failed, sent = in.sendAhead(ctx, in.dropStopped(ahead))
		p.failed = append(p.failed, failed...)
	}
	// Until the instant, a job stopped cancels its fires sent ahead; on
	// ctx's end, send: the calls fail and are recorded.
	in.slot.idle()
	replaced, cancelled := in.awaitInstant(ctx, sent)
	in.slot.work(ctx)
	if !d.cfg.Store.AwaitLease(ctx) {
		return errors.Join(d.leaseRanOut(n), cancelled)
	}
	calls = in.dropStopped(calls)
	if calls, err = d.routeCalls(ctx, calls); err != nil {
		if errors.Is(err, store.ErrLeaseLost) {
			err = d.leaseRanOut(n)
		}
		return errors.Join(err, cancelled)
	}
	var resent []store.Dispatch
	var wg sync.WaitGroup
	wg.Go(func() { resent = in.resend(ctx, replaced) })
	failed, _ := d.sendScheduled(ctx, calls)
	wg.Wait()
	err = d.completer.record(ctx, append(append(p.failed, failed...), resent...)...)
	if len(in.skipped) > 0 {
		err = errors.Join(err, d.completer.Settle(ctx, in.skipped))
	}
	return errors.Join(err, cancelled)
}

// skip settles run SKIPPED with the instant's others: its job was stopped
// or deleted since its claim.
func (in *instant) skip(run int64) {
	in.skipped = append(in.skipped, store.Result{RunID: run, Status: carillonv1.RunStatus_RUN_STATUS_SKIPPED,
		Message: "the job was stopped or deleted, or its group paused, before this fire's instant; not dispatched", FinishedAt: in.d.cfg.Clock.Now()})
}

// dropStopped returns calls without the fires whose job was stopped or
// deleted since their claim, each skipped.
func (in *instant) dropStopped(calls []*call) []*call {
	for i, c := range calls {
		calls[i] = c.without(func(f *fire) bool {
			if !in.d.cfg.Store.Jobs.StoppedSince(f.job.ID, in.seqs[f.job.ID]) {
				return false
			}
			in.skip(f.id)
			f.endSpan(nil, true)
			return true
		})
	}
	return calls
}

// sendAhead makes calls, whose runs carry due_at, and returns the dispatch
// records of the fires that failed, to be stored, and the fires the
// executors accepted.
func (in *instant) sendAhead(ctx context.Context, calls []*call) (failed []store.Dispatch, sent []*fire) {
	failed, rerouted := in.d.sendScheduled(ctx, calls)
	refused := make(map[int64]bool, len(failed))
	for _, d := range failed {
		refused[d.RunID] = true
	}
	calls = append(calls, rerouted...) // a re-routed fire's last call, the one that holds it, comes last
	sent = make([]*fire, 0, len(calls)*batchMax/2)
	var index map[int64]int // the index in sent of each re-routed fire
	if len(rerouted) > 0 {
		index = map[int64]int{}
	}
	for _, c := range calls {
		for _, f := range c.fires {
			if refused[f.id] {
				continue
			}
			f.waiting()
			if i, ok := index[f.id]; ok {
				sent[i] = f
				continue
			}
			if index != nil {
				index[f.id] = len(sent)
			}
			sent = append(sent, f)
		}
		// Made: the requests and records are garbage while the fires
		// wait for their instant.
		c.reqs, c.fires, c.ds = nil, nil, nil
	}
	return failed, sent
}

// awaitInstant waits for the instant and, until it comes, cancels the
// fires of sent whose job is stopped or deleted, once more on the instant.
// The fires whose job is updated meanwhile are dropped by their executors
// (a before_start kill with replace) and returned as replaced, to be sent
// again on the instant with the job's new definition (resend). It returns
// when the instant has come or ctx ends.
func (in *instant) awaitInstant(ctx context.Context, sent []*fire) (replaced []*fire, err error) {
	clock := in.d.cfg.Clock
	if len(sent) == 0 {
		sleep(ctx, clock, in.at.Sub(clock.Now()))
		return nil, nil
	}
	var errs []error
	check := func() {
		var cancel, update []*fire
		sent, cancel, update = in.changed(sent)
		if len(cancel) > 0 {
			errs = append(errs, in.cancelAhead(ctx, cancel))
		}
		if len(update) > 0 {
			replaced = append(replaced, in.replaceAhead(ctx, update)...)
		}
	}
	for {
		stopped := in.d.cfg.Store.Jobs.Stopped() // before the check: a stop or update after it wakes the wait
		check()
		if sleepOr(ctx, clock, in.at.Sub(clock.Now()), stopped) || ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() == nil {
		check() // most likely started already
	}
	return replaced, errors.Join(errs...)
}

// changed splits sent into the fires whose job was neither stopped nor
// updated since its claim, those whose job was stopped, and those whose
// job was updated.
func (in *instant) changed(sent []*fire) (kept, stopped, updated []*fire) {
	st := in.d.cfg.Store
	isChanged := func(f *fire) bool {
		return st.Jobs.StoppedSince(f.jobID, in.seqs[f.jobID]) || st.Jobs.UpdatedSince(f.jobID, in.seqs[f.jobID])
	}
	if !slices.ContainsFunc(sent, isChanged) {
		return sent, nil, nil // most often: no copy of a burst's fires
	}
	kept = sent[:0:0]
	for _, f := range sent {
		switch {
		case st.Jobs.StoppedSince(f.jobID, in.seqs[f.jobID]):
			stopped = append(stopped, f)
		case st.Jobs.UpdatedSince(f.jobID, in.seqs[f.jobID]):
			updated = append(updated, f)
		default:
			kept = append(kept, f)
		}
	}
	return kept, stopped, updated
}

// replaceReason is the message of a fire sent ahead and dropped to be sent
// again.
const replaceReason = "the job was updated before this fire's instant; dropped on its executor before it started, to be sent again on the instant with the job's new definition"

// replaceAhead asks the executors of fires sent ahead, whose job was
// updated since, to drop them silently if they have not started
// (KillRequest.before_start and replace), and returns those they dropped,
// to be sent again on the instant (resend). A run already started, or
// whose executor does not answer, goes on with the definition it was sent
// with, as any run sent.
func (in *instant) replaceAhead(ctx context.Context, fires []*fire) []*fire {
	return in.dropAhead(ctx, fires, true, replaceReason,
		"trigger: replace a run sent ahead of its instant, whose job was updated; it may run with the job's former definition",
		"trigger: a run sent ahead had started when its job was updated; it goes on with the job's former definition")
}

// dropAhead asks the executors of fires sent ahead, all at once, to drop
// each if it has not started (KillRequest.before_start, with replace as
// given, and reason), and returns those they dropped. A fire whose
// executor does not answer is logged with unanswered, one that started
// with started.
func (in *instant) dropAhead(ctx context.Context, fires []*fire, replace bool, reason, unanswered, started string) []*fire {
	d := in.d
	var mu sync.Mutex
	var dropped []*fire
	var wg sync.WaitGroup
	for _, f := range fires {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, d.cfg.DispatchTimeout)
			defer cancel()
			res, err := d.gateway.client(cctx, f.group, f.address).Kill(cctx, &carillonv1.KillRequest{
				JobId: f.jobID, RunId: f.id, DatabaseId: d.cfg.Store.DatabaseID(), BeforeStart: true, Replace: replace, Reason: reason,
			})
			switch {
			case err != nil:
				d.cfg.Logger.Warn(unanswered, "run", f.id, "job", f.jobID, "executor", f.address, "err", describe(err))
			case !res.Cancelled:
				d.cfg.Logger.Info(started, "run", f.id, "job", f.jobID, "executor", f.address)
			default:
				mu.Lock()
				dropped = append(dropped, f)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return dropped
}

// resend sends again, on the instant and to the same executors, the fires
// sent ahead and dropped because their job was updated (replaceAhead),
// each with a request built from its job's definition now. A fire whose
// job was stopped or deleted since is skipped instead. It returns the
// dispatch records of the fires that failed, to be stored; the others'
// records stay deferred, as when they were sent ahead.
func (in *instant) resend(ctx context.Context, fires []*fire) []store.Dispatch {
	if len(fires) == 0 {
		return nil
	}
	d := in.d
	ids := make([]int64, 0, len(fires))
	for _, f := range fires {
		ids = append(ids, f.jobID)
	}
	jobs, err := d.cfg.Store.Jobs.Definitions(ctx, ids)
	var mu sync.Mutex
	var failed []store.Dispatch
	fail := func(f *fire, why string) {
		rec, ok := d.completer.deferred.release(f.id)
		if !ok {
			rec = store.Dispatch{RunID: f.id, ExecutorAddress: f.address, ShardIndex: f.shardIndex, ShardTotal: f.shardTotal}
		}
		rec.Failed, rec.FinishedAt = true, d.cfg.Clock.Now()
		rec.Message = why
		rec.TriggerMessage += "; sent again on the instant after its job was updated; failed"
		mu.Lock()
		failed = append(failed, rec)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, f := range fires {
		job, ok := jobs[f.jobID]
		switch {
		case err != nil:
			fail(f, fmt.Sprintf("dropped on its executor when its job was updated, then not sent again: read the job: %v", err))
			continue
		case !ok || d.cfg.Store.Jobs.StoppedSince(f.jobID, in.seqs[f.jobID]):
			in.skip(f.id)
			continue
		}
		again := *f
		again.param, again.rendered = job.Param, false // a scheduled run carries its job's handler and param
		var rendered *string
		if job.ParamTemplate {
			param, err := d.router.renderParam(job, &again, job.Param)
			if err != nil {
				fail(f, "dropped on its executor when its job was updated, then not sent again: "+err.Error())
				continue
			}
			again.param, again.rendered, rendered = param, true, &param
		}
		wg.Go(func() {
			req := again.request(job, d.cfg.Store.DatabaseID(), d.cfg.Store.AdminID())
			cctx, cancel := context.WithTimeout(ctx, d.cfg.DispatchTimeout)
			defer cancel()
			// The run's record takes the new definition (a rare path: one write).
			if err := d.cfg.Store.Runs.Redefine(cctx, f.id, job.Handler, job.Param, rendered); err != nil {
				d.cfg.Logger.Warn("trigger: store the new handler and param of a run sent again; its record keeps the former ones",
					"run", f.id, "job", f.jobID, "err", err)
			}
			if _, err := d.gateway.client(cctx, f.group, f.address).Run(cctx, req); err != nil {
				fail(f, fmt.Sprintf("executor %s refused or did not answer: %s", f.address, describe(err)))
				return
			}
			d.completer.deferred.note(f.id, "; its job was updated before the instant: dropped on the executor and sent again on the instant with the new definition")
			d.cfg.Logger.Info("trigger: run sent again on its instant with its job's new definition", "run", f.id, "job", f.jobID, "executor", f.address)
		})
	}
	wg.Wait()
	return failed
}

// cancelReason is the message of a fire sent ahead and cancelled.
const cancelReason = "the job was stopped or deleted, or its group paused, before this fire's instant; cancelled on its executor before it started"

// cancelAhead asks the executors of fires sent ahead to drop them if they
// have not started (KillRequest.before_start), and settles SKIPPED those
// they dropped. A run already started, or whose executor does not answer,
// is left to its result, as any run sent.
func (in *instant) cancelAhead(ctx context.Context, fires []*fire) error {
	dropped := in.dropAhead(ctx, fires, false, cancelReason,
		"trigger: cancel a run sent ahead of its instant, whose job was stopped; it may run",
		"trigger: a run sent ahead had started when its job was stopped; it goes on")
	results := make([]store.Result, 0, len(dropped))
	for _, f := range dropped {
		results = append(results, store.Result{RunID: f.id, Status: carillonv1.RunStatus_RUN_STATUS_SKIPPED,
			Message: cancelReason, FinishedAt: in.d.cfg.Clock.Now()})
	}
	if len(results) == 0 {
		return nil
	}
	if err := in.d.completer.Settle(ctx, results); err != nil {
		return fmt.Errorf("settle runs cancelled before their instant: %w", err)
	}
	return nil
}
