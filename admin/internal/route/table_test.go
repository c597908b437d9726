package route

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/carillonhq/carillon/internal/clock"
)

// TestTableForgets checks that the per-job memory of every stateful strategy stays bounded
// by the jobs routed in the last one or two idle timeouts, whatever ran before. It runs in a
// synctest bubble: the hours pass at once.
func TestTableForgets(t *testing.T) {
	t.Parallel()

	for _, test := range []struct {
		name string
		new  func(...Option) Strategy
		size func(Strategy) int
	}{
		{"ROUND_ROBIN", RoundRobin, func(s Strategy) int { return s.(*roundRobin).jobs.size() }},
		{"LEAST_FREQUENTLY_USED", LeastFrequentlyUsed, func(s Strategy) int { return s.(*leastFrequentlyUsed).jobs.size() }},
		{"LEAST_RECENTLY_USED", LeastRecentlyUsed, func(s Strategy) int { return s.(*leastRecentlyUsed).jobs.size() }},
	} {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) { testTableForgets(t, test.new(WithIdleTimeout(time.Hour)), test.size) })
		})
	}
}

// testTableForgets is TestTableForgets for one strategy, s, whose table holds size(s) jobs.
func testTableForgets(t *testing.T, s Strategy, size func(Strategy) int) {
	t.Helper()
	addresses := []string{"http://a", "http://b", "http://c"}
	pick := func(jobs ...int64) {
		t.Helper()
		for _, job := range jobs {
			if _, err := s.Pick(context.Background(), job, addresses); err != nil {
				t.Fatal(err)
			}
		}
	}
	span := func(from, n int64) []int64 {
		jobs := make([]int64, n)
		for i := range jobs {
			jobs[i] = from + int64(i)
		}
		return jobs
	}

	pick(span(0, 10_000)...) // jobs that will be deleted
	if got := size(s); got != 10_000 {
		t.Fatalf("after 10,000 jobs: size = %d, want 10,000", got)
	}
	// 40 minutes later, jobs 0-15 fire again and one new job per shard appears.
	time.Sleep(40 * time.Minute)
	pick(span(0, 16)...)
	pick(span(20_000, tableShards)...)
	if got := size(s); got != 10_000+tableShards {
		t.Fatalf("after 40 min: size = %d, want %d", got, 10_000+tableShards)
	}
	// 30 minutes later (70 in all) a new generation starts in every shard; nothing
	// has been idle an hour yet except jobs 16-9999, which may stay one more generation.
	time.Sleep(30 * time.Minute)
	pick(span(30_000, tableShards)...)
	if got := size(s); got != 10_000+2*tableShards {
		t.Fatalf("after 70 min: size = %d, want %d", got, 10_000+2*tableShards)
	}
	// 70 minutes later, jobs 16-9999 have been idle 140 minutes and are gone; so are
	// jobs 0-15 and 20,000-20,015 (idle 100 min); 30,000-30,015 (idle 70) may stay.
	time.Sleep(70 * time.Minute)
	pick(span(40_000, tableShards)...)
	if got, want := size(s), 2*tableShards; got != want {
		t.Fatalf("after 140 min: size = %d, want %d", got, want)
	}
	// Hours later, all but the jobs routed now are forgotten.
	time.Sleep(5 * time.Hour)
	pick(span(50_000, tableShards)...)
	if got, want := size(s), tableShards; got != want {
		t.Fatalf("after 7 h: size = %d, want %d", got, want)
	}
}

// TestTableClockBackwards checks that a clock going backwards (a wall clock set back, which
// a synctest bubble cannot do) neither forgets nor panics.
func TestTableClockBackwards(t *testing.T) {
	t.Parallel()

	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := RoundRobin(WithIdleTimeout(time.Hour), WithNowFunc(clk.Now)).(*roundRobin)
	addresses := []string{"http://a", "http://b"}
	var got []string
	for _, d := range []time.Duration{0, -3 * time.Hour, 30 * time.Minute, -time.Minute} {
		clk.Add(d)
		p, err := s.Pick(context.Background(), 1, addresses)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.Addresses[0])
	}
	if want := []string{"http://a", "http://b", "http://a", "http://b"}; !slices.Equal(got, want) {
		t.Errorf("picks = %q, want %q", got, want)
	}
}
