package trigger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/carillonhq/carillon/admin/internal/metrics"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Dispatcher carries fires from their claim to their executors: it claims
// pending runs, plans each batch of fires (the router), sends them on
// their instant or ahead of it, and hands the dispatch records to the
// Completer. It implements schedule.Dispatcher, and runs TriggerJob's
// manual fires. It is safe for concurrent use.
type Dispatcher struct {
	cfg       *Config
	router    *router
	gateway   *Gateway
	completer *Completer
	work      *inflight
	tracer    trace.Tracer // nil when not tracing
	fast      *pool
	slow      *pool
	slowJobs  slowJobs
	claims    *coalescer[schedule.Entry]
	routes    *coalescer[routeItem]
	// routesAhead are routes of fires sent ahead, whose sends are far
	// enough off for them to linger (routeAhead).
	routesAhead *coalescer[routeItem]
	// aheads gathers the calls sent ahead into shared RunBatches.
	aheads *aheadCalls
	// bursts counts the fires of large bursts handed over in parts.
	bursts bursts
	// overdueLog logs the fires recorded as misfires for the admin's
	// overload, and sendLate says how late its latest sends were
	// (overdue.go).
	overdueLog overdueLog
	sendLate   sendLate
	// backlog counts the scheduled fires handed over and not reached
	// yet for their calls (backlog.go).
	backlog backlog
}

// newDispatcher returns a Dispatcher whose routes, then claims, go first
// of w's lanes: a route is recorded just before its run is sent. Routes
// of fires sent ahead, which have time, come after the claims.
func newDispatcher(cfg *Config, w *writer, work *inflight, rt *router, gw *Gateway) *Dispatcher {
	d := &Dispatcher{cfg: cfg, router: rt, gateway: gw, work: work,
		fast: newPool("fast", cfg.MaxInFlight), slow: newPool("slow", max(cfg.MaxInFlight/2, 1)), aheads: newAheadCalls(cfg.Clock),
		overdueLog: overdueLog{logger: cfg.Logger, threshold: cfg.MisfireThreshold}}
	if cfg.TracerProvider != nil {
		d.tracer = cfg.TracerProvider.Tracer(tracerName)
	}
	d.routes = newCoalescer(w, "route", batchMax, 0, d.recordRoutes)
	d.claims = newCoalescer(w, "claim", batchMax, 0, d.claim)
	d.routesAhead = newCoalescer(w, "route-ahead", batchMax, routeAheadLinger, d.recordRoutes)
	return d
}

// Fire dispatches the runs of fires whose instant has come (or comes
// soon: each is sent at its entry's At). It returns at once;
// Trigger.Wait waits for the dispatches it started. Runs the scan claimed
// already (Entry.Claimed) go straight to dispatch; pending ones are claimed
// (PENDING to RUNNING) first, together with those that came due while the
// previous claim ran. Runs are dispatched in batches, concurrently, in a
// bounded pool; a job whose dispatches were slow more than 10 times this
// minute uses a separate slow pool, so a slow or dead executor cannot
// hold up fires to healthy ones. When a pool is overloaded its fires fail
// at once with the reason: a fire is never dropped silently.
func (d *Dispatcher) Fire(es []schedule.Entry) {
	var pending []schedule.Entry
	claimed := es[:0:0]
	for _, e := range es {
		if e.Claimed {
			claimed = append(claimed, e)
		} else {
			pending = append(pending, e)
		}
	}
	if len(claimed) > 0 {
		d.start(firesOf(claimed))
	}
	for len(pending) > 0 {
		n := min(len(pending), batchMax)
		d.claims.add(pending[:n:n])
		pending = pending[n:]
	}
}

// claim claims the pending runs of es (those still pending: a job stopped
// or changed since its fires were read ahead has none) and starts their
// dispatches, which send each run at its entry's instant.
func (d *Dispatcher) claim(es []schedule.Entry) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	now := d.cfg.Clock.Now()
	seq := d.cfg.Store.Jobs.StopSeq()
	claims := make([]store.RunClaim, len(es))
	at := make(map[int64]time.Time, len(es))
	for i, e := range es {
		claims[i] = store.RunClaim{RunID: e.RunID, JobID: e.JobID, TriggerType: e.TriggerType, SendAt: e.At}
		at[e.RunID] = e.At
	}
	runs, err := d.cfg.Store.Fires.ClaimRuns(ctx, claims, now)
	if err != nil {
		d.cfg.Logger.Error("trigger: claim due runs; the monitor will settle them", "runs", len(es), "err", err)
		return err
	}
	fs := make([]fire, len(runs))
	for i := range runs {
		fs[i] = fireOf(&runs[i], at[runs[i].ID], seq)
		if runs[i].TriggerType == carillonv1.TriggerType_TRIGGER_TYPE_WORKFLOW && runs[i].Attempt == 0 {
			d.cfg.Metrics.NodeClaimed(runs[i].DueAt, now)
		}
	}
	d.start(fs)
	return nil
}

// start starts the dispatches of claimed fires, in batches, in the fast
// pool or, for jobs that were slow lately, the slow one.
func (d *Dispatcher) start(fs []fire) {
	d.cfg.Metrics.FiresClaimed(len(fs))
	now := d.cfg.Clock.Now()
	burst := map[time.Time]int{} // fires by instant, with those handed over before (bursts)
	for i := range fs {
		burst[fs[i].at]++
	}
	d.bursts.add(burst, now)
	// Most often no job is slow, and a burst's fires are not copied.
	fast, slow := fs, []fire(nil)
	if slices.ContainsFunc(fs, func(f fire) bool { return d.slowJobs.slow(f.jobID, now) }) {
		fast = make([]fire, 0, len(fs))
		for _, f := range fs {
			if d.slowJobs.slow(f.jobID, now) {
				slow = append(slow, f)
			} else {
				fast = append(fast, f)
			}
		}
	}
	for _, part := range []struct {
		p  *pool
		fs []fire
	}{{d.fast, fast}, {d.slow, slow}} {
		for len(part.fs) > 0 {
			n := min(len(part.fs), batchMax)
			d.startBatch(part.p, part.fs[:n:n], burst)
			part.fs = part.fs[n:]
		}
	}
}

// startBatch dispatches one batch of claimed fires on its own goroutine,
// in pool p; burst counts the fires handed over with them by instant,
// which sets how long before it they are sent ahead (SendLead).
func (d *Dispatcher) startBatch(p *pool, fs []fire, burst map[time.Time]int) {
	d.backlog.add(fs)
	d.work.Go(func() {
		defer func() { // those not reached for a call: skipped, failed, refused
			for i := range fs {
				d.backlog.reached(&fs[i])
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), batchTimeout(d.cfg.Clock.Now(), fs, d.cfg.DispatchTimeout))
		defer cancel()
		var err error
		// The runs are claimed: a bounded wait for a slot keeps them from
		// looking half-dispatched to the monitor. A batch handed over
		// ahead of its instant (a burst, FireAheadPerFire) may wait until
		// that instant, and DispatchTimeout more.
		wait, ahead := slotWait(d.cfg.Clock.Now(), fs, d.cfg.DispatchTimeout, d.cfg.MisfireThreshold)
		if p.acquire(wait, ahead) {
			err = d.sendBatch(ctx, &batchSlot{p: p, busy: 1, taken: true}, fs, burst)
		} else {
			err = d.refuse(ctx, fs, fmt.Sprintf("admin overloaded: more than %d dispatch batches waiting in the %s pool, or none free for %s; not dispatched",
				p.maxWaiting, p.name, wait.Round(time.Millisecond)))
		}
		if err != nil {
			d.cfg.Logger.Error("trigger: fire", "runs", len(fs), "err", err)
		}
	})
}

// slotWait is how long a dispatch batch handed over at now may wait for a
// slot of its pool: until its earliest instant, then dispatchTimeout, as
// a fire due now waits. A batch of scheduled fires alone waits no longer
// than the misfire threshold after that instant: past it its fires are
// overdue, and refuse records those of DO_NOTHING jobs as misfires at
// once rather than dispatchTimeout after the instant (issue 36). ahead
// says that instant is more than dispatchTimeout off: the batch was
// handed over early on purpose (a large burst,
// schedule.Config.FireAheadPerFire) and does not count toward the pool's
// overload. A manual fire (instant zero) waits dispatchTimeout.
func slotWait(now time.Time, fs []fire, dispatchTimeout, threshold time.Duration) (wait time.Duration, ahead bool) {
	at := fs[0].at
	scheduled := true
	for i := range fs {
		if fs[i].at.Before(at) {
			at = fs[i].at
		}
		_, ok := lateness(&fs[i], now)
		scheduled = scheduled && ok
	}
	if at.IsZero() {
		return dispatchTimeout, false
	}
	until := at.Sub(now)
	if scheduled {
		return max(until+min(dispatchTimeout, threshold), 0), until > dispatchTimeout
	}
	return max(until, 0) + dispatchTimeout, until > dispatchTimeout
}

// batchTimeout bounds a dispatch batch handed over at now: until its last
// instant, then two calls and a margin. It counts from the last instant,
// not from now: a large burst is handed over long before it
// (schedule.Config.FireAheadPerFire).
func batchTimeout(now time.Time, fs []fire, dispatchTimeout time.Duration) time.Duration {
	var wait time.Duration
	for i := range fs {
		wait = max(wait, fs[i].at.Sub(now))
	}
	return wait + 2*dispatchTimeout + 5*time.Second
}

// refuse fails claimed fires that cannot be dispatched, for the reason
// msg, except those overdue (overdue.go): those are misfires.
func (d *Dispatcher) refuse(ctx context.Context, fs []fire, msg string) error {
	now := d.cfg.Clock.Now()
	var jobs map[int64]*store.JobDefinition
	if slices.ContainsFunc(fs, func(f fire) bool { return d.overdue(&f, now) }) {
		ids := make([]int64, len(fs))
		for i := range fs {
			ids[i] = fs[i].jobID
		}
		jobs, _ = d.cfg.Store.Jobs.Definitions(ctx, ids) // none read: all fail
	}
	ds := make([]store.Dispatch, 0, len(fs))
	var misfires []store.Result
	for i := range fs {
		if d.overdue(&fs[i], now) && skips(jobs[fs[i].jobID]) {
			misfires = append(misfires, d.misfired(&fs[i], now))
			continue
		}
		ds = append(ds, fs[i].failed(msg, now))
	}
	var err error
	if len(misfires) > 0 {
		err = d.completer.Settle(ctx, misfires)
	}
	if len(ds) > 0 {
		d.cfg.Logger.Warn("trigger: runs not dispatched", "runs", len(ds), "reason", msg)
		d.cfg.Metrics.Dispatched(carillonv1.RouteStrategy_ROUTE_STRATEGY_UNSPECIFIED, metrics.CodeNotSent, len(ds))
		err = errors.Join(err, d.completer.record(ctx, ds...))
	}
	return err
}

// Manual says how TriggerJob runs a job.
type Manual struct {
	// TriggerType is MANUAL (a person) or API (a program); default MANUAL.
	TriggerType carillonv1.TriggerType
	// Param replaces the job's param when not nil.
	Param *string
	// Addresses, when not empty, replace the group's executors for routing.
	Addresses []string
	// RunAt, when not zero, is the instant to run at instead of now; not
	// with Addresses (a waiting run keeps no route of its own).
	RunAt time.Time
}

// TriggerJob runs job once now and returns the IDs of the runs it created
// (one, or one per shard). It waits for the dispatch, so each run's status
// says whether an executor accepted it; the run of a job with a
// concurrency cap that finds no slot free waits PENDING (or is SKIPPED
// under DISCARD_LATER), and TriggerJob returns its ID at once. With m.RunAt, it stores one
// pending run due then, which the scheduler fires as it fires retries,
// and returns its ID.
func (d *Dispatcher) TriggerJob(ctx context.Context, job store.Job, m Manual) ([]int64, error) {
	// The store keeps milliseconds: the run's first attempt gets the
	// scheduled instant its retries will read back.
	now := d.cfg.Clock.Now().Truncate(time.Millisecond)
	if !m.RunAt.IsZero() {
		return d.triggerAt(ctx, job, m)
	}
	run := store.Run{
		JobID: job.ID, GroupID: job.GroupID, Handler: job.Handler, Param: job.Param, ShardTotal: 1,
		TriggerType: cmp.Or(m.TriggerType, carillonv1.TriggerType_TRIGGER_TYPE_MANUAL),
		ScheduledAt: now, DueAt: now, TriggeredAt: now, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING,
	}
	if m.Param != nil {
		run.Param = *m.Param
	}
	var runs []store.Run
	var err error
	if job.Capped && len(m.Addresses) == 0 {
		var id int64
		if id, runs, err = d.claimCapped(ctx, run); err != nil || len(runs) == 0 {
			return []int64{id}, err // it waits for a slot, or was skipped
		}
	} else if runs, err = d.cfg.Store.Runs.Insert(ctx, []store.Run{run}); err != nil {
		return nil, err
	}
	f := fireOf(&runs[0], time.Time{}, 0)
	f.job = job.Definition()
	if len(m.Addresses) > 0 {
		override := slices.Clone(m.Addresses)
		slices.Sort(override)
		f.fixed = &fixedRoute{override: slices.Compact(override)}
	}
	d.cfg.Metrics.FiresClaimed(1)
	p, err := d.router.plan(ctx, []*fire{&f})
	if err != nil {
		return nil, err
	}
	if p.fires, err = d.route(ctx, p.fires); err != nil {
		if errors.Is(err, store.ErrLeaseLost) {
			// The runs are claimed in this admin's name: the admin that
			// adopts it sends them (they were never routed, so never sent).
			d.cfg.Logger.Warn("trigger: this admin's lease ran out while it triggered a job; the admin that adopts it sends the runs", "runs", p.ids)
			return p.ids, nil
		}
		return nil, err
	}
	return p.ids, d.completer.record(ctx, append(p.failed, d.sendNow(ctx, d.calls(p.fires, time.Time{}))...)...)
}

// claimCapped stores run, a manual fire of a job with a concurrency cap,
// as a pending run and claims it at once if a slot of the cap is free. It
// returns the run's ID and the run claimed, or none when it waits for a
// slot (handed on when a run of the job settles) or was skipped under
// DISCARD_LATER.
func (d *Dispatcher) claimCapped(ctx context.Context, run store.Run) (int64, []store.Run, error) {
	run.Status, run.TriggeredAt = carillonv1.RunStatus_RUN_STATUS_PENDING, time.Time{}
	pending, err := d.cfg.Store.Runs.Insert(ctx, []store.Run{run})
	if err != nil {
		return 0, nil, err
	}
	id := pending[0].ID
	claimed, err := d.cfg.Store.Fires.ClaimRuns(ctx, []store.RunClaim{{RunID: id, JobID: run.JobID, TriggerType: run.TriggerType}}, run.DueAt)
	return id, claimed, err
}

// triggerAt stores the pending run of TriggerJob with m.RunAt and queues
// it on the scheduler.
func (d *Dispatcher) triggerAt(ctx context.Context, job store.Job, m Manual) ([]int64, error) {
	if len(m.Addresses) > 0 {
		return nil, errors.New("trigger: a run at a later instant cannot have addresses")
	}
	at := m.RunAt.Truncate(time.Millisecond) // what the store keeps
	run := store.Run{
		JobID: job.ID, GroupID: job.GroupID, Handler: job.Handler, Param: job.Param, ShardTotal: 1,
		TriggerType: cmp.Or(m.TriggerType, carillonv1.TriggerType_TRIGGER_TYPE_MANUAL),
		ScheduledAt: at, DueAt: at, Status: carillonv1.RunStatus_RUN_STATUS_PENDING,
	}
	if m.Param != nil {
		run.Param = *m.Param
	}
	runs, err := d.cfg.Store.Runs.Insert(ctx, []store.Run{run})
	if err != nil {
		return nil, err
	}
	d.cfg.Queue.Enqueue(runs...)
	return []int64{runs[0].ID}, nil
}

// Requeue hands pending runs to the scheduler again: those waiting for a
// concurrency slot after their job's or group's cap changed (each claim
// takes a slot if one is free now), and those a paused group's claims
// left pending, when it resumes.
func (d *Dispatcher) Requeue(runs []store.Run) {
	if len(runs) > 0 {
		d.cfg.Queue.Enqueue(runs...)
	}
}

// Executors returns the sorted executor addresses of group g: the live
// registered ones for AUTO, the configured ones for MANUAL.
func (d *Dispatcher) Executors(ctx context.Context, g store.Group) ([]string, error) {
	return d.router.executors(ctx, g)
}
