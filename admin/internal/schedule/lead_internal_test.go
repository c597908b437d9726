package schedule

import (
	"testing"
	"time"
)

// TestClaimLead: the scan claims a burst earlier the larger it is, by
// twice its measured claim cost plus its hand-over's lead, rounded up to
// whole seconds, from the look-ahead up to claimLeadMax (still half-way
// between seconds); a small one with the look-ahead. 100,000 fires at
// 25 µs a claim, handed over 25 µs a fire ahead (the admin's
// FireAheadPerFire), are claimed 9.5 s ahead, so that their claims end
// before their hand-over starts (2.9 s ahead); 1,000,000 at the cap.
func TestClaimLead(t *testing.T) {
	t.Parallel()
	const look = 1500 * time.Millisecond
	const handOver = 25 * time.Microsecond
	for _, c := range []struct {
		perClaim, handOver time.Duration
		n                  int
		want               time.Duration
	}{
		{50 * time.Microsecond, 0, 0, look},
		{50 * time.Microsecond, handOver, 1, look},
		{25 * time.Microsecond, 0, 1_999, look}, // under claimLeadMin
		{25 * time.Microsecond, 0, 2_000, look + time.Second},
		{25 * time.Microsecond, 0, 10_000, look + time.Second},
		{35 * time.Microsecond, handOver, 10_000, look + time.Second},
		{25 * time.Microsecond, 0, 100_000, look + 5*time.Second},
		{25 * time.Microsecond, handOver, 100_000, look + 8*time.Second}, // 5 s + 2.5 s, rounded up
		{35 * time.Microsecond, 0, 100_000, look + 7*time.Second},
		{25 * time.Microsecond, 0, 1_000_000, look + 50*time.Second},
		{26 * time.Microsecond, 0, 1_000_000, look + 52*time.Second},
		{27 * time.Microsecond, 0, 1_000_000, look + 53*time.Second}, // the cap: 55 s less the look-ahead, in whole seconds
		{14 * time.Microsecond, handOver, 1_000_000, look + 53*time.Second},
		{50 * time.Microsecond, handOver, 1_000_000, look + 53*time.Second},
		{time.Millisecond, handOver, 100_000_000, look + 53*time.Second}, // no overflow
	} {
		if got := claimLead(look, c.perClaim, c.handOver, c.n); got != c.want {
			t.Errorf("claimLead(%v, %v, %v, %d) = %v, want %v", look, c.perClaim, c.handOver, c.n, got, c.want)
		}
	}
	if got := claimLead(time.Minute, time.Millisecond, handOver, 1_000_000); got != time.Minute {
		t.Errorf("a look-ahead longer than claimLeadMax: claimLead = %v, want the look-ahead", got)
	}
}

// TestBurstCount: the scan counts the due jobs up to the number whose
// claims at the measured cost make the lead its longest, and no further:
// counting more would not change the lead.
func TestBurstCount(t *testing.T) {
	t.Parallel()
	const look = 1500 * time.Millisecond
	longest := look + 53*time.Second  // the cap: 55 s less the look-ahead, in whole seconds
	want := map[[2]time.Duration]int{ // by the claim cost and the hand-over's lead per fire
		{25 * time.Microsecond, 0}:                     1_060_000, // 53 s / 50 µs
		{26 * time.Microsecond, 0}:                     1_019_231, // 53 s / 52 µs, rounded up
		{50 * time.Microsecond, 0}:                     530_000,
		{25 * time.Microsecond, 25 * time.Microsecond}: 706_667, // 53 s / 75 µs, rounded up
		{time.Second, 0}:                               27,
	}
	for cost, w := range want {
		perClaim, handOver := cost[0], cost[1]
		n := burstCount(look, perClaim, handOver)
		if n != w {
			t.Errorf("burstCount(%v, %v, %v) = %d, want %d", look, perClaim, handOver, n, w)
		}
		if got, more := claimLead(look, perClaim, handOver, n), claimLead(look, perClaim, handOver, 10*n); got != longest || more != longest {
			t.Errorf("perClaim %v, handOver %v: claimLead of %d = %v, of %d = %v; want both the cap %v", perClaim, handOver, n, got, 10*n, more, longest)
		}
	}
	if n := burstCount(look, 0, 0); n <= 0 {
		t.Errorf("a claim cost of 0: burstCount = %d, want a positive bound", n)
	}
	if n := burstCount(time.Minute, 25*time.Microsecond, 0); n != 0 {
		t.Errorf("a look-ahead longer than claimLeadMax: burstCount = %d, want 0 (nothing to size)", n)
	}
}

// TestQueueEarliest: Earliest names the earliest instant and how many
// entries are due on it, as entries come and go.
func TestQueueEarliest(t *testing.T) {
	t.Parallel()
	q := NewQueue()
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	if at, n := q.Earliest(); !at.IsZero() || n != 0 {
		t.Fatalf("empty queue: Earliest = %v, %d; want zero, 0", at, n)
	}
	q.Push(Entry{RunID: 1, At: t0.Add(time.Second)}, Entry{RunID: 2, At: t0}, Entry{RunID: 3, At: t0}, Entry{RunID: 4, At: t0})
	if at, n := q.Earliest(); !at.Equal(t0) || n != 3 {
		t.Fatalf("Earliest = %v, %d; want %v, 3", at, n, t0)
	}
	if due, _ := q.PopDue(nil, t0); len(due) != 3 {
		t.Fatalf("PopDue took %d entries, want 3", len(due))
	}
	if at, n := q.Earliest(); !at.Equal(t0.Add(time.Second)) || n != 1 {
		t.Fatalf("after PopDue: Earliest = %v, %d; want %v, 1", at, n, t0.Add(time.Second))
	}
	q.PopDue(nil, t0.Add(time.Hour))
	if at, n := q.Earliest(); !at.IsZero() || n != 0 || len(q.at) != 0 {
		t.Fatalf("emptied: Earliest = %v, %d (%d instants counted); want zero, 0, none", at, n, len(q.at))
	}
}

// TestScanGap: scans that claim ahead come at least a sixth of the
// look-ahead apart, so that fires spread over the second are claimed in
// batches; a scan behind (its next fire due already) comes again soon.
func TestScanGap(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		look time.Duration
		next time.Duration // from now
		want time.Duration
	}{
		{LookaheadDefault, time.Second, 250 * time.Millisecond},
		{LookaheadDefault, time.Hour, 250 * time.Millisecond},
		{100 * time.Millisecond, time.Second, 100 * time.Millisecond / 6},
		{LookaheadDefault, -time.Millisecond, behindGap},
		{LookaheadDefault, -time.Hour, behindGap},
	} {
		s := New(Config{Lookahead: c.look})
		if got := s.gap(time.Now().Add(c.next)); got != c.want {
			t.Errorf("look-ahead %v, next fire in %v: gap %v, want %v", c.look, c.next, got, c.want)
		}
	}
}
