package route

import (
	"context"
	"fmt"
	"testing"
)

// TestRingCache checks that CONSISTENT_HASH keeps at most ringsMax rings, evicting the least
// recently used, and routes the same after a ring is rebuilt.
func TestRingCache(t *testing.T) {
	t.Parallel()

	s := ConsistentHash().(*consistentHash)
	group := func(i int) []string {
		return []string{fmt.Sprintf("http://group%d-a", i), fmt.Sprintf("http://group%d-b", i)}
	}
	pick := func(addresses []string) string {
		t.Helper()
		p, err := s.Pick(context.Background(), 42, addresses)
		if err != nil {
			t.Fatal(err)
		}
		return p.Addresses[0]
	}

	hot := pick(group(0))
	for i := 1; i < 3*ringsMax; i++ {
		pick(group(i))
		pick(group(0)) // group 0 stays recently used
		if n := len(s.rings); n > ringsMax {
			t.Fatalf("after %d groups: %d rings cached, want at most %d", i+1, n, ringsMax)
		}
	}
	if _, ok := s.rings[s.key(group(0))]; !ok {
		t.Error("the most used ring was evicted")
	}
	if _, ok := s.rings[s.key(group(1))]; ok {
		t.Error("the least recently used ring is still cached")
	}
	if got := pick(group(0)); got != hot {
		t.Errorf("job 42 moved from %s to %s", hot, got)
	}
	first := pick(group(1)) // rebuilt
	if again := pick(group(1)); again != first {
		t.Errorf("job 42 moved from %s to %s after a rebuild", first, again)
	}
}
