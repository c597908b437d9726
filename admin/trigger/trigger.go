// Package trigger carries one fire from "due" to "dispatched": it routes the
// fire to executors of the job's group, calls ExecutorService.Run on each and
// records how the run was routed, or why it failed.
package trigger

import (
	"cmp"
	"context"
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

	"github.com/carillonhq/carillon/admin/route"
	"github.com/carillonhq/carillon/admin/schedule"
	"github.com/carillonhq/carillon/admin/store"
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
	// Token is sent to executors as "Authorization: Bearer <token>"; empty sends none.
	Token string
	// HTTPClient calls executors. Defaults to a client with keep-alive
	// connections tuned for many small calls.
	HTTPClient *http.Client
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
	// EnqueueFunc hands pending runs created by settling (retries and child
	// jobs' runs) to the scheduler. Required.
	EnqueueFunc func(runs ...store.Run)
}

// Trigger dispatches fires. It is safe for concurrent use.
type Trigger struct {
	cfg        Config
	executors  *executors
	strategies map[carillonv1.RouteStrategy]route.Strategy
	fast, slow *pool
	slowJobs   slowJobs
	wg         sync.WaitGroup
}

// New returns a Trigger.
func New(cfg Config) (*Trigger, error) {
	cfg.ExecutorTTL = cmp.Or(cfg.ExecutorTTL, ExecutorTTLDefault)
	cfg.DispatchTimeout = cmp.Or(cfg.DispatchTimeout, DispatchTimeoutDefault)
	cfg.MaxInFlight = cmp.Or(cfg.MaxInFlight, MaxInFlightDefault)
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	if cfg.NowFunc == nil {
		cfg.NowFunc = time.Now
	}
	t := &Trigger{
		cfg:        cfg,
		executors:  newExecutors(cfg.HTTPClient, cfg.Token),
		strategies: map[carillonv1.RouteStrategy]route.Strategy{},
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
	return t, nil
}

// Settle records results of running runs (see store.SettleRuns) and hands
// the retries and child runs it creates to the scheduler.
func (t *Trigger) Settle(ctx context.Context, results []store.Result) error {
	settled, err := t.cfg.Store.SettleRuns(ctx, results)
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
}

// Fire dispatches the pending run of a queued fire. It returns at once;
// Wait waits for the dispatches it started. Dispatches run concurrently in
// a bounded pool; a job whose dispatches were slow more than 10 times this
// minute uses a separate slow pool, so a slow or dead executor cannot hold
// up fires to healthy ones. When a pool is overloaded the run fails at once
// with the reason: a fire is never dropped silently.
func (t *Trigger) Fire(e schedule.Entry) {
	p := t.fast
	if t.slowJobs.slow(e.JobID, t.cfg.NowFunc()) {
		p = t.slow
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), t.cfg.DispatchTimeout+5*time.Second)
		defer cancel()
		var err error
		if p.acquire() {
			err = t.fire(ctx, e)
			p.release()
		} else {
			err = t.refuse(ctx, e, fmt.Sprintf("admin overloaded: more than %d dispatches waiting in the %s pool; not dispatched", p.maxWaiting, p.name))
		}
		if err != nil {
			t.cfg.Logger.Error("trigger: fire", "run", e.RunID, "err", err)
		}
	}()
}

// refuse fails a pending run that cannot be dispatched.
func (t *Trigger) refuse(ctx context.Context, e schedule.Entry, msg string) error {
	run, ok, err := t.cfg.Store.ClaimRun(ctx, e.RunID, e.TriggerType, t.cfg.NowFunc())
	if err != nil || !ok {
		return err
	}
	return t.fail(ctx, run, msg)
}

// Wait waits for every dispatch started by Fire to finish.
func (t *Trigger) Wait() { t.wg.Wait() }

func (t *Trigger) fire(ctx context.Context, e schedule.Entry) error {
	run, ok, err := t.cfg.Store.ClaimRun(ctx, e.RunID, e.TriggerType, t.cfg.NowFunc())
	if err != nil || !ok {
		return err // !ok: the job was stopped or changed after the fire was read ahead
	}
	job, err := t.cfg.Store.Job(ctx, run.JobID)
	if err != nil {
		return t.fail(ctx, run, fmt.Sprintf("job %d: %v", run.JobID, err))
	}
	_, err = t.dispatch(ctx, job, run, nil)
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
	return t.dispatch(ctx, job, runs[0], m.Addresses)
}

// Executors returns the sorted executor addresses of group g: the live
// registered ones for AUTO, the configured ones for MANUAL.
func (t *Trigger) Executors(ctx context.Context, g store.Group) ([]string, error) {
	if g.AddressMode == carillonv1.AddressMode_ADDRESS_MODE_MANUAL {
		addrs := slices.Clone(g.Addresses)
		slices.Sort(addrs)
		return slices.Compact(addrs), nil
	}
	return t.cfg.Store.Executors(ctx, g.AppName, t.cfg.NowFunc().Add(-t.cfg.ExecutorTTL))
}

// dispatch routes run (a running run of job) and sends it, one run per
// shard for a broadcast, and records the outcome. It returns the IDs of
// every run of the fire.
func (t *Trigger) dispatch(ctx context.Context, job store.Job, run store.Run, override []string) ([]int64, error) {
	var addrs []string
	source := "override"
	if len(override) > 0 {
		addrs = slices.Clone(override)
		slices.Sort(addrs)
		addrs = slices.Compact(addrs)
	} else {
		g, err := t.cfg.Store.Group(ctx, job.GroupID)
		if err != nil {
			return []int64{run.ID}, t.fail(ctx, run, fmt.Sprintf("group %d: %v", job.GroupID, err))
		}
		source = fmt.Sprintf("group %s (%s)", g.AppName, strings.TrimPrefix(g.AddressMode.String(), "ADDRESS_MODE_"))
		if addrs, err = t.Executors(ctx, g); err != nil {
			return []int64{run.ID}, t.fail(ctx, run, fmt.Sprintf("executors of %s: %v", source, err))
		}
	}
	pick, err := t.strategies[job.RouteStrategy].Pick(ctx, job.ID, addrs)
	if err != nil {
		return []int64{run.ID}, t.fail(ctx, run, fmt.Sprintf("%v (executors from %s)", err, source))
	}
	if run.TriggerType == carillonv1.TriggerType_TRIGGER_TYPE_RETRY && len(pick.Addresses) > 1 {
		// A retry re-runs one shard of a broadcast: shard i goes to the i-th
		// executor, or the first if the group shrank.
		i := int(run.ShardIndex)
		if i >= len(pick.Addresses) {
			i = 0
		}
		pick.Addresses = pick.Addresses[i : i+1]
		pick.Message += fmt.Sprintf("; retry of shard %d of %d", run.ShardIndex, run.ShardTotal)
	}
	runs := []store.Run{run}
	if n := len(pick.Addresses); n > 1 {
		shards := make([]store.Run, n-1)
		for i := range shards {
			shards[i] = run
			shards[i].ID, shards[i].ShardIndex, shards[i].ShardTotal = 0, int32(i+1), int32(n)
		}
		more, err := t.cfg.Store.InsertRuns(ctx, shards)
		if err != nil {
			return []int64{run.ID}, t.fail(ctx, run, fmt.Sprintf("store shard runs: %v", err))
		}
		runs[0].ShardTotal = int32(n)
		runs = append(runs, more...)
	}
	ds := make([]store.Dispatch, len(runs))
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() { ds[i] = t.send(ctx, job, runs[i], pick.Addresses[i], source, pick.Message) })
	}
	wg.Wait()
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids, t.record(ctx, ds...)
}

// record stores dispatch outcomes and follows up on the runs they failed.
func (t *Trigger) record(ctx context.Context, ds ...store.Dispatch) error {
	settled, err := t.cfg.Store.RecordDispatches(ctx, ds)
	if err != nil {
		return err
	}
	t.followUp(settled)
	return nil
}

// send calls ExecutorService.Run for one run.
func (t *Trigger) send(ctx context.Context, job store.Job, run store.Run, address, source, routing string) store.Dispatch {
	d := store.Dispatch{RunID: run.ID, ExecutorAddress: address, ShardIndex: run.ShardIndex, ShardTotal: run.ShardTotal,
		TimeoutSeconds: job.TimeoutSeconds}
	req := &carillonv1.RunRequest{
		RunId: run.ID, JobId: job.ID, Handler: job.Handler, Param: run.Param, BlockStrategy: job.BlockStrategy,
		TimeoutSeconds: job.TimeoutSeconds, ShardIndex: run.ShardIndex, ShardTotal: run.ShardTotal,
		ScheduledAt: timestamppb.New(run.ScheduledAt),
	}
	if job.ScriptType != carillonv1.ScriptType_SCRIPT_TYPE_UNSPECIFIED {
		req.Script = &carillonv1.Script{Type: job.ScriptType, Source: job.ScriptSource, UpdatedAt: timestamppb.New(job.ScriptUpdatedAt)}
	}
	ctx, cancel := context.WithTimeout(ctx, t.cfg.DispatchTimeout)
	defer cancel()
	start := t.cfg.NowFunc()
	_, err := t.executors.client(address).Run(ctx, req)
	took := t.cfg.NowFunc().Sub(start).Round(time.Microsecond)
	t.slowJobs.observe(job.ID, took, start)
	d.TriggerMessage = fmt.Sprintf("executors from %s; %s; shard %d of %d; dispatch to %s took %s",
		source, routing, run.ShardIndex, run.ShardTotal, address, took)
	if err != nil {
		d.Failed, d.FinishedAt = true, t.cfg.NowFunc()
		d.Message = fmt.Sprintf("executor %s refused or did not answer: %s", address, describe(err))
		d.TriggerMessage += "; failed"
	}
	return d
}

// fail settles a running run that could not be dispatched.
func (t *Trigger) fail(ctx context.Context, run store.Run, msg string) error {
	t.cfg.Logger.Warn("trigger: run not dispatched", "run", run.ID, "job", run.JobID, "reason", msg)
	return t.record(ctx, store.Dispatch{
		RunID: run.ID, ShardIndex: run.ShardIndex, ShardTotal: run.ShardTotal, TriggerMessage: "not dispatched",
		Failed: true, Message: msg, FinishedAt: t.cfg.NowFunc(),
	})
}

// describe turns a Connect error into words a person can act on.
func describe(err error) string {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return fmt.Sprintf("%s: %s", ce.Code(), ce.Message())
	}
	return err.Error()
}
