package route

import (
	"context"
	"fmt"
	"strings"
)

// Strategy chooses the executors for one fire of a job. Implementations are safe for
// concurrent use.
type Strategy interface {
	// Pick chooses from addresses (the group's live executors, sorted, deduplicated; may be
	// empty) for one fire of jobID. Pick neither keeps nor modifies the slice. Given an
	// unsorted list, every strategy still chooses among its addresses, but FIRST, LAST and
	// ROUND_ROBIN then follow the list's order rather than the sorted one.
	//
	// When no executor can be chosen, Pick returns an error wrapping [ErrNoExecutor] whose
	// message says why; a probing strategy returns the context's error, wrapped, when ctx
	// ends first. On error, the returned Pick has no Addresses, but its Message may still
	// describe what was tried.
	Pick(ctx context.Context, jobID int64, addresses []string) (Pick, error)
}

// Pick is a routing decision.
type Pick struct {
	// Addresses are the chosen executor URLs: one, or for SHARDING_BROADCAST one per shard,
	// shard i being Addresses[i]. The slice is the caller's to keep.
	Addresses []string
	// Head and Detail say how the fire was routed, for people (Message puts them together).
	// Head names the strategy and the candidates, "ROUND_ROBIN over 2 executors (http://a,
	// http://b): ", and is one string shared by the Picks over the same candidates, so that
	// the fires of a burst hold one copy of it; Detail is this Pick's: the beats tried and
	// their outcome, and the chosen address.
	Head, Detail string
}

// Message returns the whole of how the fire was routed: Head, then Detail.
func (p Pick) Message() string { return p.Head + p.Detail }

// names lists the strategy names [New] accepts, in the order of the admin's RouteStrategy
// enum.
var names = []string{
	"FIRST", "LAST", "ROUND_ROBIN", "RANDOM", "CONSISTENT_HASH",
	"LEAST_FREQUENTLY_USED", "LEAST_RECENTLY_USED", "FAILOVER", "BUSYOVER",
	"SHARDING_BROADCAST",
}

// New returns a new strategy by its name, as spelled in the admin's RouteStrategy enum
// without its prefix: "FIRST", "LAST", "ROUND_ROBIN", "RANDOM", "CONSISTENT_HASH",
// "LEAST_FREQUENTLY_USED", "LEAST_RECENTLY_USED", "FAILOVER", "BUSYOVER" or
// "SHARDING_BROADCAST". FAILOVER and BUSYOVER need a non-nil Prober; the others ignore p.
// The options apply to the stateful strategies (see [Option]) and are ignored by the others.
//
// New builds a fresh value each time: the stateful strategies remember jobs only inside one
// value, so keep it and reuse it for every fire.
func New(name string, p Prober, opts ...Option) (Strategy, error) {
	switch name {
	case "FIRST":
		return First(), nil
	case "LAST":
		return Last(), nil
	case "ROUND_ROBIN":
		return RoundRobin(opts...), nil
	case "RANDOM":
		return Random(nil), nil
	case "CONSISTENT_HASH":
		return ConsistentHash(), nil
	case "LEAST_FREQUENTLY_USED":
		return LeastFrequentlyUsed(opts...), nil
	case "LEAST_RECENTLY_USED":
		return LeastRecentlyUsed(opts...), nil
	case "FAILOVER", "BUSYOVER":
		if p == nil {
			return nil, fmt.Errorf("route: %s needs a Prober, got nil", name)
		}
		if name == "FAILOVER" {
			return Failover(p), nil
		}
		return Busyover(p), nil
	case "SHARDING_BROADCAST":
		return ShardingBroadcast(), nil
	}
	return nil, fmt.Errorf("route: unknown strategy %q (want one of %s)", name, strings.Join(names, ", "))
}
