package trigger

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/carillonhq/carillon/admin/internal/metrics"
	"github.com/carillonhq/carillon/admin/internal/paramtmpl"
	"github.com/carillonhq/carillon/admin/internal/route"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// router plans fires: it finds each group's executors (cached per routing
// version), picks each fire's executor with its job's strategy (package
// route), makes a sharding broadcast's extra shard runs, and re-routes a
// fire whose executor refused its connection.
type router struct {
	cfg        *Config
	gateway    *Gateway
	strategies map[carillonv1.RouteStrategy]route.Strategy

	sourcesMu sync.Mutex
	sources   map[int64]cachedSource // by group ID

	refused refusals // executors that refused a connection lately

	templates paramtmpl.Cache // the parsed param templates of jobs (render.go)
}

func newRouter(cfg *Config, gw *Gateway) (*router, error) {
	r := &router{cfg: cfg, gateway: gw, strategies: map[carillonv1.RouteStrategy]route.Strategy{}, sources: map[int64]cachedSource{}}
	for v, name := range carillonv1.RouteStrategy_name {
		if v == 0 {
			continue
		}
		// FAILOVER's and BUSYOVER's prober is the fire's group's (pick):
		// these are never used.
		s, err := route.New(strings.TrimPrefix(name, "ROUTE_STRATEGY_"), gw.prober(0))
		if err != nil {
			return nil, fmt.Errorf("trigger: %w", err)
		}
		r.strategies[carillonv1.RouteStrategy(v)] = s
	}
	r.strategies[carillonv1.RouteStrategy_ROUTE_STRATEGY_UNSPECIFIED] = r.strategies[carillonv1.RouteStrategy_ROUTE_STRATEGY_FIRST]
	return r, nil
}

// pick chooses among addrs, executors of job's group, with job's
// strategy; a probing strategy probes them for the group.
func (r *router) pick(ctx context.Context, job *store.JobDefinition, addrs []string) (route.Pick, error) {
	s := r.strategies[job.RouteStrategy]
	switch job.RouteStrategy {
	case carillonv1.RouteStrategy_ROUTE_STRATEGY_FAILOVER:
		s = route.Failover(r.gateway.prober(job.GroupID))
	case carillonv1.RouteStrategy_ROUTE_STRATEGY_BUSYOVER:
		s = route.Busyover(r.gateway.prober(job.GroupID))
	}
	return s.Pick(ctx, job.ID, addrs)
}

// planned is fires routed and ready to send.
type planned struct {
	failed []store.Dispatch // fires that cannot be sent, and why
	fires  []*fire
	ids    []int64 // every run of the fires, extra shards included
}

// plan routes fires, each with its job (nil: deleted), creates the extra
// shard runs of broadcasts and renders template params (render), so that
// sending them is all that is left. It lets go of the fires' runs
// (fire.run).
func (r *router) plan(ctx context.Context, fires []*fire) (planned, error) {
	var p planned
	var shardRuns []store.Run
	var shardOf []*fire         // the fire of each extra shard run, in shardRuns order
	totals := map[int64]int32{} // first runs of broadcasts: their shard totals
	now := r.cfg.Clock.Now()
	sources := map[int64]source{}
	for _, f := range fires {
		p.ids = append(p.ids, f.id)
		if f.job == nil {
			p.failed = append(p.failed, r.unroutable(f, fmt.Sprintf("job %d was deleted", f.jobID), now))
			continue
		}
		src, ok := sources[f.job.GroupID]
		if !ok {
			src = r.source(ctx, f.job.GroupID)
			sources[f.job.GroupID] = src
		}
		var fixed fixedRoute
		if f.fixed != nil {
			fixed = *f.fixed
		}
		if src.err == nil && fixed.override != nil {
			src = overridden(src, fixed.override)
		}
		if src.err != nil {
			p.failed = append(p.failed, r.unroutable(f, src.err.Error(), now))
			continue
		}
		if reason := scriptRefused(src.group, f.job); reason != "" {
			p.failed = append(p.failed, f.failed(reason, now))
			continue
		}
		if fixed.pin != "" {
			f.address, f.dueAt = fixed.pin, src.dueAt[fixed.pin]
			f.note = routeNote{tail: "sent again to " + fixed.pin + ", the executor an earlier admin routed it to, which did not hold it"}
			p.fires = append(p.fires, f)
			continue
		}
		addrs := src.addrs
		if reroutable(f.job.RouteStrategy) && fixed.override == nil {
			// Not an executor that refused a connection lately, unless
			// every one did: the fire then tries them all the same.
			if usable := r.refused.usable(addrs, now); len(usable) > 0 {
				addrs = usable
			}
		}
		pick, err := r.pick(ctx, f.job, addrs)
		if err != nil {
			p.failed = append(p.failed, r.unroutable(f, fmt.Sprintf("%v (executors from %s)", err, src.name), now))
			continue
		}
		note := routeNote{head: src.from + pick.Head, tail: pick.Detail} // src.from is "" but for TriggerJob's addresses
		addrs = pick.Addresses
		if (f.triggerType == carillonv1.TriggerType_TRIGGER_TYPE_RETRY || f.shardTotal > 1) && len(addrs) > 1 {
			// A retry re-runs one shard of a broadcast, and so does a
			// shard an earlier admin process left unsent (Reconcile):
			// shard i goes to the i-th executor, or the first if the group
			// shrank.
			i := int(f.shardIndex)
			if i >= len(addrs) {
				i = 0
			}
			addrs = addrs[i : i+1]
			note.tail += fmt.Sprintf("; shard %d of %d (0-based) of an earlier fire", f.shardIndex, f.shardTotal)
		}
		if len(addrs) > 1 {
			f.shardTotal = int32(len(addrs)) //nolint:gosec // shard counts are bounded by a group's executors
			totals[f.id] = f.shardTotal
			for i := 1; i < len(addrs); i++ {
				run := f.runCopy()
				run.ID, run.ShardIndex, run.ShardTotal = 0, int32(i), f.shardTotal //nolint:gosec // shard counts are bounded by a group's executors
				run.RenderedParam = nil                                            // each shard renders its own
				shardRuns = append(shardRuns, run)
				shardOf = append(shardOf, &fire{at: f.at, stopSeq: f.stopSeq,
					job: f.job, address: addrs[i], note: note, dueAt: src.dueAt[addrs[i]]})
			}
		}
		f.address, f.note, f.dueAt = addrs[0], note, src.dueAt[addrs[0]]
		p.fires = append(p.fires, f)
	}
	for _, f := range fires {
		f.run = nil // planned: the fire keeps what it needs
	}
	if len(shardRuns) > 0 {
		if err := r.cfg.Store.Runs.SetShardTotals(ctx, totals); err != nil {
			return planned{}, err
		}
		stored, err := r.cfg.Store.Runs.Insert(ctx, shardRuns)
		if err != nil {
			return planned{}, err
		}
		for i := range stored {
			f := shardOf[i]
			f.setRun(&stored[i])
			f.run = nil
			p.fires = append(p.fires, f)
			p.ids = append(p.ids, f.id)
		}
	}
	if err := r.render(ctx, &p, now); err != nil {
		return planned{}, err
	}
	return p, nil
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
	name := "the request's addresses, of " + src.name
	return source{name: name, from: "executors from " + name + "; ", addrs: override, dueAt: src.dueAt, group: src.group}
}

// source is where a group's executors come from.
type source struct {
	name string
	// from begins the trigger message of a run routed among addrs, where
	// they are not the group's registered executors: "executors from
	// group app (MANUAL); ". The usual source, AUTO, goes without saying:
	// a run's record names its group, and each run of a burst would store
	// it again.
	from  string
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

// groupOf returns group id as the source cache has it, false if it cannot
// be read.
func (r *router) groupOf(ctx context.Context, id int64) (store.Group, bool) {
	g := r.source(ctx, id).group
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
func (r *router) source(ctx context.Context, groupID int64) source {
	version, now := r.cfg.Store.RoutingVersion(), r.cfg.Clock.Now()
	r.sourcesMu.Lock()
	c, ok := r.sources[groupID]
	r.sourcesMu.Unlock()
	if ok && c.version == version && now.Sub(c.at) < sourceTTL {
		return c.src
	}
	src := r.readSource(ctx, groupID)
	if src.err == nil {
		r.sourcesMu.Lock()
		r.sources[groupID] = cachedSource{src: src, version: version, at: now}
		r.sourcesMu.Unlock()
	}
	return src
}

// readSource reads where group groupID's executors come from.
func (r *router) readSource(ctx context.Context, groupID int64) source {
	g, err := r.cfg.Store.Groups.Get(ctx, groupID)
	if err != nil {
		return source{err: fmt.Errorf("group %d: %w", groupID, err)}
	}
	src := source{name: fmt.Sprintf("group %s (%s)", g.AppName, strings.TrimPrefix(g.AddressMode.String(), "ADDRESS_MODE_")), group: g}
	if g.AddressMode != carillonv1.AddressMode_ADDRESS_MODE_AUTO {
		src.from = "executors from " + src.name + "; "
	}
	if src.addrs, src.dueAt, err = r.executorsTakingDueAt(ctx, g); err != nil {
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
func (r *router) executorsTakingDueAt(ctx context.Context, g store.Group) (addrs []string, dueAt map[string]bool, err error) {
	since := r.liveSince(r.cfg.Clock.Now())
	dueAt = map[string]bool{}
	if g.AddressMode == carillonv1.AddressMode_ADDRESS_MODE_MANUAL {
		addrs = manualAddresses(g)
		caps, err := r.cfg.Store.Registry.CapabilitiesAt(ctx, addrs, since)
		if err != nil {
			// The configured addresses route all the same: their runs go
			// on their instant until the next read.
			r.cfg.Logger.Warn("trigger: read the capabilities of a MANUAL group's executors; their runs are sent on their instant",
				"group", g.AppName, "err", err)
		}
		for a, c := range caps {
			dueAt[a] = c.Has(carillonv1.Capability_CAPABILITY_DUE_AT)
		}
		return addrs, dueAt, nil
	}
	regs, err := r.cfg.Store.Registry.List(ctx, g.AppName, since)
	if err != nil {
		return nil, nil, err
	}
	for _, reg := range regs {
		addrs = append(addrs, reg.Address)
		dueAt[reg.Address] = reg.Capabilities.Has(carillonv1.Capability_CAPABILITY_DUE_AT)
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

// executors returns the sorted executor addresses of group g: the live
// registered ones for AUTO, the configured ones for MANUAL.
func (r *router) executors(ctx context.Context, g store.Group) ([]string, error) {
	if g.AddressMode == carillonv1.AddressMode_ADDRESS_MODE_MANUAL {
		return manualAddresses(g), nil
	}
	return r.cfg.Store.Registry.Executors(ctx, g.AppName, r.liveSince(r.cfg.Clock.Now()))
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
func (r *router) liveSince(now time.Time) time.Time {
	since := now.Add(-r.cfg.ExecutorTTL)
	if before := r.cfg.LastBeat.Add(-r.cfg.ExecutorTTL); !r.cfg.LastBeat.IsZero() && now.Before(r.cfg.Started.Add(restartGrace)) && before.Before(since) {
		since = before
	}
	return since
}

// unroutable is the dispatch record of fire f, which cannot be routed for
// reason msg, counted as such.
func (r *router) unroutable(f *fire, msg string, now time.Time) store.Dispatch {
	strategy := carillonv1.RouteStrategy_ROUTE_STRATEGY_UNSPECIFIED // the job was deleted
	if f.job != nil {
		strategy = f.job.RouteStrategy
	}
	r.cfg.Metrics.Dispatched(strategy, metrics.CodeUnroutable, 1)
	return f.failed(msg, now)
}

// Re-routing: a fire whose call provably never reached its executor (the
// connection was refused, or none could be made) goes to another live
// executor of its group in the same fire, when its job's strategy can
// pick another: every strategy but FIRST, LAST and CONSISTENT_HASH, whose
// route is the point (their runs fail as before, or FAILOVER's probe
// moves on at the next fire). The executor that refused is not picked
// again until it beats (Trigger.Registered), or for refusedTTL where it
// never beats (a MANUAL group's).

// rerouteMax is how many times one fire is re-routed.
const rerouteMax = 2

// refusedTTL is how long an executor that refused a connection is not
// picked when no heartbeat of it says it is back: a heartbeat period.
const refusedTTL = 30 * time.Second

// refusals remembers the executors whose connection was refused, and when.
type refusals struct {
	mu sync.Mutex
	at map[string]time.Time
}

// refuse notes that the executor at address refused a connection at now.
func (r *refusals) refuse(address string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at == nil {
		r.at = map[string]time.Time{}
	}
	r.at[address] = now
}

// beat forgets the refusal of the executor at address: it registered again.
func (r *refusals) beat(address string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.at, address)
}

// usable returns addrs without the executors that refused a connection
// within refusedTTL before now: addrs itself when none did. Older
// refusals are forgotten.
func (r *refusals) usable(addrs []string, now time.Time) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	maps.DeleteFunc(r.at, func(_ string, at time.Time) bool { return now.Sub(at) >= refusedTTL })
	if len(r.at) == 0 {
		return addrs
	}
	return slices.DeleteFunc(slices.Clone(addrs), func(a string) bool { _, refused := r.at[a]; return refused })
}

// reroutable says whether the runs of a job with strategy s may go to
// another executor than the one it chose.
func reroutable(s carillonv1.RouteStrategy) bool {
	switch s {
	case carillonv1.RouteStrategy_ROUTE_STRATEGY_FIRST, carillonv1.RouteStrategy_ROUTE_STRATEGY_LAST,
		carillonv1.RouteStrategy_ROUTE_STRATEGY_CONSISTENT_HASH, carillonv1.RouteStrategy_ROUTE_STRATEGY_UNSPECIFIED:
		return false
	}
	return true
}

// notDelivered says err proves that a call never reached its executor:
// the connection was refused, or could not be made (a dial that failed or
// timed out, a host name that does not resolve).
func notDelivered(err error) bool {
	if err == nil || errors.Is(err, errLeaseLost) {
		return false
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var op *net.OpError
	var dns *net.DNSError
	return (errors.As(err, &op) && op.Op == "dial") || errors.As(err, &dns)
}

// undelivered is a fire whose call did not reach its executor, with the
// dispatch record that fails it if it cannot go elsewhere.
type undelivered struct {
	fire   *fire
	failed store.Dispatch
}

// reroute routes the fires of us to other executors of their groups than
// those that refused them (noted refused at now), and returns them as new
// fires; those with no other executor to go to are returned as failed
// dispatch records. ahead says the calls go ahead of their instant: the
// fires go only to executors that take due_at.
func (r *router) reroute(ctx context.Context, us []undelivered, ahead bool) (again []*fire, failed []store.Dispatch) {
	now := r.cfg.Clock.Now()
	for _, u := range us {
		r.refused.refuse(u.fire.address, now)
	}
	for _, u := range us {
		f := *u.fire
		src := r.source(ctx, f.job.GroupID)
		var addrs []string
		for _, a := range r.refused.usable(src.addrs, now) {
			if a != f.address && (!ahead || src.dueAt[a]) {
				addrs = append(addrs, a)
			}
		}
		if src.err != nil || len(addrs) == 0 {
			u.failed.Message += "; no other executor of the group to send it to"
			failed = append(failed, u.failed)
			continue
		}
		pick, err := r.pick(ctx, f.job, addrs)
		if err != nil || len(pick.Addresses) == 0 {
			u.failed.Message += fmt.Sprintf("; not re-routed: %v", err)
			failed = append(failed, u.failed)
			continue
		}
		to := pick.Addresses[0]
		if f.job.RouteStrategy == carillonv1.RouteStrategy_ROUTE_STRATEGY_SHARDING_BROADCAST {
			to = pick.Addresses[int(f.shardIndex)%len(pick.Addresses)]
		}
		r.cfg.Logger.Info("trigger: an executor refused the connection; the run goes to another", "run", f.id, "job", f.job.ID,
			"refused", f.address, "executor", to)
		f.note.tail = fmt.Sprintf("%s; executor %s refused the connection (%s): re-routed, %s", f.note.tail, f.address, u.failed.Message, pick.Message())
		f.address, f.dueAt, f.span = to, src.dueAt[to], nil
		again = append(again, &f)
	}
	return again, failed
}
