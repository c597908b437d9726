package trigger

import (
	"context"
	"testing"

	"github.com/carillonhq/carillon/admin/internal/auth"
)

// TestAheadSlots: at most aheadCallsMax calls sent ahead are in flight to
// one executor; a call past them waits (here: its context ends first, and
// it takes no slot), another executor's calls do not, and a slot given
// back is taken again.
func TestAheadSlots(t *testing.T) {
	t.Parallel()
	e := newGateway(&Config{}, auth.NewExecutorTokens(""), nil)
	ctx := context.Background()
	var releases []func()
	for range aheadCallsMax {
		releases = append(releases, e.aheadSlot(ctx, "http://a"))
	}
	inFlight := func(address string) int {
		e.mu.Lock()
		defer e.mu.Unlock()
		return len(e.ahead[address])
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	e.aheadSlot(ended, "http://a")() // waits for a slot until its context ends
	if n := inFlight("http://a"); n != aheadCallsMax {
		t.Fatalf("%d calls in flight to a after one past the limit gave up, want %d", n, aheadCallsMax)
	}
	releaseB := e.aheadSlot(ctx, "http://b")
	if n := inFlight("http://b"); n != 1 {
		t.Fatalf("%d calls in flight to b, want 1: a's calls do not hold b's", n)
	}
	releaseB()
	releases[0]()
	if n := inFlight("http://a"); n != aheadCallsMax-1 {
		t.Fatalf("%d calls in flight to a after one returned, want %d", n, aheadCallsMax-1)
	}
	e.aheadSlot(ctx, "http://a") // takes the slot given back, at once
	if n := inFlight("http://a"); n != aheadCallsMax {
		t.Fatalf("%d calls in flight to a, want %d", n, aheadCallsMax)
	}
}
