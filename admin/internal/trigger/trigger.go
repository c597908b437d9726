// Package trigger carries fires from "due" to "dispatched": it routes each
// fire to executors of its job's group, sends the runs to them (one
// RunBatch call per executor for the fires of one instant) and records how
// each run was routed, or why it failed. It also settles runs: results,
// and the runs whose result will not come (Monitor).
package trigger

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/route"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

const (
	// ExecutorTTLDefault is how long an executor stays live after its last heartbeat.
	ExecutorTTLDefault = 90 * time.Second
	// DispatchTimeoutDefault bounds one ExecutorService.Run call.
	DispatchTimeoutDefault = 10 * time.Second
	// MaxInFlightDefault bounds the dispatches running at once.
	MaxInFlightDefault = 256
)

// Config configures a Trigger.
type Config struct {
	// Store holds jobs and runs. Required.
	Store *store.Store
	// Token is the global executor access token, sent to executors as
	// "Authorization: Bearer <token>" (empty sends none), except to the
	// executors of groups with their own token (Store.GroupTokens), which
	// get theirs.
	Token string
	// HTTPClient calls executors. Defaults to a client with keep-alive
	// connections tuned for many small calls.
	HTTPClient *http.Client
	// TLSClientConfig is the default HTTPClient's TLS configuration for
	// executors served over https: set RootCAs to trust a private CA.
	// Ignored when HTTPClient is set. Defaults to nil: the system's roots.
	TLSClientConfig *tls.Config
	// ExecutorTTL defaults to ExecutorTTLDefault.
	ExecutorTTL time.Duration
	// DispatchTimeout defaults to DispatchTimeoutDefault.
	DispatchTimeout time.Duration
	// MaxInFlight defaults to MaxInFlightDefault.
	MaxInFlight int
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// NowFunc defaults to time.Now.
	NowFunc func() time.Time
	// FollowUp decides what follows a settled run: retries, alarms, child
	// jobs, FIX_DELAY's next fire. Defaults to followup.Policy{}.
	FollowUp store.Policy
	// EnqueueFunc hands pending runs created by settling (retries and child
	// jobs' runs) to the scheduler. Required.
	EnqueueFunc func(runs ...store.Run)
	// WakeFunc asks the scheduler to scan now: settling gave a FIX_DELAY
	// job its next fire. Optional.
	WakeFunc func()
	// Started is when this admin process started. Defaults to NowFunc() at
	// New.
	Started time.Time
	// LastBeat is the newest executor heartbeat in the store when the admin
	// started (store.LastBeat): about when the previous admin process
	// stopped hearing executors. Until a heartbeat period has passed since
	// Started, executors live then count as live, so an admin outage does
	// not make live executors lost.
	LastBeat time.Time
	// LastRunID is the largest run ID when the admin started
	// (store.MaxRunID): runs up to it were claimed by earlier admin
	// processes, and Reconcile settles those they may not have sent.
	LastRunID int64
}

// Trigger dispatches fires. It is safe for concurrent use.
type Trigger struct {
	cfg        Config
	executors  *executors
	strategies map[carillonv1.RouteStrategy]route.Strategy
	fast, slow *pool
	slowJobs   slowJobs
	wg         inflight
	// The three writes of the fire path, each coalesced: claims of due
	// runs, records of dispatches, results from executors.
	writer  writer
	claims  *coalescer[schedule.Entry]
	records *coalescer[store.Dispatch]
	results *coalescer[store.Result]
	// deferred holds the dispatches of scheduled fires until their
	// results come, to be recorded with them.
	deferred *deferredRecords

	sourcesMu sync.Mutex
	sources   map[int64]cachedSource // by group ID

	tokens *auth.ExecutorTokens

	restartsMu sync.Mutex
	restarts   map[string]time.Time // executor addresses whose process restarted, and when it registered
	manual     manualProbes         // executors of MANUAL groups that hold runs
}

// ExecutorTokens returns the executor access tokens the trigger sends,
// which the admin's RegistryService checks: update them (Set) when a
// group's token changes.
func (t *Trigger) ExecutorTokens() *auth.ExecutorTokens { return t.tokens }

// New returns a Trigger.
func New(cfg Config) (*Trigger, error) {
	cfg.ExecutorTTL = cmp.Or(cfg.ExecutorTTL, ExecutorTTLDefault)
	cfg.DispatchTimeout = cmp.Or(cfg.DispatchTimeout, DispatchTimeoutDefault)
	cfg.MaxInFlight = cmp.Or(cfg.MaxInFlight, MaxInFlightDefault)
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	if cfg.NowFunc == nil {
		cfg.NowFunc = time.Now
	}
	if cfg.FollowUp == nil {
		cfg.FollowUp = followup.Policy{}
	}
	if cfg.WakeFunc == nil {
		cfg.WakeFunc = func() {}
	}
	if cfg.Started.IsZero() {
		cfg.Started = cfg.NowFunc()
	}
	tokens := auth.NewExecutorTokens(cfg.Token)
	groupTokens, err := cfg.Store.GroupTokens(context.Background())
	if err != nil {
		return nil, fmt.Errorf("trigger: %w", err)
	}
	tokens.Set(groupTokens)
	t := &Trigger{
		cfg:        cfg,
		tokens:     tokens,
		executors:  newExecutors(cfg.HTTPClient, cfg.TLSClientConfig, tokens),
		restarts:   map[string]time.Time{},
		strategies: map[carillonv1.RouteStrategy]route.Strategy{},
		sources:    map[int64]cachedSource{},
		fast:       newPool("fast", cfg.MaxInFlight),
		slow:       newPool("slow", max(cfg.MaxInFlight/2, 1)),
	}
	for v, name := range carillonv1.RouteStrategy_name {
		if v == 0 {
			continue
		}
		s, err := route.New(strings.TrimPrefix(name, "ROUTE_STRATEGY_"), t.executors)
		if err != nil {
			return nil, fmt.Errorf("trigger: %w", err)
		}
		t.strategies[carillonv1.RouteStrategy(v)] = s
	}
	t.strategies[carillonv1.RouteStrategy_ROUTE_STRATEGY_UNSPECIFIED] = t.strategies[carillonv1.RouteStrategy_ROUTE_STRATEGY_FIRST]
	if t.cfg.EnqueueFunc == nil {
		return nil, errors.New("trigger: Config.EnqueueFunc is required")
	}
	// Claims first, at once: fires wait for nothing else. Records and
	// results linger a little to share transactions, and a batch of them
	// holds the writer for a few milliseconds at most.
	t.writer = writer{wg: &t.wg, now: time.Now, wake: make(chan struct{}, 1)}
	t.claims = newCoalescer(&t.writer, batchMax, 0, t.claim)
	t.records = newCoalescer(&t.writer, batchMax, recordLinger, t.recordNow)
	t.results = newCoalescer(&t.writer, batchMax, resultLinger, t.settleNow)
	t.deferred = newDeferredRecords(t.recordLater, cfg.NowFunc)
	return t, nil
}

const (
	// writeTimeout bounds one coalesced write.
	writeTimeout = 30 * time.Second
	// recordLinger is how long a dispatch record may wait for others to
	// share its transaction (TriggerJob waits for it).
	recordLinger = 5 * time.Millisecond
	// resultLinger is the same for results; executors wait for it. It is
	// longer than recordLinger, so that a run's dispatch is usually
	// recorded before its result settles it (the "run finished" line then
	// names its executor).
	resultLinger = 10 * time.Millisecond
)

// Settle records results of running runs (see store.SettleRuns), with
// their dispatches when those were not recorded yet, and hands the retries
// and child runs it creates to the scheduler. Results that arrive together
// are settled in one transaction.
func (t *Trigger) Settle(ctx context.Context, results []store.Result) error {
	results, taken := t.deferred.attach(results)
	select {
	case err := <-t.results.add(results):
		if err != nil && len(taken) > 0 {
			t.deferred.hold(taken) // the executor will report again
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
	t.followUp(settled)
	return nil
}

// followUp logs settled runs and queues their follow-ups.
func (t *Trigger) followUp(s store.Settled) {
	for _, r := range s.Runs {
		t.cfg.Logger.Info("run finished", "run", r.ID, "job", r.JobID, "status", r.Status.String(),
			"attempt", r.Attempt, "executor", r.ExecutorAddress, "message", r.Message)
	}
	if len(s.FollowUps) > 0 {
		t.cfg.EnqueueFunc(s.FollowUps...)
	}
	if s.Rescheduled {
		t.cfg.WakeFunc()
	}
}

// batchMax bounds the runs one dispatch batch handles: one job query, one
// RunBatch call per executor, and about the fires one claim takes.
const batchMax = 256

// Fire dispatches the runs of fires whose instant has come (or comes
// soon: each is sent at its entry's At). It returns at once; Wait waits for
// the dispatches it started. Runs the scan claimed already (Entry.Run) go
// straight to dispatch; pending ones are claimed (PENDING to RUNNING)
// first, together with those that came due while the previous claim ran.
// Runs are dispatched in batches, concurrently, in a bounded pool; a job
// whose dispatches were slow more than 10 times this minute uses a
// separate slow pool, so a slow or dead executor cannot hold up fires to
// healthy ones. When a pool is overloaded its fires fail at once with the
// reason: a fire is never dropped silently.
func (t *Trigger) Fire(es []schedule.Entry) {
	var pending []schedule.Entry
	cs := make([]claimed, 0, len(es))
	for _, e := range es {
		if e.Run != nil {
			cs = append(cs, claimed{run: *e.Run, at: e.At, stopSeq: e.StopSeq})
		} else {
			pending = append(pending, e)
		}
	}
	t.dispatchClaimed(cs)
	for len(pending) > 0 {
		n := min(len(pending), batchMax)
		t.claims.add(pending[:n:n])
		pending = pending[n:]
	}
}

// claim claims the pending runs of es (those still pending: a job stopped
// or changed since its fires were read ahead has none) and starts their
// dispatches, which send each run at its entry's instant.
func (t *Trigger) claim(es []schedule.Entry) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	now := t.cfg.NowFunc()
	seq := t.cfg.Store.StopSeq()
	runs, err := t.cfg.Store.ClaimRuns(ctx, claims(es), now)
	if err != nil {
		t.cfg.Logger.Error("trigger: claim due runs; the monitor will settle them", "runs", len(es), "err", err)
		return err
	}
	at := make(map[int64]time.Time, len(es))
	for _, e := range es {
		at[e.RunID] = e.At
	}
	cs := make([]claimed, len(runs))
	for i, r := range runs {
		cs[i] = claimed{run: r, at: at[r.ID], stopSeq: seq}
	}
	t.dispatchClaimed(cs)
	return nil
}

// dispatchClaimed starts the dispatches of claimed runs, in batches, in
// the fast pool or, for jobs that were slow lately, the slow one.
func (t *Trigger) dispatchClaimed(cs []claimed) {
	now := t.cfg.NowFunc()
	fast := make([]claimed, 0, len(cs))
	var slow []claimed
	for _, c := range cs {
		if t.slowJobs.slow(c.run.JobID, now) {
			slow = append(slow, c)
		} else {
			fast = append(fast, c)
		}
	}
	for _, part := range []struct {
		p  *pool
		cs []claimed
	}{{t.fast, fast}, {t.slow, slow}} {
		for len(part.cs) > 0 {
			n := min(len(part.cs), batchMax)
			t.start(part.p, part.cs[:n:n])
			part.cs = part.cs[n:]
		}
	}
}

// claimed is a run claimed for dispatch at instant at, with the stop
// sequence (store.StopSeq) read before its claim.
type claimed struct {
	run     store.Run
	at      time.Time
	stopSeq uint64
}

// start dispatches one batch of claimed runs on its own goroutine, in pool p.
func (t *Trigger) start(p *pool, cs []claimed) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 2*t.cfg.DispatchTimeout+5*time.Second)
		defer cancel()
		var err error
		// The runs are claimed: a bounded wait for a slot keeps them from
		// looking half-dispatched to the monitor.
		if p.acquire(t.cfg.DispatchTimeout) {
			err = t.fire(ctx, cs)
			p.release()
		} else {
			err = t.refuse(ctx, cs, fmt.Sprintf("admin overloaded: more than %d dispatch batches waiting in the %s pool, or none free for %s; not dispatched",
				p.maxWaiting, p.name, t.cfg.DispatchTimeout))
		}
		if err != nil {
			t.cfg.Logger.Error("trigger: fire", "runs", len(cs), "err", err)
		}
	}()
}

// Wait waits for every dispatch started by Fire, and every write queued, to
// finish, recording the dispatches still waiting for their results.
func (t *Trigger) Wait() {
	t.wg.Wait()
	t.deferred.flushAll()
	t.wg.Wait()
}

func claims(es []schedule.Entry) []store.RunClaim {
	cs := make([]store.RunClaim, len(es))
	for i, e := range es {
		cs[i] = store.RunClaim{RunID: e.RunID, TriggerType: e.TriggerType, SendAt: e.At}
	}
	return cs
}

// refuse fails claimed runs that cannot be dispatched.
func (t *Trigger) refuse(ctx context.Context, cs []claimed, msg string) error {
	t.cfg.Logger.Warn("trigger: runs not dispatched", "runs", len(cs), "reason", msg)
	ds := make([]store.Dispatch, len(cs))
	for i, c := range cs {
		ds[i] = failed(c.run, msg, t.cfg.NowFunc())
	}
	return t.record(ctx, ds...)
}

// fire reads the jobs of claimed runs and routes them, then sends the runs
// of each instant on that instant, except those whose job was stopped
// since their claim.
func (t *Trigger) fire(ctx context.Context, cs []claimed) error {
	ids := make([]int64, 0, len(cs))
	for _, c := range cs {
		ids = append(ids, c.run.JobID)
	}
	jobs, err := t.cfg.Store.JobDefinitions(ctx, ids)
	if err != nil {
		return errors.Join(err, t.refuse(ctx, cs, fmt.Sprintf("read the jobs: %v", err)))
	}
	byInstant := map[time.Time][]claimed{}
	for _, c := range cs {
		byInstant[c.at] = append(byInstant[c.at], c)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(byInstant))
	for at, group := range byInstant {
		wg.Go(func() { errs <- t.fireAt(ctx, at, group, jobs) })
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		err = errors.Join(err, e)
	}
	return err
}

// fireAt routes claimed runs, waits for instant at, and sends them, except
// those whose job was stopped since their claim: those are settled SKIPPED.
func (t *Trigger) fireAt(ctx context.Context, at time.Time, cs []claimed, jobs map[int64]store.Job) error {
	seqs := make(map[int64]uint64, len(cs)) // by job: the stop sequence before its earliest claim here
	for _, c := range cs {
		if s, ok := seqs[c.run.JobID]; !ok || c.stopSeq < s {
			seqs[c.run.JobID] = c.stopSeq
		}
	}
	var skipped []store.Result
	skip := func(r store.Run) {
		skipped = append(skipped, store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_SKIPPED,
			Message: "the job was stopped or deleted before this fire's instant; not dispatched", FinishedAt: t.cfg.NowFunc()})
	}
	fires := make([]fire, 0, len(cs))
	for _, c := range cs {
		job, ok := jobs[c.run.JobID]
		if !ok && t.cfg.Store.StoppedSince(c.run.JobID, c.stopSeq) {
			skip(c.run) // deleted since the claim
			continue
		}
		fires = append(fires, fire{run: c.run, job: job})
	}
	p, err := t.plan(ctx, fires)
	if err != nil {
		return err
	}
	calls := t.calls(p.sends) // everything but the calls themselves, before the instant
	if d := time.Until(at); d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
		}
	}
	for i, c := range calls {
		calls[i] = c.without(func(s send) bool {
			if !t.cfg.Store.StoppedSince(s.job.ID, seqs[s.job.ID]) {
				return false
			}
			skip(s.run)
			return true
		})
	}
	err = t.record(ctx, append(p.failed, t.callAll(ctx, calls, true)...)...)
	if len(skipped) > 0 {
		err = errors.Join(err, t.Settle(ctx, skipped))
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
}

// TriggerJob runs job once now and returns the IDs of the runs it created
// (one, or one per shard). It waits for the dispatch, so each run's status
// says whether an executor accepted it.
func (t *Trigger) TriggerJob(ctx context.Context, job store.Job, m Manual) ([]int64, error) {
	now := t.cfg.NowFunc()
	run := store.Run{
		JobID: job.ID, GroupID: job.GroupID, Handler: job.Handler, Param: job.Param, ShardTotal: 1,
		TriggerType: cmp.Or(m.TriggerType, carillonv1.TriggerType_TRIGGER_TYPE_MANUAL),
		ScheduledAt: now, DueAt: now, TriggeredAt: now, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING,
	}
	if m.Param != nil {
		run.Param = *m.Param
	}
	runs, err := t.cfg.Store.InsertRuns(ctx, []store.Run{run})
	if err != nil {
		return nil, err
	}
	var override []string
	if len(m.Addresses) > 0 {
		override = slices.Clone(m.Addresses)
		slices.Sort(override)
		override = slices.Compact(override)
	}
	return t.dispatch(ctx, []fire{{run: runs[0], job: job, override: override}})
}

// Executors returns the sorted executor addresses of group g: the live
// registered ones for AUTO, the configured ones for MANUAL.
func (t *Trigger) Executors(ctx context.Context, g store.Group) ([]string, error) {
	if g.AddressMode == carillonv1.AddressMode_ADDRESS_MODE_MANUAL {
		addrs := slices.Clone(g.Addresses)
		slices.Sort(addrs)
		return slices.Compact(addrs), nil
	}
	return t.cfg.Store.Executors(ctx, g.AppName, t.liveSince(t.cfg.NowFunc()))
}

// restartGrace is how long after the admin starts executors are judged by
// the beats the previous admin process heard: a heartbeat period (30 s)
// plus a margin. Every live executor has beaten since by then.
const restartGrace = 45 * time.Second

// liveSince returns the oldest heartbeat at now of an executor that is
// live: one ExecutorTTL ago, or, during the restartGrace after the admin
// started, one ExecutorTTL before the last beat the previous admin process
// heard. Liveness is judged from beats received since the admin came up,
// never from the admin's own downtime.
func (t *Trigger) liveSince(now time.Time) time.Time {
	since := now.Add(-t.cfg.ExecutorTTL)
	if before := t.cfg.LastBeat.Add(-t.cfg.ExecutorTTL); !t.cfg.LastBeat.IsZero() && now.Before(t.cfg.Started.Add(restartGrace)) && before.Before(since) {
		since = before
	}
	return since
}

// fire is one running run to dispatch, with its job.
type fire struct {
	run      store.Run
	job      store.Job // zero if the job was deleted
	override []string  // executors to route among instead of the group's
}

// send is one run routed to an executor.
type send struct {
	run     store.Run
	job     store.Job
	address string
	note    string // how it was routed
}

// dispatch routes fires (running runs) and sends them at once: see plan
// and calls. It returns the IDs of all runs of the fires.
func (t *Trigger) dispatch(ctx context.Context, fires []fire) ([]int64, error) {
	p, err := t.plan(ctx, fires)
	if err != nil {
		return nil, err
	}
	return p.ids, t.record(ctx, append(p.failed, t.callAll(ctx, t.calls(p.sends), false)...)...)
}

// dispatchPlan is fires routed and ready to send.
type dispatchPlan struct {
	failed []store.Dispatch // fires that cannot be sent, and why
	sends  []send
	ids    []int64 // every run of the fires, extra shards included
}

// plan routes fires (running runs) and creates the extra shard runs of
// broadcasts, so that sending them is all that is left.
func (t *Trigger) plan(ctx context.Context, fires []fire) (dispatchPlan, error) {
	var ds []store.Dispatch
	var sends []send
	var shardRuns []store.Run
	var shardOf []send          // the template of each extra shard run, in shardRuns order
	totals := map[int64]int32{} // first runs of broadcasts: their shard totals
	now := t.cfg.NowFunc()
	sources := map[int64]source{}
	for _, f := range fires {
		if f.job.ID == 0 {
			ds = append(ds, failed(f.run, fmt.Sprintf("job %d was deleted", f.run.JobID), now))
			continue
		}
		src, ok := sources[f.job.GroupID]
		if !ok {
			src = t.source(ctx, f.job.GroupID)
			sources[f.job.GroupID] = src
		}
		if src.err == nil && f.override != nil {
			src = overridden(src, f.override)
		}
		if src.err != nil {
			ds = append(ds, failed(f.run, src.err.Error(), now))
			continue
		}
		pick, err := t.strategies[f.job.RouteStrategy].Pick(forGroup(ctx, f.job.GroupID), f.job.ID, src.addrs)
		if err != nil {
			ds = append(ds, failed(f.run, fmt.Sprintf("%v (executors from %s)", err, src.name), now))
			continue
		}
		note := "executors from " + src.name + "; " + pick.Message
		addrs := pick.Addresses
		if (f.run.TriggerType == carillonv1.TriggerType_TRIGGER_TYPE_RETRY || f.run.ShardTotal > 1) && len(addrs) > 1 {
			// A retry re-runs one shard of a broadcast, and so does a
			// shard an earlier admin process left unsent (Reconcile):
			// shard i goes to the i-th executor, or the first if the group
			// shrank.
			i := int(f.run.ShardIndex)
			if i >= len(addrs) {
				i = 0
			}
			addrs = addrs[i : i+1]
			note += fmt.Sprintf("; shard %d of %d of an earlier fire", f.run.ShardIndex, f.run.ShardTotal)
		}
		first := f.run
		if len(addrs) > 1 {
			first.ShardTotal = int32(len(addrs))
			totals[first.ID] = first.ShardTotal
			for i := 1; i < len(addrs); i++ {
				r := f.run
				r.ID, r.ShardIndex, r.ShardTotal = 0, int32(i), int32(len(addrs))
				shardRuns = append(shardRuns, r)
				shardOf = append(shardOf, send{job: f.job, address: addrs[i], note: note})
			}
		}
		sends = append(sends, send{run: first, job: f.job, address: addrs[0], note: note})
	}
	var stored []store.Run
	if len(shardRuns) > 0 {
		if err := t.cfg.Store.SetShardTotals(ctx, totals); err != nil {
			return dispatchPlan{}, err
		}
		var err error
		if stored, err = t.cfg.Store.InsertRuns(ctx, shardRuns); err != nil {
			return dispatchPlan{}, err
		}
		for i, r := range stored {
			s := shardOf[i]
			s.run = r
			sends = append(sends, s)
		}
	}
	ids := make([]int64, 0, len(fires)+len(stored))
	for _, f := range fires {
		ids = append(ids, f.run.ID)
	}
	for _, r := range stored {
		ids = append(ids, r.ID)
	}
	return dispatchPlan{failed: ds, sends: sends, ids: ids}, nil
}

// overridden returns the executors of override, a request's addresses, as
// the source to route among. Each must be one of src's, the group's: the
// admin sends a run, and its group's token, only to the group's executors.
func overridden(src source, override []string) source {
	for _, a := range override {
		if _, found := slices.BinarySearch(src.addrs, a); !found {
			return source{err: fmt.Errorf("not sent: %s, an address of the request, is not an executor of %s now", a, src.name)}
		}
	}
	return source{name: "the request's addresses, of " + src.name, addrs: override}
}

// source is where a group's executors come from.
type source struct {
	name  string
	addrs []string
	err   error
}

// sourceTTL bounds how long a group's executors are cached: registrations
// expire with time, which RoutingVersion does not see.
const sourceTTL = time.Second

// cachedSource is a group's source as read at a routing version.
type cachedSource struct {
	src     source
	version int64
	at      time.Time
}

// source returns where group groupID's executors come from, cached while
// no group or registration changed, for at most sourceTTL.
func (t *Trigger) source(ctx context.Context, groupID int64) source {
	version, now := t.cfg.Store.RoutingVersion(), t.cfg.NowFunc()
	t.sourcesMu.Lock()
	c, ok := t.sources[groupID]
	t.sourcesMu.Unlock()
	if ok && c.version == version && now.Sub(c.at) < sourceTTL {
		return c.src
	}
	src := t.readSource(ctx, groupID)
	if src.err == nil {
		t.sourcesMu.Lock()
		t.sources[groupID] = cachedSource{src: src, version: version, at: now}
		t.sourcesMu.Unlock()
	}
	return src
}

// readSource reads where group groupID's executors come from.
func (t *Trigger) readSource(ctx context.Context, groupID int64) source {
	g, err := t.cfg.Store.Group(ctx, groupID)
	if err != nil {
		return source{err: fmt.Errorf("group %d: %w", groupID, err)}
	}
	src := source{name: fmt.Sprintf("group %s (%s)", g.AppName, strings.TrimPrefix(g.AddressMode.String(), "ADDRESS_MODE_"))}
	if src.addrs, err = t.Executors(ctx, g); err != nil {
		src.err = fmt.Errorf("executors of %s: %w", src.name, err)
	}
	return src
}

// call is the runs of one call to one executor (Run for one run, RunBatch
// for more, or one Run per run to an executor that does not serve
// RunBatch), ready to send: requests built and dispatch records written.
type call struct {
	address string
	group   int64  // the group of every run of the call, whose token it carries
	db      string // the database ID every request carries
	sends   []send
	reqs    []*carillonv1.RunRequest
	ds      []store.Dispatch // how each run was dispatched, as recorded if the call succeeds
}

// calls groups sends by executor, one call each, and prepares the calls:
// a scheduled fire's are prepared before its instant, so that on the
// instant only the calls are left to make.
func (t *Trigger) calls(sends []send) []*call {
	type key struct {
		address string
		group   int64
	}
	byAddr := map[key]*call{}
	var calls []*call
	for _, s := range sends {
		k := key{s.address, s.job.GroupID}
		c := byAddr[k]
		if c == nil {
			c = &call{address: s.address, group: s.job.GroupID, db: t.cfg.Store.DatabaseID()}
			byAddr[k] = c
			calls = append(calls, c)
		}
		c.sends = append(c.sends, s)
	}
	for _, c := range calls {
		c.prepare()
	}
	return calls
}

// prepare builds c's requests and dispatch records from its sends.
func (c *call) prepare() {
	c.reqs = make([]*carillonv1.RunRequest, len(c.sends))
	c.ds = make([]store.Dispatch, len(c.sends))
	for i, s := range c.sends {
		c.reqs[i] = runRequest(s.job, s.run, c.db)
		c.ds[i] = store.Dispatch{RunID: s.run.ID, ExecutorAddress: c.address, ShardIndex: s.run.ShardIndex, ShardTotal: s.run.ShardTotal,
			TimeoutSeconds: s.job.TimeoutSeconds, TriggerMessage: fmt.Sprintf("%s; shard %d of %d; sent to %s (%d runs in the call)",
				s.note, s.run.ShardIndex, s.run.ShardTotal, c.address, len(c.sends))}
	}
}

// without returns c without the sends for which drop is true.
func (c *call) without(drop func(send) bool) *call {
	kept := slices.DeleteFunc(slices.Clone(c.sends), drop)
	if len(kept) == len(c.sends) {
		return c
	}
	out := &call{address: c.address, db: c.db, sends: kept}
	out.prepare()
	return out
}

// callAll makes calls, all executors at once, and returns each run's
// dispatch outcome, or with lazy, each failed run's: the successful ones
// are held (deferredRecords).
func (t *Trigger) callAll(ctx context.Context, calls []*call, lazy bool) []store.Dispatch {
	var mu sync.Mutex
	var ds []store.Dispatch
	var wg sync.WaitGroup
	for _, c := range calls {
		if len(c.sends) == 0 {
			continue
		}
		wg.Go(func() {
			out := t.callOne(ctx, c, lazy)
			mu.Lock()
			ds = append(ds, out...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return ds
}

// callOne makes call c. With lazy, its runs' dispatches are held before
// the call (so that a result coming back at once finds its dispatch), and
// only the failed ones are returned.
func (t *Trigger) callOne(ctx context.Context, c *call, lazy bool) []store.Dispatch {
	// The runs are sent now: a run sent in another millisecond than the
	// triggered_at its claim stored (sent late, or a manual run routed
	// slowly) records when it really was.
	start := t.cfg.NowFunc()
	for i, s := range c.sends {
		if start.UnixMilli() != s.run.TriggeredAt.UnixMilli() {
			c.ds[i].TriggeredAt = start
		}
	}
	if lazy {
		t.deferred.hold(slices.Clone(c.ds))
	}
	ctx, cancel := context.WithTimeout(forGroup(ctx, c.group), t.cfg.DispatchTimeout)
	defer cancel()
	outcomes := make([]error, len(c.reqs))
	var callErr error
	switch {
	case len(c.reqs) == 1:
		_, callErr = t.executors.client(c.address).Run(ctx, c.reqs[0])
	case t.executors.batchless(c.address, start):
		t.runEach(ctx, c, outcomes)
	default:
		var res *carillonv1.RunBatchResponse
		res, callErr = t.executors.client(c.address).RunBatch(ctx, &carillonv1.RunBatchRequest{Runs: c.reqs})
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
				outcomes[i] = fmt.Errorf("%s: %s", o.Code, o.Message)
			}
		}
	}
	took := t.cfg.NowFunc().Sub(start).Round(time.Microsecond)
	tookNote := fmt.Sprintf("; the call took %s", took)
	ds := c.ds // the call is made once: its records are final now
	failed := ds[:0:0]
	for i, s := range c.sends {
		t.slowJobs.observe(s.job.ID, took, start)
		d := &ds[i]
		d.TriggerMessage += tookNote
		err := cmp.Or(callErr, outcomes[i])
		if err == nil {
			if lazy {
				t.deferred.update(d.RunID, func(h *store.Dispatch) { h.TriggerMessage = d.TriggerMessage })
			}
			continue
		}
		if lazy {
			t.deferred.release(d.RunID)
		}
		d.Failed, d.FinishedAt = true, t.cfg.NowFunc()
		d.Message = fmt.Sprintf("executor %s refused or did not answer: %s", c.address, describe(err))
		d.TriggerMessage += "; failed"
		failed = append(failed, *d)
	}
	if lazy {
		return failed
	}
	return ds
}

// runEachMax bounds the concurrent Run calls to one executor that does not
// serve RunBatch.
const runEachMax = 16

// runEach sends c's runs with one Run call each, at most runEachMax at a
// time, and sets each run's outcome.
func (t *Trigger) runEach(ctx context.Context, c *call, outcomes []error) {
	client := t.executors.client(c.address)
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
// with ID db.
func runRequest(job store.Job, run store.Run, db string) *carillonv1.RunRequest {
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

// record stores dispatch outcomes and follows up on the runs they failed.
// Outcomes recorded at the same time share one transaction.
func (t *Trigger) record(ctx context.Context, ds ...store.Dispatch) error {
	if len(ds) == 0 {
		return nil
	}
	select {
	case err := <-t.records.add(ds):
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// recordNow records dispatch outcomes in one transaction.
func (t *Trigger) recordNow(ds []store.Dispatch) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	settled, err := t.cfg.Store.RecordDispatches(ctx, t.cfg.FollowUp, ds)
	if err != nil {
		return err
	}
	t.followUp(settled)
	return nil
}

// recordLater records dispatches held for their results too long, in
// batches, without waiting for the writes.
func (t *Trigger) recordLater(ds []store.Dispatch) {
	for len(ds) > 0 {
		n := min(len(ds), batchMax)
		done := t.records.add(ds[:n:n])
		ds = ds[n:]
		t.wg.Go(func() {
			if err := <-done; err != nil {
				t.cfg.Logger.Error("trigger: record dispatches", "runs", n, "err", err)
			}
		})
	}
}

// failed is the dispatch outcome of a run that could not be dispatched.
func failed(run store.Run, msg string, now time.Time) store.Dispatch {
	return store.Dispatch{
		RunID: run.ID, ShardIndex: run.ShardIndex, ShardTotal: run.ShardTotal, TriggerMessage: "not dispatched",
		Failed: true, Message: msg, FinishedAt: now,
	}
}

// describe turns a Connect error into words a person can act on.
func describe(err error) string {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return fmt.Sprintf("%s: %s", ce.Code(), ce.Message())
	}
	return err.Error()
}
