package trigger

import (
	"testing"
	"time"
)

// TestBatchTimeout: a dispatch batch's deadline counts from its last
// instant, so a burst handed over long before it is not cancelled before
// it is sent.
func TestBatchTimeout(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	const dt = 10 * time.Second
	for _, c := range []struct {
		ats  []time.Duration // the runs' instants after now
		want time.Duration
	}{
		{[]time.Duration{0}, 25 * time.Second},
		{[]time.Duration{-time.Second}, 25 * time.Second}, // late: from now
		{[]time.Duration{100 * time.Millisecond}, 25*time.Second + 100*time.Millisecond},
		{[]time.Duration{time.Second, 30 * time.Second, 2 * time.Second}, 55 * time.Second},
	} {
		cs := make([]fire, len(c.ats))
		for i, a := range c.ats {
			cs[i].at = now.Add(a)
		}
		if got := batchTimeout(now, cs, dt); got != c.want {
			t.Errorf("batchTimeout(instants %v) = %v, want %v", c.ats, got, c.want)
		}
	}
}
