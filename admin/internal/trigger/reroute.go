package trigger

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Re-routing: a run whose call provably never reached its executor (the
// connection was refused, or none could be made) goes to another live
// executor of its group in the same fire, when its job's strategy can
// pick another: every strategy but FIRST, LAST and CONSISTENT_HASH, whose
// route is the point (their runs fail as before, or FAILOVER's probe
// moves on at the next fire). The executor that refused is not picked
// again until it beats (Registered), or for refusedTTL where it never
// beats (a MANUAL group's).

// rerouteMax is how many times one fire's run is re-routed.
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

// undelivered is a run whose call did not reach executor address, with the
// dispatch record that fails it if it cannot go elsewhere.
type undelivered struct {
	send   routed
	failed store.Dispatch
}

// reroute routes the runs of us to other executors of their groups than
// those that refused them (noted refused at now), and returns them, routes
// recorded; those with no other executor to go to are returned as failed
// dispatch records. ahead says the calls go ahead of their instant: the
// runs go only to executors that take due_at.
func (t *Trigger) reroute(ctx context.Context, us []undelivered, ahead bool) (again []routed, failed []store.Dispatch) {
	now := t.clock.Now()
	for _, u := range us {
		t.refused.refuse(u.send.address, now)
	}
	for _, u := range us {
		s := u.send
		src := t.source(ctx, s.job.GroupID)
		var addrs []string
		for _, a := range t.refused.usable(src.addrs, now) {
			if a != s.address && (!ahead || src.dueAt[a]) {
				addrs = append(addrs, a)
			}
		}
		if src.err != nil || len(addrs) == 0 {
			u.failed.Message += "; no other executor of the group to send it to"
			failed = append(failed, u.failed)
			continue
		}
		pick, err := t.strategies[s.job.RouteStrategy].Pick(forGroup(ctx, s.job.GroupID), s.job.ID, addrs)
		if err != nil || len(pick.Addresses) == 0 {
			u.failed.Message += fmt.Sprintf("; not re-routed: %v", err)
			failed = append(failed, u.failed)
			continue
		}
		to := pick.Addresses[0]
		if s.job.RouteStrategy == carillonv1.RouteStrategy_ROUTE_STRATEGY_SHARDING_BROADCAST {
			to = pick.Addresses[int(s.run.ShardIndex)%len(pick.Addresses)]
		}
		t.cfg.Logger.Info("trigger: an executor refused the connection; the run goes to another", "run", s.run.ID, "job", s.job.ID,
			"refused", s.address, "executor", to)
		s.note = fmt.Sprintf("%s; executor %s refused the connection (%s): re-routed, %s", s.note, s.address, u.failed.Message, pick.Message)
		s.address, s.dueAt, s.span = to, src.dueAt[to], nil
		again = append(again, s)
	}
	if len(again) == 0 {
		return nil, failed
	}
	routed, err := t.route(ctx, again)
	if err != nil && !errors.Is(err, store.ErrLeaseLost) {
		t.cfg.Logger.Error("trigger: record the routes of re-routed runs; they are not sent", "runs", len(again), "err", err)
	}
	return routed, failed
}
