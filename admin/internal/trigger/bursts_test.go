package trigger

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestBursts: the parts of a large burst handed over apart count the
// fires of the parts before them; instants of few fires are not kept, and
// a burst's count is dropped burstKept after its instant.
func TestBursts(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	mark, second := now.Add(25*time.Second), now.Add(time.Second)
	var b bursts
	first := map[time.Time]int{mark: 230_000, second: 5}
	b.add(first, now)
	if diff := cmp.Diff(map[time.Time]int{mark: 230_000, second: 5}, first); diff != "" {
		t.Errorf("first part (-want +got):\n%s", diff)
	}
	late := map[time.Time]int{mark: 500, second: 5}
	b.add(late, now.Add(20*time.Second))
	if diff := cmp.Diff(map[time.Time]int{mark: 230_500, second: 5}, late); diff != "" {
		t.Errorf("a later part (-want +got):\n%s", diff)
	}
	after := map[time.Time]int{mark: 1}
	b.add(after, mark.Add(burstKept+time.Millisecond))
	if after[mark] != 1 {
		t.Errorf("a part handed over %v after its instant counts %d fires, want 1 (the burst's count dropped)", burstKept, after[mark])
	}
}
