package route_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/carillonhq/carillon/admin/internal/route"
)

// BenchmarkPick measures one routing decision of each strategy that does not probe, over
// groups of 10 and 100 executors, for fires of 1,024 different jobs.
func BenchmarkPick(b *testing.B) {
	for _, bench := range []struct {
		name string
		new  func() route.Strategy
	}{
		{"FIRST", route.First},
		{"LAST", route.Last},
		{"ROUND_ROBIN", func() route.Strategy { return route.RoundRobin() }},
		{"RANDOM", func() route.Strategy { return route.Random(nil) }},
		{"RANDOM_SEEDED", func() route.Strategy { return route.Random(rand.NewPCG(1, 2)) }},
		{"CONSISTENT_HASH", route.ConsistentHash},
		{"LEAST_FREQUENTLY_USED", func() route.Strategy { return route.LeastFrequentlyUsed() }},
		{"LEAST_RECENTLY_USED", func() route.Strategy { return route.LeastRecentlyUsed() }},
		{"SHARDING_BROADCAST", route.ShardingBroadcast},
	} {
		for _, n := range []int{10, 100} {
			b.Run(fmt.Sprintf("%s/%d", bench.name, n), func(b *testing.B) {
				s := bench.new()
				addresses := hosts(n)
				ctx := b.Context()
				b.ReportAllocs()
				var job int64
				for b.Loop() {
					if _, err := s.Pick(ctx, job&1023, addresses); err != nil {
						b.Fatal(err)
					}
					job++
				}
			})
		}
	}
}
