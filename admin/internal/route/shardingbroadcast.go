package route

import (
	"context"
	"slices"
)

// ShardingBroadcast returns the SHARDING_BROADCAST strategy: every address, in sorted order,
// one run per executor; the run on Addresses[i] is shard i of len(Addresses). Addresses that
// arrive unsorted or repeated are sorted and deduplicated first, so that shard i of a fire is
// the same executor for every caller (retries of one shard rely on it).
func ShardingBroadcast() Strategy { return shardingBroadcast{} }

type shardingBroadcast struct{}

func (shardingBroadcast) String() string { return "SHARDING_BROADCAST" }

// Pick implements [Strategy].
func (s shardingBroadcast) Pick(_ context.Context, _ int64, addresses []string) (Pick, error) {
	if len(addresses) == 0 {
		return Pick{}, noAddresses(s.String())
	}
	shards := slices.Clone(addresses)
	if !isSet(shards) {
		slices.Sort(shards)
		shards = slices.Compact(shards)
	}
	var m message
	m.header(s.String(), shards, len(shards[0])+len(shards[len(shards)-1])+80)
	m.int(int64(len(shards)))
	if len(shards) == 1 {
		m.WriteString(" shard, 0 of 1 on ")
		m.WriteString(shards[0])
	} else {
		m.WriteString(" shards, shard i of ")
		m.int(int64(len(shards)))
		m.WriteString(" on the i-th executor from 0: 0 on ")
		m.WriteString(shards[0])
		m.WriteString(", ")
		m.int(int64(len(shards) - 1))
		m.WriteString(" on ")
		m.WriteString(shards[len(shards)-1])
	}
	return m.pick(shards), nil
}

// isSet reports whether addresses are strictly increasing: sorted and without repeats.
func isSet(addresses []string) bool {
	for i := 1; i < len(addresses); i++ {
		if addresses[i-1] >= addresses[i] {
			return false
		}
	}
	return true
}
