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
// fires of each instant on that instant (instant.send), concurrently:
// instants closer together than GatherInstants go as one. It is called
// holding slot (busy 1), and lets it go. burst counts the fires of each
// instant handed over with the batch (SendLead).
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
	var wg sync.WaitGroup
	var errs []error
	var mu sync.Mutex
	for _, in := range d.instants(fs, burst) {
		in.slot = slot
		slot.work(ctx)
		wg.Go(func() {
			defer slot.idle()
			if err := in.send(ctx, jobs); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	slot.idle() // the batch's own hold, taken by startBatch: its instants' from now on
	wg.Wait()
	return errors.Join(append(errs, err)...)
}

// instants groups fs by instant, in order, each group's instants less
// than GatherInstants after its first. A group is sent ahead by the lead
// of its largest instant (SendLead).
func (d *Dispatcher) instants(fs []fire, burst map[time.Time]int) []*instant {
	byAt := map[time.Time][]*fire{}
	for i := range fs {
		byAt[fs[i].at] = append(byAt[fs[i].at], &fs[i])
	}
	ats := make([]time.Time, 0, len(byAt))
	for at := range byAt {
		ats = append(ats, at)
	}
	slices.SortFunc(ats, time.Time.Compare)
	var ins []*instant
	var in *instant
	for _, at := range ats {
		if in == nil || at.IsZero() || at.Sub(in.at) >= GatherInstants {
			in = &instant{d: d, at: at}
			ins = append(ins, in)
		}
		in.lead = max(in.lead, SendLead(d.cfg.SendAhead, burst[at]))
		in.fires = append(in.fires, byAt[at]...)
	}
	return ins
}

// instant is the fires of one dispatch batch due on one instant, or on a
// few instants less than GatherInstants apart, on their way from the plan
// to their calls.
//
// Sending ahead (Config.SendAhead): the calls of a scheduled fire to
// executors that take RunRequest.due_at leave SendAhead before the
// instant (the earliest, gathered), and the executors start each run on
// its own instant by their own clock. The rules of a fire sent on its
// instant hold:
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
//
// The calls to executors that do not take due_at are made on each
// instant, gathered or not.
type instant struct {
	d     *Dispatcher
	slot  *batchSlot
	at    time.Time     // the earliest instant of its fires
	lead  time.Duration // how long before at its fires are sent ahead (SendLead)
	fires []*fire
	// seqs is, by job, the stop sequence before its earliest claim here.
	seqs map[int64]uint64

	mu      sync.Mutex     // guards skipped: the calls of each instant are made concurrently
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
	last := latest(in.fires, in.at)
	in.fires = nil
	n := len(fires) // for the log: fires is not kept once planned
	p, err := d.router.plan(ctx, fires)
	if err != nil {
		return in.finish(ctx, nil, err)
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
		in.resume(ctx, in.at)
		if !d.cfg.Store.AwaitLease(ctx) {
			return d.leaseRanOut(n)
		}
		var failed []store.Dispatch
		failed, sent = in.sendAhead(ctx, in.drop(ahead))
		p.failed = append(p.failed, failed...)
	}
	// The calls made on the instant, each instant's on its own, while
	// the fires sent ahead wait for theirs; on ctx's end, send: the calls
	// fail and are recorded.
	onInstants := byInstant(calls)
	if len(onInstants) == 1 && len(ahead) == 0 {
		failed, err := in.sendOn(ctx, onInstants[0], n)
		return in.finish(ctx, append(p.failed, failed...), err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var onErr error
	for _, calls := range onInstants {
		in.slot.work(ctx)
		wg.Go(func() {
			defer in.slot.idle()
			failed, err := in.sendOn(ctx, calls, n)
			mu.Lock()
			defer mu.Unlock()
			p.failed, onErr = append(p.failed, failed...), errors.Join(onErr, err)
		})
	}
	// Until the instant, a job stopped cancels its fires sent ahead.
	in.slot.idle()
	resent, cancelled := in.awaitInstants(ctx, sent, last)
	wg.Wait()
	in.slot.work(ctx)
	return in.finish(ctx, append(p.failed, resent...), errors.Join(onErr, cancelled))
}

// finish stores the dispatch records of the instant's fires that failed
// and returns err joined with what failed; it settles those skipped
// without waiting (Completer.settleLater).
func (in *instant) finish(ctx context.Context, failed []store.Dispatch, err error) error {
	err = errors.Join(err, in.d.completer.record(ctx, failed...))
	in.mu.Lock()
	skipped := in.skipped
	in.mu.Unlock()
	if len(skipped) > 0 {
		in.d.completer.settleLater(skipped)
	}
	return err
}

// byInstant groups calls made on their instant by that instant, in order.
func byInstant(calls []*call) [][]*call {
	at := func(c *call) time.Time { return c.fires[0].at }
	slices.SortStableFunc(calls, func(a, b *call) int { return at(a).Compare(at(b)) })
	var out [][]*call
	for i := 0; i < len(calls); {
		j := i + 1
		for j < len(calls) && at(calls[j]).Equal(at(calls[i])) {
			j++
		}
		out = append(out, calls[i:j:j])
		i = j
	}
	return out
}

// sendOn waits for the instant of calls, made on it, and makes them,
// except the fires of jobs stopped since: it returns the dispatch records
// of the fires that failed. n counts the instant's fires, for the log of a
// lease run out. It is called working (batchSlot.work), and lets the slot
// go while it waits.
func (in *instant) sendOn(ctx context.Context, calls []*call, n int) ([]store.Dispatch, error) {
	d := in.d
	if at := calls[0].fires[0].at; at.After(d.cfg.Clock.Now()) {
		in.slot.idle()
		sleep(ctx, d.cfg.Clock, at.Sub(d.cfg.Clock.Now()))
		in.resume(ctx, at)
	}
	if !d.cfg.Store.AwaitLease(ctx) {
		return nil, d.leaseRanOut(n)
	}
	calls, err := d.routeCalls(ctx, in.drop(calls))
	if err != nil {
		if errors.Is(err, store.ErrLeaseLost) {
			err = d.leaseRanOut(n)
		}
		return nil, err
	}
	failed, _ := d.sendScheduled(ctx, calls)
	return failed, nil
}

// resume takes the batch's slot back (batchSlot.work) for fires of
// instant at, once they waited for it: it waits for the slot no longer
// than the misfire threshold after at. Past that, every scheduled fire of
// the instant is overdue: they go on without the slot, and drop records
// those of DO_NOTHING jobs as misfires at once, rather than when a slot
// frees or the batch times out (up to 25 s after the instant, under
// overload: issue 36). A manual fire (at zero) waits as long as ctx lets
// it.
func (in *instant) resume(ctx context.Context, at time.Time) {
	if at.IsZero() {
		in.slot.work(ctx)
		return
	}
	wctx, cancel := context.WithTimeout(ctx, at.Add(in.d.cfg.MisfireThreshold).Sub(in.d.cfg.Clock.Now()))
	defer cancel()
	in.slot.work(wctx)
}

// skip settles run SKIPPED with the instant's others: its job was stopped
// or deleted since its claim.
func (in *instant) skip(run int64) {
	in.settle(store.Result{RunID: run, Status: carillonv1.RunStatus_RUN_STATUS_SKIPPED,
		Message: "the job was stopped or deleted, or its group paused, before this fire's instant; not dispatched", FinishedAt: in.d.cfg.Clock.Now()})
}

// settle settles a fire of the instant that is not sent, with the
// instant's others (finish).
func (in *instant) settle(r store.Result) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.skipped = append(in.skipped, r)
}

// drop returns calls without the fires whose job was stopped or deleted
// since their claim, each skipped, and without those overdue (overdue.go),
// each settled as a misfire.
func (in *instant) drop(calls []*call) []*call {
	now := in.d.cfg.Clock.Now()
	var late time.Duration
	for i, c := range calls {
		calls[i] = c.without(func(f *fire) bool {
			in.d.backlog.reached(f)
			if l, scheduled := lateness(f, now); scheduled {
				late = max(late, l)
			}
			switch {
			case in.d.cfg.Store.Jobs.StoppedSince(f.job.ID, in.seqs[f.job.ID]):
				in.skip(f.id)
				f.endSpan(nil, "the job was stopped or deleted before the instant")
			case in.d.overdue(f, now) && skips(f.job):
				in.settle(in.d.misfired(f, now))
				f.endSpan(nil, "a misfire: the admin reached it more than the misfire threshold after its instant")
			default:
				return false
			}
			return true
		})
	}
	in.d.sendLate.observe(late, now)
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

// awaitInstants waits for last, the last instant of the fires, and, until
// it comes, cancels the fires of sent whose job is stopped or deleted, once
// more on that instant. The fires whose job is updated meanwhile are
// dropped by their executors (a before_start kill with replace) and sent
// again on their instant with the job's new definition (resend): it
// returns the dispatch records of those that failed, to be stored. It
// returns when the last instant has come or ctx ends: what failed is
// recorded after the instant, so that a retry never runs before it.
func (in *instant) awaitInstants(ctx context.Context, sent []*fire, last time.Time) (failed []store.Dispatch, err error) {
	clock := in.d.cfg.Clock
	if len(sent) == 0 {
		sleep(ctx, clock, last.Sub(clock.Now()))
		return nil, nil
	}
	var errs []error
	var replaced []*fire // dropped on their executors, to be sent again on their instant
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
	resend := func(all bool) { // those replaced whose instant came; all once the last came
		now := clock.Now()
		var due []*fire
		replaced = slices.DeleteFunc(replaced, func(f *fire) bool {
			if all || !f.at.After(now) {
				due = append(due, f)
				return true
			}
			return false
		})
		if len(due) > 0 {
			in.slot.work(ctx)
			failed = append(failed, in.resend(ctx, due)...)
			in.slot.idle()
		}
	}
	for {
		stopped := in.d.cfg.Store.Jobs.Stopped() // before the check: a stop or update after it wakes the wait
		check()
		resend(false)
		wake := last
		for _, f := range replaced {
			if f.at.Before(wake) {
				wake = f.at
			}
		}
		if sleepOr(ctx, clock, wake.Sub(clock.Now()), stopped) && wake.Equal(last) || ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() == nil {
		check() // most likely started already
	}
	resend(true)
	return failed, errors.Join(errs...)
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
