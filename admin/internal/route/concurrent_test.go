package route_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/carillonhq/carillon/admin/internal/route"
)

// TestConcurrent routes fires from many goroutines at once, as the admin does; run it with
// -race. The stateful strategies must still share a job's fires out exactly.
func TestConcurrent(t *testing.T) {
	t.Parallel()

	const (
		goroutines  = 8
		perRoutine  = 300 // fires of each job per goroutine
		probeRounds = 20  // the same over HTTP
		jobs        = 4
	)
	addresses := letters(3)

	// run picks rounds fires of every job from each goroutine and returns the addresses
	// chosen per job.
	run := func(t *testing.T, s route.Strategy, addresses []string, rounds int) [jobs][]string {
		t.Helper()
		var (
			mu  sync.Mutex
			got [jobs][]string
			wg  sync.WaitGroup
		)
		for range goroutines {
			wg.Go(func() {
				var mine [jobs][]string
				for range rounds {
					for job := range jobs {
						p, err := s.Pick(t.Context(), int64(job), addresses)
						if err != nil {
							t.Error(err)
							return
						}
						mine[job] = append(mine[job], p.Addresses...)
					}
				}
				mu.Lock()
				defer mu.Unlock()
				for job := range jobs {
					got[job] = append(got[job], mine[job]...)
				}
			})
		}
		wg.Wait()
		return got
	}

	for _, s := range []route.Strategy{route.RoundRobin(), route.LeastFrequentlyUsed(), route.LeastRecentlyUsed()} {
		t.Run(fmt.Sprint(s)+"/Exact", func(t *testing.T) {
			t.Parallel()

			for job, got := range run(t, s, addresses, perRoutine) {
				counts := countsOf(got)
				for _, a := range addresses {
					if want := goroutines * perRoutine / len(addresses); counts[a] != want {
						t.Errorf("job %d: %s chosen %d times, want exactly %d (counts %v)", job, a, counts[a], want, counts)
					}
				}
			}
		})
	}

	t.Run("CONSISTENT_HASH", func(t *testing.T) {
		t.Parallel()

		s := route.ConsistentHash()
		// Several address lists at once exercise the ring cache.
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				addresses := hosts(3 + g%3)
				want := make([]string, jobs)
				for job := range want {
					want[job] = pickOne(t, route.ConsistentHash(), int64(job), addresses)
				}
				for range perRoutine {
					for job := range jobs {
						if got := pickOne(t, s, int64(job), addresses); got != want[job] {
							t.Errorf("job %d on %d executors: %s, want %s", job, len(addresses), got, want[job])
							return
						}
					}
				}
			})
		}
		wg.Wait()
	})

	others := map[string]route.Strategy{
		"FIRST":              route.First(),
		"LAST":               route.Last(),
		"RANDOM/Seeded":      route.Random(rand.NewPCG(1, 2)),
		"RANDOM/Global":      route.Random(nil),
		"SHARDING_BROADCAST": route.ShardingBroadcast(),
	}
	for name, s := range others {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			for job, got := range run(t, s, addresses, perRoutine) {
				for _, a := range got {
					if !slices.Contains(addresses, a) {
						t.Fatalf("job %d: chose %q, not one of %q", job, a, addresses)
					}
				}
				want := goroutines * perRoutine
				if name == "SHARDING_BROADCAST" {
					want *= len(addresses)
				}
				if len(got) != want {
					t.Errorf("job %d: %d addresses chosen, want %d", job, len(got), want)
				}
			}
		})
	}

	t.Run("FAILOVER", func(t *testing.T) {
		t.Parallel()

		group, addresses := newGroup(t, 3)
		group[0].kill()
		for job, got := range run(t, route.Failover(newProber(t)), addresses, probeRounds) {
			if counts := countsOf(got); counts[addresses[1]] != goroutines*probeRounds {
				t.Errorf("job %d: counts %v, want all on %s", job, counts, addresses[1])
			}
		}
	})

	t.Run("BUSYOVER", func(t *testing.T) {
		t.Parallel()

		group, addresses := newGroup(t, 3)
		group[0].setBusy(1, "running")
		for job, got := range run(t, route.Busyover(newProber(t)), addresses, probeRounds) {
			want := addresses[0]
			if job == 1 {
				want = addresses[1]
			}
			if counts := countsOf(got); counts[want] != goroutines*probeRounds {
				t.Errorf("job %d: counts %v, want all on %s", job, counts, want)
			}
		}
	})
}
