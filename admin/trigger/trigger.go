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
}

// Trigger dispatches fires. It is safe for concurrent use.
type Trigger struct {
	cfg        Config
	executors  *executors
	strategies map[carillonv1.RouteStrategy]route.Strategy
	sem        chan struct{}
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
		sem:        make(chan struct{}, cfg.MaxInFlight),
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
	return t, nil
}

// Fire dispatches the pending run of a queued fire. It returns at once;
// Wait waits for the dispatches it started.
func (t *Trigger) Fire(e schedule.Entry) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		t.sem <- struct{}{}
		defer func() { <-t.sem }()
		ctx, cancel := context.WithTimeout(context.Background(), t.cfg.DispatchTimeout+5*time.Second)
		defer cancel()
		if err := t.fire(ctx, e); err != nil {
			t.cfg.Logger.Error("trigger: fire", "run", e.RunID, "err", err)
		}
	}()
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
		ScheduledAt: now, TriggeredAt: now, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING,
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
	return ids, t.cfg.Store.RecordDispatches(ctx, ds)
}

// send calls ExecutorService.Run for one run.
func (t *Trigger) send(ctx context.Context, job store.Job, run store.Run, address, source, routing string) store.Dispatch {
	d := store.Dispatch{RunID: run.ID, ExecutorAddress: address, ShardIndex: run.ShardIndex, ShardTotal: run.ShardTotal}
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
	return t.cfg.Store.RecordDispatches(ctx, []store.Dispatch{{
		RunID: run.ID, ShardIndex: run.ShardIndex, ShardTotal: run.ShardTotal, TriggerMessage: "not dispatched",
		Failed: true, Message: msg, FinishedAt: t.cfg.NowFunc(),
	}})
}

// describe turns a Connect error into words a person can act on.
func describe(err error) string {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return fmt.Sprintf("%s: %s", ce.Code(), ce.Message())
	}
	return err.Error()
}
