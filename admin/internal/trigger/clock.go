package trigger

import (
	"context"
	"time"

	"github.com/carillonhq/carillon/internal/clock"
)

// The trigger's clock (Config.Clock) gives the timestamps it records
// (claims, sends, settlements), the instants it waits for, how long
// dispatch records are deferred (recordDelay) and the intervals of Monitor
// and Reconcile. Tests inject a clock.Fake they move by hand. Three waits
// stay on the machine's clock because they bound work rather than follow
// the schedule: the write coalescer's few milliseconds of lingering, a
// dispatch's wait for a pool slot, and a route's wait for the writer
// (awaitRoutes).

// sleep waits on c until d has passed or ctx ends, and reports whether d
// passed.
func sleep(ctx context.Context, c clock.Clock, d time.Duration) bool {
	return sleepOr(ctx, c, d, nil)
}

// sleepOr is sleep that also returns, false, when wake is closed.
func sleepOr(ctx context.Context, c clock.Clock, d time.Duration, wake <-chan struct{}) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	done := make(chan struct{})
	stop := c.AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return true
	case <-wake:
		stop()
		return false
	case <-ctx.Done():
		stop()
		return false
	}
}
