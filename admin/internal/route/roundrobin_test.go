package route_test

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/carillonhq/carillon/admin/internal/route"
)

func TestRoundRobin(t *testing.T) {
	t.Parallel()

	t.Run("ExactCounts", func(t *testing.T) {
		t.Parallel()

		s := route.RoundRobin()
		addresses := letters(3)
		got := picks(t, s, 7, addresses, 3000)
		counts := map[string]int{}
		for i, a := range got {
			counts[a]++
			if i > 0 {
				if want := addresses[(slices.Index(addresses, got[i-1])+1)%3]; a != want {
					t.Fatalf("pick %d = %s after %s, want %s", i, a, got[i-1], want)
				}
			}
		}
		for _, a := range addresses {
			if counts[a] != 1000 {
				t.Errorf("%s got %d of 3000 picks, want exactly 1000 (counts %v)", a, counts[a], counts)
			}
		}
	})

	t.Run("JobsCycleIndependently", func(t *testing.T) {
		t.Parallel()

		s := route.RoundRobin()
		addresses := letters(4)
		// Interleave two jobs: each still sees a, b, c, d in turn from its own start.
		var one, two []string
		for range 8 {
			one = append(one, pickOne(t, s, 1, addresses))
			two = append(two, pickOne(t, s, 2, addresses))
		}
		if want := strings.Fields("http://a http://b http://c http://d http://a http://b http://c http://d"); !slices.Equal(one, want) {
			t.Errorf("job 1 = %q, want %q", one, want)
		}
		if want := strings.Fields("http://b http://c http://d http://a http://b http://c http://d http://a"); !slices.Equal(two, want) {
			t.Errorf("job 2 = %q, want %q", two, want)
		}
	})

	t.Run("NewJobsStartSpread", func(t *testing.T) {
		t.Parallel()

		s := route.RoundRobin()
		addresses := letters(3)
		counts := map[string]int{}
		for job := range int64(300) {
			counts[pickOne(t, s, job*7919, addresses)]++
		}
		for _, a := range addresses {
			if counts[a] != 100 {
				t.Errorf("%d of 300 new jobs started on %s, want exactly 100 (counts %v)", counts[a], a, counts)
			}
		}
	})

	t.Run("GroupChanges", func(t *testing.T) {
		t.Parallel()

		s := route.RoundRobin()
		steps := []struct {
			addresses string
			want      string
		}{
			{"a b c d", "a"},
			{"a b c d", "b"},
			{"a b d", "d"},   // c left: continue after b, without skipping d or repeating b
			{"a b d e", "e"}, // e joined after d
			{"a b d e", "a"}, // wrap around
			{"b e", "b"},     // a, the last used, left: the next after it
			{"b e f", "e"},
			{"e", "e"},
			{"a e", "a"},
		}
		for i, step := range steps {
			var addresses []string
			for _, f := range strings.Fields(step.addresses) {
				addresses = append(addresses, "http://"+f)
			}
			if got := pickOne(t, s, 1, addresses); got != "http://"+step.want {
				t.Errorf("step %d: Pick(%q) = %s, want http://%s", i, addresses, got, step.want)
			}
		}
	})

	t.Run("Message", func(t *testing.T) {
		t.Parallel()

		s := route.RoundRobin()
		p1, _ := s.Pick(t.Context(), 42, letters(2))
		p2, _ := s.Pick(t.Context(), 42, letters(2))
		if want := "ROUND_ROBIN over 2 executors (http://a, http://b): chose http://a, the start for job 42 (no recent pick of it to follow)"; p1.Message() != want {
			t.Errorf("first Message = %q, want %q", p1.Message(), want)
		}
		if want := "ROUND_ROBIN over 2 executors (http://a, http://b): chose http://b, the next after http://a for job 42"; p2.Message() != want {
			t.Errorf("second Message = %q, want %q", p2.Message(), want)
		}
	})

	t.Run("ForgetsIdleJobs", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) { // the week passes at once
			s := route.RoundRobin(route.WithIdleTimeout(time.Hour))
			addresses := letters(4)
			if got := picks(t, s, 1, addresses, 2); !slices.Equal(got, []string{"http://a", "http://b"}) {
				t.Fatalf("job 1 = %q, want a then b", got)
			}
			// Routed every 59 minutes for a week, job 1 is never forgotten: it keeps rotating.
			want := "http://c"
			for i := range 7 * 24 * 60 / 59 {
				time.Sleep(59 * time.Minute)
				if got := pickOne(t, s, 1, addresses); got != want {
					t.Fatalf("after %d × 59 min: job 1 = %s, want %s (rotation broken)", i+1, got, want)
				}
				want = addresses[(slices.Index(addresses, want)+1)%4]
			}
			// Idle for two hours, it is forgotten and starts over as the second new job (at b)
			// instead of continuing with want.
			time.Sleep(2 * time.Hour)
			if want == "http://b" {
				t.Fatal("test broken: the remembered and the new start are the same")
			}
			if got := pickOne(t, s, 1, addresses); got != "http://b" {
				t.Errorf("after 2 h idle: job 1 = %s, want http://b, a new start (remembered: %s)", got, want)
			}
		})
	})
}
