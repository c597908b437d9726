package route_test

import (
	"slices"
	"testing"

	"github.com/carillonhq/carillon/admin/internal/route"
)

func TestLeastRecentlyUsed(t *testing.T) {
	t.Parallel()

	t.Run("Order", func(t *testing.T) {
		t.Parallel()

		s := route.LeastRecentlyUsed()
		if got, want := picks(t, s, 1, split("a b c"), 6), split("a b c a b c"); !slices.Equal(got, want) {
			t.Errorf("job 1 = %q, want %q", got, want)
		}
		if got, want := picks(t, s, 2, split("a b c"), 3), split("b c a"); !slices.Equal(got, want) {
			t.Errorf("job 2 = %q, want %q", got, want)
		}
	})

	t.Run("LeastRecentWins", func(t *testing.T) {
		t.Parallel()

		s := route.LeastRecentlyUsed()
		got := picks(t, s, 1, split("a b c"), 4) // a b c a: b is now least recent
		// d joins, never used: it goes first, then b, c, a in the order of their last use.
		got = append(got, picks(t, s, 1, split("a b c d"), 5)...)
		if want := split("a b c a d b c a d"); !slices.Equal(got, want) {
			t.Errorf("job 1 = %q, want %q", got, want)
		}
		// c is away for two fires, then is least recent and goes first.
		got = picks(t, s, 1, split("a b d"), 2)
		got = append(got, picks(t, s, 1, split("a b c d"), 1)...)
		if want := split("b a c"); !slices.Equal(got, want) {
			t.Errorf("after c left and came back: %q, want %q", got, want)
		}
	})

	t.Run("ExecutorJoins", func(t *testing.T) {
		t.Parallel()

		s := route.LeastRecentlyUsed()
		picks(t, s, 1, split("a b c"), 300)
		checkFair(t, picks(t, s, 1, split("a b c d"), 400), split("a b c d"), 100)
	})

	t.Run("Message", func(t *testing.T) {
		t.Parallel()

		s := route.LeastRecentlyUsed()
		var messages []string
		for range 4 {
			p, err := s.Pick(t.Context(), 9, split("a b c"))
			if err != nil {
				t.Fatal(err)
			}
			messages = append(messages, p.Message())
		}
		const prefix = "LEAST_RECENTLY_USED over 3 executors (http://a, http://b, http://c): "
		if want := prefix + "chose http://a, not used by job 9 before"; messages[0] != want {
			t.Errorf("first Message = %q, want %q", messages[0], want)
		}
		if want := prefix + "chose http://a, last used by job 9 3 fires ago, the longest"; messages[3] != want {
			t.Errorf("fourth Message = %q, want %q", messages[3], want)
		}
	})
}
