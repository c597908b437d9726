package schedule

import (
	"testing"
	"time"
)

// TestClaimLead: the scan claims a burst earlier the larger it is, by
// twice its measured claim cost rounded up to whole seconds, from the
// look-ahead up to claimLeadMax; a small one with the look-ahead.
func TestClaimLead(t *testing.T) {
	t.Parallel()
	const look = 1500 * time.Millisecond
	for _, c := range []struct {
		perClaim time.Duration
		n        int
		want     time.Duration
	}{
		{50 * time.Microsecond, 0, look},
		{50 * time.Microsecond, 1, look},
		{25 * time.Microsecond, 1_999, look}, // under claimLeadMin
		{25 * time.Microsecond, 2_000, look + time.Second},
		{25 * time.Microsecond, 10_000, look + time.Second},
		{35 * time.Microsecond, 10_000, look + time.Second},
		{25 * time.Microsecond, 100_000, look + 5*time.Second},
		{35 * time.Microsecond, 100_000, look + 7*time.Second},
		{50 * time.Microsecond, 1_000_000, claimLeadMax},
	} {
		if got := claimLead(look, c.perClaim, c.n); got != c.want {
			t.Errorf("claimLead(%v, %v, %d) = %v, want %v", look, c.perClaim, c.n, got, c.want)
		}
	}
	if got := claimLead(time.Minute, time.Millisecond, 1_000_000); got != time.Minute {
		t.Errorf("a look-ahead longer than claimLeadMax: claimLead = %v, want the look-ahead", got)
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
