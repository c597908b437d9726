package trigger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/failpoint"
	"github.com/carillonhq/carillon/admin/internal/metrics"
	"github.com/carillonhq/carillon/admin/internal/store"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// sendBatch reads the jobs of claimed runs and routes them, then sends the runs
// of each instant on that instant, except those whose job was stopped
// since their claim. It is called holding slot (busy 1), and lets it go.
func (t *Trigger) sendBatch(ctx context.Context, slot *batchSlot, cs []claimedRun) error {
	ids := make([]int64, 0, len(cs))
	for _, c := range cs {
		ids = append(ids, c.run.JobID)
	}
	jobs, err := t.cfg.Store.JobDefinitions(ctx, ids)
	if err != nil {
		slot.idle()
		return errors.Join(err, t.refuse(ctx, cs, fmt.Sprintf("read the jobs: %v", err)))
	}
	instants := byInstant(cs)
	var wg sync.WaitGroup
	errs := make(chan error, len(instants))
	for at, group := range instants {
		slot.work(ctx)
		wg.Go(func() {
			defer slot.idle()
			errs <- t.sendAt(ctx, slot, at, group, jobs)
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

// byInstant groups claimed runs by instant: cs itself when all share one,
// as the batches of a burst do, not a copy.
func byInstant(cs []claimedRun) map[time.Time][]claimedRun {
	if !slices.ContainsFunc(cs, func(c claimedRun) bool { return c.at != cs[0].at }) {
		return map[time.Time][]claimedRun{cs[0].at: cs}
	}
	groups := map[time.Time][]claimedRun{}
	for _, c := range cs {
		groups[c.at] = append(groups[c.at], c)
	}
	return groups
}

// sendAt routes claimed runs, waits for instant at, and sends them, except
// those whose job was stopped since their claim: those are settled SKIPPED.
func (t *Trigger) sendAt(ctx context.Context, slot *batchSlot, at time.Time, cs []claimedRun, jobs map[int64]*store.JobDefinition) error {
	seqs := make(map[int64]uint64, len(cs)) // by job: the stop sequence before its earliest claim here
	for _, c := range cs {
		if s, ok := seqs[c.run.JobID]; !ok || c.stopSeq < s {
			seqs[c.run.JobID] = c.stopSeq
		}
	}
	var skipped []store.Result
	skip := func(run int64) {
		skipped = append(skipped, store.Result{RunID: run, Status: carillonv1.RunStatus_RUN_STATUS_SKIPPED,
			Message: "the job was stopped or deleted before this fire's instant; not dispatched", FinishedAt: t.clock.Now()})
	}
	fires := make([]routable, 0, len(cs))
	for _, c := range cs {
		job, ok := jobs[c.run.JobID]
		if !ok && t.cfg.Store.StoppedSince(c.run.JobID, c.stopSeq) {
			skip(c.run.ID) // deleted since the claim
			continue
		}
		fires = append(fires, routable{run: c.run, job: job, pin: c.pin})
	}
	p, err := t.plan(ctx, fires)
	if err != nil {
		return err
	}
	// The runs sent ahead have their routes recorded now, while they wait:
	// their executors say which runs they hold (HeldRuns) to an admin that
	// takes over. Those sent on the instant, to executors that mostly
	// cannot say, have theirs recorded just before their calls
	// (routeCalls), which leaves the least doubt after a crash.
	if p.sends, err = t.routeAhead(ctx, p.sends, at); err != nil {
		if errors.Is(err, store.ErrLeaseLost) {
			return t.leaseRanOut(len(cs))
		}
		return err
	}
	// The routes keep what they need of the runs (fireRun): the batch lets
	// go of them, garbage while the batch waits for its instant.
	for i := range cs {
		cs[i].run = nil
	}
	// Everything but the calls themselves, before the instant; the calls
	// to executors that take due_at are made ahead of it (ahead.go).
	calls, ahead := splitAhead(t.calls(p.sends, at))
	p.sends = nil // in calls now: garbage while the batch waits for its instant
	var sent []aheadRun
	if len(ahead) > 0 {
		slot.idle()
		sleep(ctx, t.clock, at.Add(-cs[0].lead).Sub(t.clock.Now()))
		slot.work(ctx)
		if !t.cfg.Store.AwaitLease(ctx) {
			return t.leaseRanOut(len(cs))
		}
		failed, ok := t.sendAhead(ctx, dropStopped(ahead, t.cfg.Store, seqs, skip))
		p.failed, sent = append(p.failed, failed...), ok
	}
	// Until the instant, a job stopped cancels its runs sent ahead; on ctx's
	// end, send: the calls fail and are recorded.
	slot.idle()
	replaced, cancelled := t.awaitInstant(ctx, at, sent, seqs)
	slot.work(ctx)
	if !t.cfg.Store.AwaitLease(ctx) {
		return errors.Join(t.leaseRanOut(len(cs)), cancelled)
	}
	calls = dropStopped(calls, t.cfg.Store, seqs, skip)
	if calls, err = t.routeCalls(ctx, calls); err != nil {
		if errors.Is(err, store.ErrLeaseLost) {
			err = t.leaseRanOut(len(cs))
		}
		return errors.Join(err, cancelled)
	}
	var resent []store.Dispatch
	var wg sync.WaitGroup
	wg.Go(func() { resent = t.resend(ctx, replaced, seqs, skip) })
	held, _ := t.sendHeld(ctx, calls)
	wg.Wait()
	err = t.record(ctx, append(append(p.failed, held...), resent...)...)
	if len(skipped) > 0 {
		err = errors.Join(err, t.Settle(ctx, skipped))
	}
	return errors.Join(err, cancelled)
}

// leaseRanOut is sendAt's error when this admin's lease on a shared
// database ran out before a send: another admin may have adopted the runs
// (store.LeaseDuration), and they are its to send now. Runs already sent
// ahead are on their executors, which tell the adopter (HeldRuns).
func (t *Trigger) leaseRanOut(runs int) error {
	t.cfg.Logger.Error("trigger: this admin's lease on the database ran out; not sending its claimed runs", "runs", runs)
	return errors.New("trigger: the admin's lease ran out")
}

// route records where each of sends goes (store.RouteRuns), before any
// call is made, and returns those recorded: the others were settled or
// recorded meanwhile (killed, or sent by an admin that adopted them), and
// are not sent. Over PostgreSQL it fails with store.ErrLeaseLost once
// another admin may have adopted this one's runs: none is sent.
func (t *Trigger) route(ctx context.Context, sends []routed) ([]routed, error) {
	if len(sends) == 0 {
		return sends, nil
	}
	routes := make([]store.Route, len(sends))
	for i, s := range sends {
		routes[i] = store.Route{RunID: s.run.ID, Address: s.address}
	}
	recorded, err := t.cfg.Store.RouteRuns(ctx, routes)
	for try := 1; err != nil && !errors.Is(err, store.ErrLeaseLost) && try < routeTries && ctx.Err() == nil; try++ {
		// A write can fail for a moment (a busy database, a dropped
		// connection): without its route, no run of the batch is sent.
		t.cfg.Logger.Warn("trigger: record the routes of runs; trying again", "runs", len(routes), "err", err)
		sleep(ctx, t.clock, time.Duration(try)*50*time.Millisecond)
		recorded, err = t.cfg.Store.RouteRuns(ctx, routes)
	}
	if err != nil {
		for _, s := range sends {
			endFire(s, err, false)
		}
		return nil, err
	}
	if len(recorded) == len(sends) {
		return sends, nil
	}
	kept := sends[:0]
	for _, s := range sends {
		if recorded[s.run.ID] {
			kept = append(kept, s)
			continue
		}
		t.cfg.Logger.Info("trigger: a run was settled or sent by another admin before its route was recorded; not sent",
			"run", s.run.ID, "job", s.job.ID)
		endFire(s, nil, true)
	}
	return kept, nil
}

// routeTries is how many times route tries to record a batch's routes.
const routeTries = 3

// goesAhead says whether s, a run of a scheduled fire of instant at, is
// sent ahead of it (see calls).
func (t *Trigger) goesAhead(s routed, at time.Time) bool {
	return !at.IsZero() && t.cfg.SendAhead > 0 && s.dueAt
}

// routeAhead records the routes of the runs of sends that go ahead of
// their instant at (route), and returns sends without those not recorded.
func (t *Trigger) routeAhead(ctx context.Context, sends []routed, at time.Time) ([]routed, error) {
	var ahead []routed
	for _, s := range sends {
		if t.goesAhead(s, at) {
			ahead = append(ahead, s)
		}
	}
	if len(ahead) == 0 {
		return sends, nil
	}
	kept, err := t.route(ctx, ahead)
	if err != nil || len(kept) == len(ahead) {
		return sends, err
	}
	recorded := make(map[int64]bool, len(kept))
	for _, s := range kept {
		recorded[s.run.ID] = true
	}
	return slices.DeleteFunc(sends, func(s routed) bool { return t.goesAhead(s, at) && !recorded[s.run.ID] }), nil
}

// routeCalls records the routes of the runs of calls made on their
// instant (route), and returns calls without the runs not recorded.
func (t *Trigger) routeCalls(ctx context.Context, calls []*call) ([]*call, error) {
	var sends []routed
	for _, c := range calls {
		sends = append(sends, c.sends...)
	}
	kept, err := t.route(ctx, sends)
	if err != nil || len(kept) == len(sends) {
		return calls, err
	}
	recorded := make(map[int64]bool, len(kept))
	for _, s := range kept {
		recorded[s.run.ID] = true
	}
	for i, c := range calls {
		calls[i] = c.without(func(s routed) bool { return !recorded[s.run.ID] })
	}
	return calls, nil
}

// dropStopped returns calls without the sends whose job was stopped or
// deleted since the stop sequence seqs holds for it, each handed to skip.
func dropStopped(calls []*call, st *store.Store, seqs map[int64]uint64, skip func(run int64)) []*call {
	for i, c := range calls {
		calls[i] = c.without(func(s routed) bool {
			if !st.StoppedSince(s.job.ID, seqs[s.job.ID]) {
				return false
			}
			skip(s.run.ID)
			endFire(s, nil, true)
			return true
		})
	}
	return calls
}

// call is the runs of one call to one executor (Run for one run, RunBatch
// for more, or one Run per run to an executor that does not serve
// RunBatch), ready to send: requests built and dispatch records written.
type call struct {
	address string
	dueAt   time.Time // the instant, for a call sent ahead of it (see sendAhead); zero: sent on it
	group   int64     // the group of every run of the call, whose token it carries
	db      string    // the database ID every request carries
	sends   []routed
	reqs    []*carillonv1.RunRequest
	ds      []store.Dispatch // how each run was dispatched, as recorded if the call succeeds, without its trigger message (message)
	note    *callNote
}

// callNote is what the trigger messages of a call's runs say of the call:
// how many runs it carried and, once it returned, how it went.
type callNote struct {
	runs int
	took atomic.Pointer[string]
}

// message returns the trigger message of d, a run of the call routed as
// route says.
func (n *callNote) message(route string, d *store.Dispatch) string {
	var took, failed string
	if p := n.took.Load(); p != nil {
		took = *p
	}
	if d.Failed {
		failed = "; failed"
	}
	return fmt.Sprintf("%s; shard %d of %d (0-based); sent to %s (%d runs in the call)%s%s",
		route, d.ShardIndex, d.ShardTotal, d.ExecutorAddress, n.runs, took, failed)
}

// message returns the whole trigger message of c's i-th run.
func (c *call) message(i int) string { return c.note.message(c.sends[i].note, &c.ds[i]) }

// held returns c's dispatch records to hold until their results come,
// their trigger messages in parts.
func (c *call) held() []heldDispatch {
	hs := make([]heldDispatch, len(c.ds))
	for i := range c.ds {
		hs[i] = heldDispatch{Dispatch: c.ds[i], route: c.sends[i].note, call: c.note}
	}
	return hs
}

// calls groups sends by executor, one call each, and prepares the calls:
// a scheduled fire's are prepared before its instant at, so that on the
// instant only the calls are left to make. A call to an executor that
// takes due_at (routed.dueAt) is made for sending ahead of at
// (call.dueAt), when SendAhead is positive, and prepared when it is made:
// its requests and records would wait for the send with the rest of a
// burst, about 800 B a run. at is zero for a manual fire, sent now.
func (t *Trigger) calls(sends []routed, at time.Time) []*call {
	type key struct {
		address string
		group   int64
	}
	byAddr := map[key]*call{}
	var calls []*call
	for _, s := range sends {
		t.startFire(&s)
		k := key{s.address, s.job.GroupID}
		c := byAddr[k]
		if c == nil {
			c = &call{address: s.address, group: s.job.GroupID, db: t.cfg.Store.DatabaseID()}
			if !at.IsZero() && t.cfg.SendAhead > 0 && s.dueAt {
				c.dueAt = at
			}
			byAddr[k] = c
			calls = append(calls, c)
		}
		c.sends = append(c.sends, s)
	}
	for _, c := range calls {
		if c.dueAt.IsZero() {
			c.prepare()
		}
	}
	return calls
}

// prepare builds c's requests and dispatch records from its sends, unless
// it did already.
func (c *call) prepare() {
	if c.reqs != nil {
		return
	}
	c.reqs = make([]*carillonv1.RunRequest, len(c.sends))
	c.ds = make([]store.Dispatch, len(c.sends))
	c.note = &callNote{runs: len(c.sends)}
	for i, s := range c.sends {
		c.reqs[i] = runRequest(s.job, s.run.sentRun, c.db)
		c.reqs[i].TraceContext = s.traceCarrier()
		if !c.dueAt.IsZero() {
			c.reqs[i].DueAt = timestamppb.New(c.dueAt)
		}
		c.ds[i] = store.Dispatch{RunID: s.run.ID, ExecutorAddress: c.address, ShardIndex: s.run.ShardIndex, ShardTotal: s.run.ShardTotal,
			TimeoutSeconds: s.job.TimeoutSeconds}
	}
}

// without returns c without the sends for which drop is true, to be
// prepared again when it is made.
func (c *call) without(drop func(routed) bool) *call {
	kept := slices.DeleteFunc(slices.Clone(c.sends), drop)
	if len(kept) == len(c.sends) {
		return c
	}
	return &call{address: c.address, dueAt: c.dueAt, group: c.group, db: c.db, sends: kept}
}

// sendNow makes calls, all executors at once, and returns every run's
// dispatch outcome, to be recorded: a manual run's, whose caller waits for
// its record.
func (t *Trigger) sendNow(ctx context.Context, calls []*call) []store.Dispatch {
	ds, _ := t.callAll(ctx, calls, false)
	return ds
}

// sendHeld makes calls, all executors at once, and returns the dispatch
// outcomes of the runs that failed. The successful ones are held
// (deferredRecords) until their results take them: each call's dispatches
// are held before it is made, so that a result coming back at once finds
// its dispatch. The calls made again for re-routed runs are in rerouted.
func (t *Trigger) sendHeld(ctx context.Context, calls []*call) (failed []store.Dispatch, rerouted []*call) {
	return t.callAll(ctx, calls, true)
}

// callAll makes calls, all executors at once, and returns the runs'
// dispatch outcomes to record: with held, the failed ones only (the others
// are held, see sendHeld); without, all of them. A run whose call did not
// reach its executor is re-routed (reroute.go) and sent again, at most
// rerouteMax times, by the calls it returns as rerouted.
func (t *Trigger) callAll(ctx context.Context, calls []*call, held bool) (out []store.Dispatch, rerouted []*call) {
	for try := 0; len(calls) > 0; try++ {
		var mu sync.Mutex
		var us []undelivered
		out = append(out, t.eachCall(calls, func(c *call) []store.Dispatch {
			var before func()
			if held {
				if !c.dueAt.IsZero() { // sent ahead: prepared and made a few at a time (aheadCallsMax)
					defer t.executors.aheadSlot(ctx, c.address)()
				}
				before = func() { t.deferred.hold(c.held(), c.dueAt) }
			}
			errs := t.makeCall(ctx, c, before)
			var ds []store.Dispatch
			for i := range c.ds {
				switch {
				case errors.Is(errs[i], errLeaseLost):
					continue // never held: the adopter's to send and record
				case errs[i] == nil && held:
					continue // held until its result comes
				case errs[i] != nil && held:
					t.deferred.release(c.ds[i].RunID)
				}
				c.ds[i].TriggerMessage = c.message(i) + c.ds[i].TriggerMessage
				if try < rerouteMax && notDelivered(errs[i]) && reroutable(c.sends[i].job.RouteStrategy) {
					mu.Lock()
					us = append(us, undelivered{send: c.sends[i], failed: c.ds[i]})
					mu.Unlock()
					continue
				}
				ds = append(ds, c.ds[i])
			}
			return ds
		})...)
		if len(us) == 0 {
			break
		}
		again, stuck := t.reroute(ctx, us, !calls[0].dueAt.IsZero())
		out = append(out, stuck...)
		calls = t.calls(again, calls[0].dueAt)
		rerouted = append(rerouted, calls...)
	}
	return out, rerouted
}

// eachCall runs fn for each call with runs, concurrently, and returns
// what they return.
func (t *Trigger) eachCall(calls []*call, fn func(c *call) []store.Dispatch) []store.Dispatch {
	var mu sync.Mutex
	var ds []store.Dispatch
	var wg sync.WaitGroup
	for _, c := range calls {
		if len(c.sends) == 0 {
			continue
		}
		wg.Go(func() {
			out := fn(c)
			mu.Lock()
			ds = append(ds, out...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return ds
}

// makeCall makes call c and completes its dispatch records (c.ds): when
// the runs were sent, how long the call took, and for each run that failed
// the executor's refusal. It returns each run's error, nil if accepted.
// before, if not nil, is called with the records complete but for the
// outcomes, just before the call is made.
func (t *Trigger) makeCall(ctx context.Context, c *call, before func()) []error {
	c.prepare()
	// The runs are sent now: a run sent in another millisecond than the
	// triggered_at its claim stored (sent late, or a manual run routed
	// slowly) records when it really was. A run sent ahead of its instant
	// keeps the instant: it starts then.
	start := t.clock.Now()
	ahead := start.Before(c.dueAt)
	for i, s := range c.sends {
		if !ahead && start.UnixMilli() != s.run.TriggeredAt.UnixMilli() {
			c.ds[i].TriggeredAt = start
		}
	}
	// The last look at the lease before the call: an admin that stalled
	// since its runs were routed (a GC pause, a frozen VM) may have been
	// adopted, and its runs sent again by the adopter to the same
	// executors; it sends none of them. A renewal that is only late is
	// waited for (AwaitLease).
	if !t.cfg.Store.AwaitLease(ctx) {
		outcomes := make([]error, len(c.reqs))
		for i, s := range c.sends {
			outcomes[i] = errLeaseLost
			endFire(s, errLeaseLost, false)
		}
		return outcomes
	}
	if before != nil {
		before()
		failpoint.Stop(failpoint.CallScheduled)
	} else {
		failpoint.Stop(failpoint.CallManual)
	}
	// The call's client span is a child of its first run's fire span.
	ctx, cancel := context.WithTimeout(forGroup(c.sends[0].spanContext(ctx), c.group), t.cfg.DispatchTimeout)
	defer cancel()
	outcomes := make([]error, len(c.reqs))
	var callErr error
	switch {
	case len(c.reqs) == 1:
		_, callErr = t.executors.client(ctx, c.address).Run(ctx, c.reqs[0])
	case t.executors.batchless(c.address, start):
		t.runEach(ctx, c, outcomes)
	default:
		var res *carillonv1.RunBatchResponse
		res, callErr = t.executors.client(ctx, c.address).RunBatch(ctx, &carillonv1.RunBatchRequest{Runs: c.reqs})
		if connect.CodeOf(callErr) == connect.CodeUnimplemented {
			// An executor written to the first contract, or in another
			// language, serves Run only: send each run on its own, and
			// those of its next batches too.
			t.cfg.Logger.Info("trigger: executor does not serve RunBatch; sending its runs one by one", "executor", c.address)
			t.executors.setBatchless(c.address, start)
			res, callErr = nil, nil
			t.runEach(ctx, c, outcomes)
			break
		}
		if callErr == nil && len(res.Outcomes) != len(c.reqs) {
			callErr = fmt.Errorf("RunBatch answered %d outcomes for %d runs", len(res.Outcomes), len(c.reqs))
		}
		for i, o := range res.GetOutcomes() {
			if o.Code != "" && i < len(outcomes) {
				outcomes[i] = runRefusal{code: o.Code, message: o.Message}
			}
		}
	}
	took := t.clock.Now().Sub(start).Round(time.Microsecond)
	tookNote := fmt.Sprintf("; the call took %s", took)
	if ahead {
		tookNote = fmt.Sprintf("; sent %s ahead of its instant, to start on it by the executor's clock (due_at); the call took %s",
			c.dueAt.Sub(start).Round(time.Millisecond), took)
	}
	c.note.took.Store(&tookNote)
	for i, s := range c.sends {
		t.slowJobs.observe(s.job.ID, took, start)
		d := &c.ds[i]
		outcomes[i] = cmp.Or(callErr, outcomes[i])
		if isDuplicate(outcomes[i]) {
			// The executor holds the run already: sent by an admin that
			// stalled, or sent before by this one, its one execution,
			// which started when that call came, not this one.
			outcomes[i] = nil
			d.TriggeredAt = time.Time{}
			d.TriggerMessage += duplicateNote
			if before != nil {
				t.deferred.delivered(s.run.ID)
			}
		}
		if before != nil { // a scheduled fire, sent on its instant
			t.cfg.Metrics.Sent(s.run.TriggeredAt, start)
		}
		endFire(s, outcomes[i], false)
		if s.span != nil && s.span.SpanContext().IsSampled() {
			t.cfg.Logger.InfoContext(s.spanContext(ctx), "trigger: run sent", "run", s.run.ID, "job", s.job.ID,
				"executor", c.address, "err", outcomes[i])
		}
		if outcomes[i] == nil {
			t.cfg.Metrics.Dispatched(s.job.RouteStrategy, metrics.CodeOK, 1)
			continue
		}
		t.cfg.Metrics.Dispatched(s.job.RouteStrategy, outcomeCode(outcomes[i]), 1)
		d.Failed, d.FinishedAt = true, t.clock.Now()
		d.Message = fmt.Sprintf("executor %s refused or did not answer: %s", c.address, describe(outcomes[i]))
	}
	return outcomes
}

// runEachMax bounds the concurrent Run calls to one executor that does not
// serve RunBatch.
const runEachMax = 16

// runEach sends c's runs with one Run call each, at most runEachMax at a
// time, and sets each run's outcome.
func (t *Trigger) runEach(ctx context.Context, c *call, outcomes []error) {
	client := t.executors.client(ctx, c.address)
	sem := make(chan struct{}, runEachMax)
	var wg sync.WaitGroup
	for i, req := range c.reqs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_, outcomes[i] = client.Run(ctx, req)
		})
	}
	wg.Wait()
}

// runRequest is the request that sends run of job, from the database
// with ID db. The job's fields it takes are those whose update replaces
// the runs sent ahead of their instant (the store's runsChanged, and
// PostgreSQL's job_changes trigger): keep them in step.
func runRequest(job *store.JobDefinition, run sentRun, db string) *carillonv1.RunRequest {
	req := &carillonv1.RunRequest{
		RunId: run.ID, JobId: job.ID, Handler: job.Handler, Param: run.Param, BlockStrategy: job.BlockStrategy,
		TimeoutSeconds: job.TimeoutSeconds, ShardIndex: run.ShardIndex, ShardTotal: run.ShardTotal,
		ScheduledAt: timestamppb.New(run.ScheduledAt), DatabaseId: db,
	}
	if job.ScriptType != carillonv1.ScriptType_SCRIPT_TYPE_UNSPECIFIED {
		req.Script = &carillonv1.Script{Type: job.ScriptType, Source: job.ScriptSource, UpdatedAt: timestamppb.New(job.ScriptUpdatedAt)}
	}
	return req
}

// outcomeCode is the metrics code of a run's failed dispatch: the Connect
// code of the call's error, or of the executor's refusal of the run.
func outcomeCode(err error) string {
	var refused runRefusal
	if errors.As(err, &refused) {
		return refused.code
	}
	return connect.CodeOf(err).String()
}

// duplicateNote ends the trigger message of a run its executor held
// already when it was sent (isDuplicate).
const duplicateNote = "; the executor held the run already (a duplicate send, not run again)"

// errLeaseLost is the outcome of a run not sent because this admin's lease
// on a shared database ran out before its call: the admin that adopts this
// one sends it. It is not recorded.
var errLeaseLost = errors.New("not sent: this admin's lease on the database ran out")

// isDuplicate says err is an executor's refusal of a run it holds already
// (already_exists; xxl-job's "repeat trigger"): the run was delivered.
func isDuplicate(err error) bool {
	var refused runRefusal
	if errors.As(err, &refused) {
		return refused.code == connect.CodeAlreadyExists.String()
	}
	return err != nil && connect.CodeOf(err) == connect.CodeAlreadyExists
}

// runRefusal is an executor's refusal of one run of a RunBatch call
// (RunOutcome.code and message).
type runRefusal struct{ code, message string }

func (r runRefusal) Error() string { return r.code + ": " + r.message }

// describe turns a Connect error into words a person can act on.
func describe(err error) string {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return fmt.Sprintf("%s: %s", ce.Code(), ce.Message())
	}
	return err.Error()
}
