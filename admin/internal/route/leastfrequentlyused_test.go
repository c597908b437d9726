package route_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/carillonhq/carillon/admin/internal/route"
)

// split turns "a b c" into {"http://a", "http://b", "http://c"}.
func split(s string) []string {
	var addresses []string
	for _, f := range strings.Fields(s) {
		addresses = append(addresses, "http://"+f)
	}
	return addresses
}

// countsOf counts each address in got.
func countsOf(got []string) map[string]int {
	counts := map[string]int{}
	for _, a := range got {
		counts[a]++
	}
	return counts
}

// checkFair fails unless got uses every address exactly n times and never the same twice
// in a row.
func checkFair(t *testing.T, got, addresses []string, n int) {
	t.Helper()
	counts := countsOf(got)
	for _, a := range addresses {
		if counts[a] != n {
			t.Errorf("%s chosen %d times, want %d (counts %v)", a, counts[a], n, counts)
		}
	}
	for i := 1; i < len(got); i++ {
		if got[i] == got[i-1] {
			t.Errorf("%s chosen twice in a row at picks %d and %d", got[i], i-1, i)
		}
	}
}

func TestLeastFrequentlyUsed(t *testing.T) {
	t.Parallel()

	t.Run("Order", func(t *testing.T) {
		t.Parallel()

		s := route.LeastFrequentlyUsed()
		if got, want := picks(t, s, 1, split("a b c"), 6), split("a b c a b c"); !slices.Equal(got, want) {
			t.Errorf("job 1 = %q, want %q", got, want)
		}
		// A new job starts its ties elsewhere.
		if got, want := picks(t, s, 2, split("a b c"), 3), split("b c a"); !slices.Equal(got, want) {
			t.Errorf("job 2 = %q, want %q", got, want)
		}
	})

	t.Run("LeastUsedWins", func(t *testing.T) {
		t.Parallel()

		s := route.LeastFrequentlyUsed()
		got := picks(t, s, 1, split("a b c"), 1)              // a: 1, b: 0, c: 0
		got = append(got, picks(t, s, 1, split("b c"), 1)...) // a left and is forgotten; b: 1, c: 0
		// a comes back at the minimum count, 0: a and c (0) go before b (1).
		got = append(got, picks(t, s, 1, split("a b c"), 3)...)
		if want := split("a b a c a"); !slices.Equal(got, want) {
			t.Errorf("job 1 = %q, want %q", got, want)
		}
	})

	t.Run("ExecutorJoins", func(t *testing.T) {
		t.Parallel()

		s := route.LeastFrequentlyUsed()
		picks(t, s, 1, split("a b c"), 300) // 100 each
		// d joins: it starts at 100, not 0, so it does not take the next 100 fires alone.
		checkFair(t, picks(t, s, 1, split("a b c d"), 400), split("a b c d"), 100)
	})

	t.Run("ExecutorLeavesAndReturns", func(t *testing.T) {
		t.Parallel()

		s := route.LeastFrequentlyUsed()
		picks(t, s, 1, split("a b c"), 30) // 10 each
		picks(t, s, 1, split("a b"), 20)   // a, b: 20; c forgotten
		checkFair(t, picks(t, s, 1, split("a b c"), 30), split("a b c"), 10)
	})

	t.Run("Message", func(t *testing.T) {
		t.Parallel()

		s := route.LeastFrequentlyUsed()
		var last string
		for range 3 {
			p, err := s.Pick(t.Context(), 9, split("a"))
			if err != nil {
				t.Fatal(err)
			}
			last = p.Message()
		}
		if want := "LEAST_FREQUENTLY_USED over 1 executor (http://a): chose http://a, used 2 times by job 9 before, the fewest"; last != want {
			t.Errorf("Message = %q, want %q", last, want)
		}
	})
}
