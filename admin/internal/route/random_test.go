package route_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/carillonhq/carillon/admin/internal/route"
)

func TestRandom(t *testing.T) {
	t.Parallel()

	t.Run("Seeded", func(t *testing.T) {
		t.Parallel()

		addresses := letters(3)
		one := picks(t, route.Random(rand.NewPCG(1, 2)), 1, addresses, 1000)
		two := picks(t, route.Random(rand.NewPCG(1, 2)), 1, addresses, 1000)
		if !slices.Equal(one, two) {
			t.Error("two strategies with the same seed chose differently")
		}
		other := picks(t, route.Random(rand.NewPCG(3, 4)), 1, addresses, 1000)
		if slices.Equal(one, other) {
			t.Error("two strategies with different seeds chose the same 1,000 times")
		}
	})

	t.Run("Spread", func(t *testing.T) {
		t.Parallel()

		for _, n := range []int{2, 3, 10} {
			addresses := letters(n)
			const total = 30_000
			counts := map[string]int{}
			for _, a := range picks(t, route.Random(rand.NewPCG(1, 2)), 1, addresses, total) {
				counts[a]++
			}
			fair := total / n
			for _, a := range addresses {
				// The seed fixes the outcome; ±5 % of a fair share is over 4 standard deviations.
				if c := counts[a]; c < fair*95/100 || c > fair*105/100 {
					t.Errorf("%d addresses: %s chosen %d times of %d, want %d ± 5 %% (counts %v)", n, a, c, total, fair, counts)
				}
			}
		}
	})

	t.Run("GlobalSource", func(t *testing.T) {
		t.Parallel()

		addresses := letters(3)
		seen := map[string]bool{}
		for _, a := range picks(t, route.Random(nil), 1, addresses, 300) {
			if !slices.Contains(addresses, a) {
				t.Fatalf("chose %q, not one of %q", a, addresses)
			}
			seen[a] = true
		}
		// Missing one of 3 in 300 uniform draws has a probability of 3 × (2/3)^300 ≈ 1e-52.
		if len(seen) != 3 {
			t.Errorf("300 picks chose only %v", seen)
		}
	})
}
