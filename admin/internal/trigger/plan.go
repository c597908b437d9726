package trigger

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"

	"github.com/carillonhq/carillon/admin/internal/metrics"
	"github.com/carillonhq/carillon/admin/internal/store"
)

// routable is one running run to dispatch, with its job.
type routable struct {
	run      *store.Run
	job      *store.JobDefinition // nil if the job was deleted
	override []string             // executors to route among instead of the group's
	pin      string               // the one executor to send to, if not "" (claimedRun.pin)
}

// routed is one run routed to an executor. Its job is shared with the
// rest of the fire path, not copied.
type routed struct {
	run     fireRun
	job     *store.JobDefinition
	address string
	note    string     // how it was routed
	dueAt   bool       // the executor starts runs at their RunRequest.due_at: a scheduled run may be sent ahead
	span    trace.Span // the fire's span, from its call's preparation to its dispatch; nil when not tracing
}

// fireRun is what the fire path keeps of a run once it is routed: what
// its request, dispatch record and span read. It is a third of a
// store.Run, which the batch lets go of once its runs are routed (a burst
// holds 100,000 runs for seconds).
type fireRun struct {
	sentRun     // what it keeps once sent ahead of its instant
	TriggerType carillonv1.TriggerType
	TriggeredAt time.Time
}

// fireRunOf returns what the fire path keeps of r once it is routed.
func fireRunOf(r *store.Run) fireRun {
	return fireRun{
		sentRun: sentRun{ID: r.ID, JobID: r.JobID, ShardIndex: r.ShardIndex, ShardTotal: r.ShardTotal, ScheduledAt: r.ScheduledAt,
			Handler: r.Handler, Param: r.Param},
		TriggerType: r.TriggerType, TriggeredAt: r.TriggeredAt,
	}
}

// dispatchPlan is fires routed and ready to send.
type dispatchPlan struct {
	failed []store.Dispatch // fires that cannot be sent, and why
	sends  []routed
	ids    []int64 // every run of the fires, extra shards included
}

// plan routes fires (running runs) and creates the extra shard runs of
// broadcasts, so that sending them is all that is left.
func (t *Trigger) plan(ctx context.Context, fires []routable) (dispatchPlan, error) {
	var ds []store.Dispatch
	var sends []routed
	var shardRuns []store.Run
	var shardOf []routed        // the template of each extra shard run, in shardRuns order
	totals := map[int64]int32{} // first runs of broadcasts: their shard totals
	now := t.clock.Now()
	sources := map[int64]source{}
	for _, f := range fires {
		if f.job == nil {
			ds = append(ds, t.unroutable(f, fmt.Sprintf("job %d was deleted", f.run.JobID), now))
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
			ds = append(ds, t.unroutable(f, src.err.Error(), now))
			continue
		}
		if reason := scriptRefused(src.group, f.job); reason != "" {
			ds = append(ds, failed(f.run, reason, now))
			continue
		}
		if f.pin != "" {
			sends = append(sends, routed{run: fireRunOf(f.run), job: f.job, address: f.pin, dueAt: src.dueAt[f.pin],
				note: "sent again to " + f.pin + ", the executor an earlier admin routed it to, which did not hold it"})
			continue
		}
		addrs := src.addrs
		if reroutable(f.job.RouteStrategy) && f.override == nil {
			// Not an executor that refused a connection lately, unless
			// every one did: the fire then tries them all the same.
			if usable := t.refused.usable(addrs, now); len(usable) > 0 {
				addrs = usable
			}
		}
		pick, err := t.strategies[f.job.RouteStrategy].Pick(forGroup(ctx, f.job.GroupID), f.job.ID, addrs)
		if err != nil {
			ds = append(ds, t.unroutable(f, fmt.Sprintf("%v (executors from %s)", err, src.name), now))
			continue
		}
		note := "executors from " + src.name + "; " + pick.Message
		addrs = pick.Addresses
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
			note += fmt.Sprintf("; shard %d of %d (0-based) of an earlier fire", f.run.ShardIndex, f.run.ShardTotal)
		}
		first := f.run
		if len(addrs) > 1 {
			broadcast := *f.run
			broadcast.ShardTotal = int32(len(addrs)) //nolint:gosec // shard counts are bounded by a group's executors
			first = &broadcast
			totals[first.ID] = first.ShardTotal
			for i := 1; i < len(addrs); i++ {
				r := *f.run
				r.ID, r.ShardIndex, r.ShardTotal = 0, int32(i), int32(len(addrs)) //nolint:gosec // shard counts are bounded by a group's executors
				shardRuns = append(shardRuns, r)
				shardOf = append(shardOf, routed{job: f.job, address: addrs[i], note: note, dueAt: src.dueAt[addrs[i]]})
			}
		}
		sends = append(sends, routed{run: fireRunOf(first), job: f.job, address: addrs[0], note: note, dueAt: src.dueAt[addrs[0]]})
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
		for i := range stored {
			s := shardOf[i]
			s.run = fireRunOf(&stored[i])
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
	return source{name: "the request's addresses, of " + src.name, addrs: override, dueAt: src.dueAt, group: src.group}
}

// source is where a group's executors come from.
type source struct {
	name  string
	addrs []string
	// dueAt holds those of addrs that start runs at their
	// RunRequest.due_at (CAPABILITY_DUE_AT), as their latest heartbeats
	// in the store said, whichever admin heard them.
	dueAt map[string]bool
	err   error
	group store.Group // as read with addrs; zero if it could not be read
}

// scriptRefused says why a script job of group g is not sent to its
// executors ("" when it is): an XXL_JOB group sends scripts only when it
// allows them, since xxl-job executors run any script they are sent.
// Carillon executors decide themselves (sdk.Config.AllowScripts).
func scriptRefused(g store.Group, job *store.JobDefinition) string {
	if job.ScriptType == carillonv1.ScriptType_SCRIPT_TYPE_UNSPECIFIED ||
		g.ExecutorProtocol != carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB || g.AllowScripts {
		return ""
	}
	return fmt.Sprintf("not sent: job %d is a %s script and group %s (xxl-job executors) does not allow scripts (Group.allow_scripts)",
		job.ID, strings.TrimPrefix(job.ScriptType.String(), "SCRIPT_TYPE_"), g.AppName)
}

// groupOf returns group id as the trigger's source cache has it, false if
// it cannot be read.
func (t *Trigger) groupOf(ctx context.Context, id int64) (store.Group, bool) {
	g := t.source(ctx, id).group
	return g, g.ID != 0
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
	version, now := t.cfg.Store.RoutingVersion(), t.clock.Now()
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
	src := source{name: fmt.Sprintf("group %s (%s)", g.AppName, strings.TrimPrefix(g.AddressMode.String(), "ADDRESS_MODE_")), group: g}
	if src.addrs, src.dueAt, err = t.executorsTakingDueAt(ctx, g); err != nil {
		src.err = fmt.Errorf("executors of %s: %w", src.name, err)
	}
	return src
}

// executorsTakingDueAt returns the executors of group g (Executors), and
// those of them whose latest heartbeat declared CAPABILITY_DUE_AT: for an
// AUTO group, its registration under the group's app name; for a MANUAL
// group, the newest registration at the address, under any app name. An
// executor that registers again without the capability (an older SDK at
// the same address) takes it back.
func (t *Trigger) executorsTakingDueAt(ctx context.Context, g store.Group) (addrs []string, dueAt map[string]bool, err error) {
	since := t.liveSince(t.clock.Now())
	dueAt = map[string]bool{}
	if g.AddressMode == carillonv1.AddressMode_ADDRESS_MODE_MANUAL {
		addrs = manualAddresses(g)
		caps, err := t.cfg.Store.CapabilitiesAt(ctx, addrs, since)
		if err != nil {
			// The configured addresses route all the same: their runs go
			// on their instant until the next read.
			t.cfg.Logger.Warn("trigger: read the capabilities of a MANUAL group's executors; their runs are sent on their instant",
				"group", g.AppName, "err", err)
		}
		for a, c := range caps {
			dueAt[a] = c.Has(carillonv1.Capability_CAPABILITY_DUE_AT)
		}
		return addrs, dueAt, nil
	}
	regs, err := t.cfg.Store.Registrations(ctx, g.AppName, since)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range regs {
		addrs = append(addrs, r.Address)
		dueAt[r.Address] = r.Capabilities.Has(carillonv1.Capability_CAPABILITY_DUE_AT)
	}
	return addrs, dueAt, nil
}

// manualAddresses returns the configured addresses of MANUAL group g,
// sorted, each once.
func manualAddresses(g store.Group) []string {
	addrs := slices.Clone(g.Addresses)
	slices.Sort(addrs)
	return slices.Compact(addrs)
}

// Executors returns the sorted executor addresses of group g: the live
// registered ones for AUTO, the configured ones for MANUAL.
func (t *Trigger) Executors(ctx context.Context, g store.Group) ([]string, error) {
	if g.AddressMode == carillonv1.AddressMode_ADDRESS_MODE_MANUAL {
		return manualAddresses(g), nil
	}
	return t.cfg.Store.Executors(ctx, g.AppName, t.liveSince(t.clock.Now()))
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

// unroutable is the dispatch outcome of fire f, which cannot be routed for
// reason msg, counted as such.
func (t *Trigger) unroutable(f routable, msg string, now time.Time) store.Dispatch {
	strategy := carillonv1.RouteStrategy_ROUTE_STRATEGY_UNSPECIFIED // the job was deleted
	if f.job != nil {
		strategy = f.job.RouteStrategy
	}
	t.cfg.Metrics.Dispatched(strategy, metrics.CodeUnroutable, 1)
	return failed(f.run, msg, now)
}
