package route_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/carillonhq/carillon/admin/internal/route"
)

func TestConsistentHash(t *testing.T) {
	t.Parallel()

	const jobs = 10_000

	// assign returns the address of each job 0..jobs-1.
	assign := func(t *testing.T, s route.Strategy, addresses []string) []string {
		t.Helper()
		got := make([]string, jobs)
		for job := range got {
			got[job] = pickOne(t, s, int64(job), addresses)
		}
		return got
	}

	t.Run("Golden", func(t *testing.T) {
		t.Parallel()

		// Fixed hashes: these must not change between releases, or jobs would move on upgrade.
		// The answers were computed independently, by a Python transcription of the documented
		// hashing (FNV-1a-64 of "address#i" and splitmix64's finalizer).
		addresses := hosts(10)
		for _, test := range []struct {
			job  int64
			want string
		}{
			{0, "http://10.0.0.108:9999"},
			{1, "http://10.0.0.105:9999"},
			{42, "http://10.0.0.102:9999"},
			{1_000_000, "http://10.0.0.100:9999"},
			{-7, "http://10.0.0.103:9999"},
		} {
			if got := pickOne(t, route.ConsistentHash(), test.job, addresses); got != test.want {
				t.Errorf("Pick(%d) = %s, want %s", test.job, got, test.want)
			}
		}
	})

	t.Run("Stable", func(t *testing.T) {
		t.Parallel()

		addresses := hosts(10)
		s := route.ConsistentHash()
		first := assign(t, s, addresses)
		if again := assign(t, s, addresses); !slices.Equal(first, again) {
			t.Error("the same strategy routed jobs differently on a second pass")
		}
		if other := assign(t, route.ConsistentHash(), addresses); !slices.Equal(first, other) {
			t.Error("a new strategy value routed jobs differently")
		}
		shuffled := slices.Clone(addresses)
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if other := assign(t, route.ConsistentHash(), shuffled); !slices.Equal(first, other) {
			t.Error("the same addresses in another order routed jobs differently")
		}
	})

	t.Run("Balanced", func(t *testing.T) {
		t.Parallel()

		addresses := hosts(10)
		counts := map[string]int{}
		for _, a := range assign(t, route.ConsistentHash(), addresses) {
			counts[a]++
		}
		for _, a := range addresses {
			// Fair share 1,000; 100 virtual nodes keep each within about ±20 %.
			if c := counts[a]; c < 750 || c > 1250 {
				t.Errorf("%s has %d of %d jobs, want 750-1250 (counts %v)", a, c, jobs, counts)
			}
		}
	})

	t.Run("ExecutorLeaves", func(t *testing.T) {
		t.Parallel()

		addresses := hosts(10)
		s := route.ConsistentHash()
		before := assign(t, s, addresses)
		for _, gone := range []int{0, 3, 9} {
			rest := slices.Delete(slices.Clone(addresses), gone, gone+1)
			after := assign(t, s, rest)
			moved := 0
			for job := range before {
				switch {
				case before[job] == addresses[gone]:
					moved++
				case after[job] != before[job]:
					t.Fatalf("without %s: job %d moved from %s to %s, but only jobs of %s may move",
						addresses[gone], job, before[job], after[job], addresses[gone])
				}
			}
			if moved == 0 {
				t.Errorf("%s had no job: the test proves nothing", addresses[gone])
			}
		}
	})

	t.Run("ExecutorJoins", func(t *testing.T) {
		t.Parallel()

		addresses := hosts(11)
		s := route.ConsistentHash()
		before := assign(t, s, addresses[:10])
		after := assign(t, s, addresses)
		moved := 0
		for job := range before {
			if after[job] == before[job] {
				continue
			}
			moved++
			if after[job] != addresses[10] {
				t.Fatalf("job %d moved from %s to %s, not to the new executor %s", job, before[job], after[job], addresses[10])
			}
		}
		// Expect about 1/11 (909 of 10,000): allow half to double.
		if lo, hi := jobs/22, 2*jobs/11; moved < lo || moved > hi {
			t.Errorf("%d of %d jobs moved to the 11th executor, want %d-%d (about 1/11)", moved, jobs, lo, hi)
		}
	})

	t.Run("Message", func(t *testing.T) {
		t.Parallel()

		p, err := route.ConsistentHash().Pick(t.Context(), 42, hosts(3))
		if err != nil {
			t.Fatal(err)
		}
		want := "CONSISTENT_HASH over 3 executors (http://10.0.0.100:9999, http://10.0.0.101:9999, http://10.0.0.102:9999): chose " +
			p.Addresses[0] + ", owner of job 42's place on a ring of 300 virtual nodes"
		if p.Message() != want {
			t.Errorf("Message = %q, want %q", p.Message(), want)
		}
	})
}
