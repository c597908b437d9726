package trigger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/failpoint"
	"github.com/carillonhq/carillon/admin/internal/metrics"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// leaseRanOut is instant.send's error when this admin's lease on a shared
// database ran out before a send: another admin may have adopted the runs
// (store.LeaseDuration), and they are its to send now. Runs already sent
// ahead are on their executors, which tell the adopter (HeldRuns).
func (d *Dispatcher) leaseRanOut(runs int) error {
	d.cfg.Logger.Error("trigger: this admin's lease on the database ran out; not sending its claimed runs", "runs", runs)
	return errors.New("trigger: the admin's lease ran out")
}

// route records where each of fires goes (store.RunStore.Route), before any
// call is made, and returns those recorded: the others were settled or
// recorded meanwhile (killed, or sent by an admin that adopted them), and
// are not sent. Over PostgreSQL it fails with store.ErrLeaseLost once
// another admin may have adopted this one's runs: none is sent. The routes
// of instants routed at the same moment are written together, first of
// the writer's lanes (recordRoutes).
func (d *Dispatcher) route(ctx context.Context, fires []*fire) ([]*fire, error) {
	return d.routeIn(ctx, d.routes, fires, false)
}

// routeIn is route through lane: d.routes, written at once, or
// d.routesAhead, whose routes wait up to routeAheadLinger for others.
// With bounded, for the fires of an instant not yet reached for their
// calls, a scheduled fire's route waits no longer than the misfire
// threshold after its instant (awaitRoutes); the routes of a manual fire,
// or of a fire re-routed after its first call, wait however long.
func (d *Dispatcher) routeIn(ctx context.Context, lane *coalescer[routeItem], fires []*fire, bounded bool) ([]*fire, error) {
	if len(fires) == 0 {
		return fires, nil
	}
	items, recorded := routeItems(fires)
	var err error
	if !bounded {
		err = <-lane.add(items)
	} else if fires, items, recorded, err = d.awaitRoutes(lane, fires, items, recorded); len(fires) == 0 {
		return nil, err
	}
	for try := 1; err != nil && !errors.Is(err, store.ErrLeaseLost) && try < routeTries && ctx.Err() == nil; try++ {
		// A write can fail for a moment (a busy database, a dropped
		// connection): without its route, no run of the batch is sent.
		d.cfg.Logger.Warn("trigger: record the routes of runs; trying again", "runs", len(items), "err", err)
		sleep(ctx, d.cfg.Clock, time.Duration(try)*50*time.Millisecond)
		err = <-lane.add(items)
	}
	if err != nil {
		for _, f := range fires {
			f.endSpan(err, "")
		}
		return nil, err
	}
	kept := fires[:0]
	for i, f := range fires {
		if recorded[i] {
			kept = append(kept, f)
			continue
		}
		d.cfg.Logger.Info("trigger: a run was settled or sent by another admin before its route was recorded; not sent",
			"run", f.id, "job", f.job.ID)
		f.endSpan(nil, "settled or sent by another admin before its route was recorded")
	}
	return kept, nil
}

// routeItem is a route for the writer's route lane, and where to note
// whether it was recorded (the lane copies items into its batches).
type routeItem struct {
	route    store.Route
	recorded *bool
}

// routeItems returns the route items of fires and where each notes
// whether it was recorded.
func routeItems(fires []*fire) ([]routeItem, []bool) {
	items, recorded := make([]routeItem, len(fires)), make([]bool, len(fires))
	for i, f := range fires {
		items[i] = routeItem{route: store.Route{RunID: f.id, Address: f.address}, recorded: &recorded[i]}
	}
	return items, recorded
}

// awaitRoutes queues the routes of fires in lane and waits for their
// write. An overloaded admin's writer can take longer than the misfire
// threshold to reach them (a million routes queued behind a minute mark's
// claims waited until their batch timed out, 25 s after the instant: issue
// 36): once the threshold has passed after the instant of a scheduled fire
// whose route is still queued, the routes are taken back from the lane,
// the overdue fires of DO_NOTHING jobs are recorded as misfires, as drop
// does, and only the others' routes are queued again, waited for however
// long. A write already under way is waited for. It returns the fires
// whose routes it waited for, with their items and records, and the
// write's error; no fire when all were recorded as misfires.
func (d *Dispatcher) awaitRoutes(lane *coalescer[routeItem], fires []*fire, items []routeItem, recorded []bool) ([]*fire, []routeItem, []bool, error) {
	done := lane.add(items)
	var by time.Time
	for _, f := range fires {
		if _, scheduled := lateness(f, f.at); scheduled && (by.IsZero() || f.at.Before(by)) {
			by = f.at
		}
	}
	if by.IsZero() {
		return fires, items, recorded, <-done
	}
	// On the machine's clock, as a wait for a pool slot (clock.go): it
	// bounds work rather than following the schedule.
	late := time.NewTimer(by.Add(d.cfg.MisfireThreshold).Sub(d.cfg.Clock.Now()))
	defer late.Stop()
	select {
	case err := <-done:
		return fires, items, recorded, err
	case <-late.C:
	}
	if !lane.withdraw(done) { // being written now
		return fires, items, recorded, <-done
	}
	if fires = d.dropUnrouted(fires, d.cfg.Clock.Now()); len(fires) == 0 {
		return nil, nil, nil, nil
	}
	items, recorded = routeItems(fires)
	return fires, items, recorded, <-lane.add(items)
}

// dropUnrouted records as misfires those of fires, whose routes were not
// written, that are overdue at now and whose jobs skip a misfire (as drop
// does for a call reached late), and returns the others.
func (d *Dispatcher) dropUnrouted(fires []*fire, now time.Time) []*fire {
	var misfires []store.Result
	kept := make([]*fire, 0, len(fires))
	for _, f := range fires {
		if !d.overdue(f, now) || !skips(f.job) {
			kept = append(kept, f)
			continue
		}
		d.backlog.reached(f)
		misfires = append(misfires, d.misfired(f, now))
		f.endSpan(nil, "a misfire: its route waited for the writer past the misfire threshold")
	}
	if len(misfires) > 0 {
		d.completer.settleLater(misfires)
	}
	return kept
}

// recordRoutes is the route lane's write: it records the routes of items,
// which may be several instants', in one transaction, and notes which
// were recorded.
func (d *Dispatcher) recordRoutes(items []routeItem) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	routes := make([]store.Route, len(items))
	for i := range items {
		routes[i] = items[i].route
	}
	recorded, err := d.cfg.Store.Runs.Route(ctx, routes)
	for _, it := range items {
		*it.recorded = recorded[it.route.RunID]
	}
	return err
}

// routeTries is how many times route tries to record a batch's routes.
const routeTries = 3

// goesAhead says whether f, a scheduled fire of instant at, is sent
// ahead of it (see calls).
func (d *Dispatcher) goesAhead(f *fire, at time.Time) bool {
	return !at.IsZero() && d.cfg.SendAhead > 0 && f.dueAt
}

// Routes of fires sent ahead wait for company. They are recorded when the
// fires are planned, about 100 ms before their send (sendAt; the admin
// hands fires over that early), itself SendAhead before their instant:
// lingering a little there makes the routes of an every-second load's
// many instants a few transactions, not one per instant (5,000 FIX_RATE
// jobs: ~300 a second before), and delays no send. A fire whose send is
// nearer than the linger goes through the first lane; a write that ends
// after sendAt sends at once, still well ahead of the instant.
//
// routeAheadLinger is how long a route of a fire sent ahead may wait for
// others to share its transaction: three quarters of the time between the
// hand-over and the send, leaving the write a quarter. Each admin pays a
// route transaction per linger whatever its share of the fires, so the
// longer it is, the less several admins cost more than one (75 ms rather
// than 25: at 512 FIX_RATE fires/s over PostgreSQL, 16 % less admin CPU;
// BENCHMARKS.md, "ninth steps").
const routeAheadLinger = 75 * time.Millisecond

// routeAhead records the routes of the fires that go ahead of their
// instant at, sent from sendAt (route), and returns fires without those
// not recorded.
func (d *Dispatcher) routeAhead(ctx context.Context, fires []*fire, at, sendAt time.Time) ([]*fire, error) {
	var ahead []*fire
	for _, f := range fires {
		if d.goesAhead(f, at) {
			ahead = append(ahead, f)
		}
	}
	if len(ahead) == 0 {
		return fires, nil
	}
	lane := d.routes
	if sendAt.Sub(d.cfg.Clock.Now()) > routeAheadLinger {
		lane = d.routesAhead
	}
	kept, err := d.routeIn(ctx, lane, ahead, true)
	if err != nil || len(kept) == len(ahead) {
		return fires, err
	}
	recorded := make(map[int64]bool, len(kept))
	for _, f := range kept {
		recorded[f.id] = true
	}
	return slices.DeleteFunc(fires, func(f *fire) bool { return d.goesAhead(f, at) && !recorded[f.id] }), nil
}

// routeCalls records the routes of the fires of calls made on their
// instant (route), and returns calls without the fires not recorded.
func (d *Dispatcher) routeCalls(ctx context.Context, calls []*call) ([]*call, error) {
	var fires []*fire
	for _, c := range calls {
		fires = append(fires, c.fires...)
	}
	kept, err := d.routeIn(ctx, d.routes, fires, true)
	if err != nil || len(kept) == len(fires) {
		return calls, err
	}
	recorded := make(map[int64]bool, len(kept))
	for _, f := range kept {
		recorded[f.id] = true
	}
	for i, c := range calls {
		calls[i] = c.without(func(f *fire) bool { return !recorded[f.id] })
	}
	return calls, nil
}

// calls groups fires by executor, one call each, and prepares the calls:
// a scheduled fire's are prepared before its instant, so that on the
// instant only the calls are left to make. A call to an executor that
// takes due_at (fire.dueAt) is made for sending ahead of at, the earliest
// instant of fires (call.dueAt), when SendAhead is positive, each run due
// on its own instant, and prepared when it is made: its requests and
// records would otherwise wait for the send with the rest of a burst. The
// calls made on the instant are one an executor and instant. at is zero
// for a manual fire, sent now.
func (d *Dispatcher) calls(fires []*fire, at time.Time) []*call {
	type key struct {
		address string
		group   int64
		at      time.Time // the instant of a call made on it
	}
	byAddr := map[key]*call{}
	var calls []*call
	for _, f := range fires {
		startSpan(d.tracer, f)
		ahead := d.goesAhead(f, at)
		k := key{address: f.address, group: f.job.GroupID}
		if !ahead {
			k.at = f.at
		}
		c := byAddr[k]
		if c == nil {
			c = &call{address: f.address, group: f.job.GroupID, db: d.cfg.Store.DatabaseID(), admin: d.cfg.Store.AdminID()}
			if ahead {
				c.dueAt = at
			}
			byAddr[k] = c
			calls = append(calls, c)
		}
		c.fires = append(c.fires, f)
	}
	for _, c := range calls {
		if c.dueAt.IsZero() {
			c.prepare()
		}
	}
	return calls
}

// sendNow makes calls, all executors at once, and returns every fire's
// dispatch record, to be stored: a manual run's, whose caller waits for
// its record.
func (d *Dispatcher) sendNow(ctx context.Context, calls []*call) []store.Dispatch {
	ds, _ := d.callAll(ctx, calls, false)
	return ds
}

// sendScheduled makes the calls of scheduled fires, all executors at
// once, and returns the dispatch records of the fires that failed. The
// successful ones are deferred (deferredRecords) until their results take
// them: each call's records are deferred before it is made, so that a
// result coming back at once finds its record. The calls made again for
// re-routed fires are in rerouted.
func (d *Dispatcher) sendScheduled(ctx context.Context, calls []*call) (failed []store.Dispatch, rerouted []*call) {
	return d.callAll(ctx, calls, true)
}

// callAll makes calls, all executors at once, and returns the fires'
// dispatch records to store: with deferred, the failed ones only (the
// others are deferred, see sendScheduled); without, all of them. A fire
// whose call did not reach its executor is re-routed (router.reroute) and
// sent again, at most rerouteMax times, by the calls it returns as
// rerouted.
func (d *Dispatcher) callAll(ctx context.Context, calls []*call, deferred bool) (out []store.Dispatch, rerouted []*call) {
	for try := 0; len(calls) > 0; try++ {
		var mu sync.Mutex
		var us []undelivered
		out = append(out, d.eachCall(calls, func(c *call) []store.Dispatch {
			var before func()
			if deferred {
				if !c.dueAt.IsZero() { // sent ahead: prepared and made a few at a time (aheadCallsMax)
					defer d.gateway.aheadSlot(ctx, c.address)()
				}
				before = func() { d.completer.deferred.keep(c.deferredRecords(), c.lastDue()) }
			}
			errs := d.makeCall(ctx, c, before)
			var ds []store.Dispatch
			for i := range c.ds {
				switch {
				case errors.Is(errs[i], errLeaseLost):
					continue // never deferred: the adopter's to send and record
				case errs[i] == nil && deferred:
					continue // deferred until its result comes
				case errs[i] != nil && deferred:
					d.completer.deferred.release(c.ds[i].RunID)
				}
				c.ds[i].TriggerMessage = c.message(i) + c.ds[i].TriggerMessage
				if try < rerouteMax && notDelivered(errs[i]) && reroutable(c.fires[i].job.RouteStrategy) {
					mu.Lock()
					us = append(us, undelivered{fire: c.fires[i], failed: c.ds[i]})
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
		again, stuck := d.router.reroute(ctx, us, !calls[0].dueAt.IsZero())
		out = append(out, stuck...)
		again, err := d.route(ctx, again)
		if err != nil && !errors.Is(err, store.ErrLeaseLost) {
			d.cfg.Logger.Error("trigger: record the routes of re-routed runs; they are not sent", "runs", len(us), "err", err)
		}
		calls = d.calls(again, calls[0].dueAt)
		rerouted = append(rerouted, calls...)
	}
	return out, rerouted
}

// eachCall runs fn for each call with runs, concurrently, and returns
// what they return.
func (d *Dispatcher) eachCall(calls []*call, fn func(c *call) []store.Dispatch) []store.Dispatch {
	if n := slices.IndexFunc(calls, func(c *call) bool { return len(c.fires) > 0 }); n < 0 {
		return nil
	} else if !slices.ContainsFunc(calls[n+1:], func(c *call) bool { return len(c.fires) > 0 }) {
		return fn(calls[n]) // most often one executor: no goroutine to start and wait for
	}
	var mu sync.Mutex
	var ds []store.Dispatch
	var wg sync.WaitGroup
	for _, c := range calls {
		if len(c.fires) == 0 {
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
// the executor's refusal. It returns each fire's error, nil if accepted.
// before, if not nil, is called with the records complete but for the
// outcomes, just before the call is made.
func (d *Dispatcher) makeCall(ctx context.Context, c *call, before func()) []error {
	c.prepare()
	// The runs are sent now: a run sent in another millisecond than the
	// triggered_at its claim stored (sent late, or a manual run routed
	// slowly) records when it really was. A run sent ahead of its instant
	// keeps the instant: it starts then (a call sent ahead carries runs of
	// several instants, gathered: each keeps its own).
	start := d.cfg.Clock.Now()
	ahead := start.Before(c.dueAt)
	for i, f := range c.fires {
		if (c.dueAt.IsZero() || !start.Before(f.at)) && start.UnixMilli() != f.triggeredAt.UnixMilli() {
			c.ds[i].TriggeredAt = start
		}
	}
	// The last look at the lease before the call: an admin that stalled
	// since its runs were routed (a GC pause, a frozen VM) may have been
	// adopted, and its runs sent again by the adopter to the same
	// executors; it sends none of them. A renewal that is only late is
	// waited for (AwaitLease).
	if !d.cfg.Store.AwaitLease(ctx) {
		outcomes := make([]error, len(c.reqs))
		for i, f := range c.fires {
			outcomes[i] = errLeaseLost
			f.endSpan(errLeaseLost, "")
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
	ctx, cancel := context.WithTimeout(c.fires[0].spanContext(ctx), d.cfg.DispatchTimeout)
	defer cancel()
	outcomes := make([]error, len(c.reqs))
	var callErr error
	var shared *sharedCall // the RunBatch this call's runs shared with others' (aheadCalls)
	switch {
	case len(c.reqs) == 1 && !ahead:
		_, callErr = d.gateway.client(ctx, c.group, c.address).Run(ctx, c.reqs[0])
	case d.gateway.batchless(c.address, start):
		d.runEach(ctx, c, outcomes)
	default:
		var outs []*carillonv1.RunOutcome
		outs, shared, callErr = d.runBatch(ctx, c, ahead)
		if connect.CodeOf(callErr) == connect.CodeUnimplemented {
			// An executor written to the first contract, or in another
			// language, serves Run only: send each run on its own, and
			// those of its next batches too.
			d.cfg.Logger.Info("trigger: executor does not serve RunBatch; sending its runs one by one", "executor", c.address)
			d.gateway.setBatchless(c.address, start)
			callErr, shared = nil, nil
			d.runEach(ctx, c, outcomes)
			break
		}
		for i, o := range outs {
			if o.Code != "" {
				outcomes[i] = runRefusal{code: o.Code, message: o.Message}
			}
		}
	}
	took := d.cfg.Clock.Now().Sub(start).Round(time.Microsecond)
	tookNote := fmt.Sprintf("; the call took %s", took)
	switch {
	case shared != nil && shared.calls > 1:
		took = shared.took.Round(time.Microsecond)
		tookNote = fmt.Sprintf("; sent %s ahead (due_at) in a RunBatch of %d runs (%d calls); it took %s",
			c.dueAt.Sub(shared.start).Round(time.Millisecond), shared.runs, shared.calls, took)
	case ahead:
		tookNote = fmt.Sprintf("; sent %s ahead (due_at); the call took %s",
			c.dueAt.Sub(start).Round(time.Millisecond), took)
	}
	c.note.took.Store(&tookNote)
	for i, f := range c.fires {
		d.slowJobs.observe(f.job.ID, took, start)
		rec := &c.ds[i]
		outcomes[i] = cmp.Or(callErr, outcomes[i])
		if isDuplicate(outcomes[i]) {
			// The executor holds the run already: sent by an admin that
			// stalled, or sent before by this one, its one execution,
			// which started when that call came, not this one.
			outcomes[i] = nil
			rec.TriggeredAt = time.Time{}
			rec.TriggerMessage += duplicateNote
			if before != nil {
				d.completer.deferred.delivered(f.id)
			}
		}
		if before != nil { // a scheduled fire, sent on its instant
			d.cfg.Metrics.Sent(f.triggeredAt, start)
		}
		f.endSpan(outcomes[i], "")
		if f.span != nil && f.span.SpanContext().IsSampled() {
			d.cfg.Logger.InfoContext(f.spanContext(ctx), "trigger: run sent", "run", f.id, "job", f.job.ID,
				"executor", c.address, "err", outcomes[i])
		}
		if outcomes[i] == nil {
			d.cfg.Metrics.Dispatched(f.job.RouteStrategy, metrics.CodeOK, 1)
			continue
		}
		d.cfg.Metrics.Dispatched(f.job.RouteStrategy, outcomeCode(outcomes[i]), 1)
		rec.Failed, rec.FinishedAt = true, d.cfg.Clock.Now()
		rec.Message = fmt.Sprintf("executor %s refused or did not answer: %s", c.address, describe(outcomes[i]))
	}
	return outcomes
}

// runBatch sends c's runs in a RunBatch and returns their outcomes, in
// order: a call sent ahead of its instant shares its RunBatch with other
// calls to the same executor (aheadCalls), and says so in shared.
func (d *Dispatcher) runBatch(ctx context.Context, c *call, ahead bool) (outcomes []*carillonv1.RunOutcome, shared *sharedCall, err error) {
	batch := func(ctx context.Context, reqs []*carillonv1.RunRequest) (*carillonv1.RunBatchResponse, error) {
		return d.gateway.client(ctx, c.group, c.address).RunBatch(ctx, &carillonv1.RunBatchRequest{Runs: reqs})
	}
	if ahead {
		sc := d.aheads.send(ctx, aheadKey{c.group, c.address}, c.reqs, c.dueAt, batch)
		return sc.outcomes, &sc, sc.err
	}
	res, err := batch(ctx, c.reqs)
	if err != nil {
		return nil, nil, err
	}
	outcomes, err = batchOutcomes(res, len(c.reqs))
	return outcomes, nil, err
}

// batchOutcomes returns the outcomes of a RunBatch of n runs, or an error
// when it did not answer one for each: the answer cannot be trusted.
func batchOutcomes(res *carillonv1.RunBatchResponse, n int) ([]*carillonv1.RunOutcome, error) {
	if len(res.GetOutcomes()) != n {
		return nil, fmt.Errorf("RunBatch answered %d outcomes for %d runs", len(res.GetOutcomes()), n)
	}
	return res.Outcomes, nil
}

// runEachMax bounds the concurrent Run calls to one executor that does not
// serve RunBatch.
const runEachMax = 16

// runEach sends c's runs with one Run call each, at most runEachMax at a
// time, and sets each run's outcome.
func (d *Dispatcher) runEach(ctx context.Context, c *call, outcomes []error) {
	client := d.gateway.client(ctx, c.group, c.address)
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
