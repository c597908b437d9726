package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/carillonhq/carillon/internal/clock"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestFakeAfterFunc: a function runs once the clock passes its deadline,
// not before, and not at all if stopped first; AwaitPending says when code
// waits on the clock.
func TestFakeAfterFunc(t *testing.T) {
	t.Parallel()
	c := clock.NewFake(t0)
	ran := make(chan time.Duration, 2)
	go func() {
		c.AfterFunc(time.Minute, func() { ran <- time.Minute })
		stop := c.AfterFunc(2*time.Minute, func() { ran <- 2 * time.Minute })
		stop()
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if !c.AwaitPending(ctx, 1) {
		t.Fatal("AwaitPending: the goroutine never waited on the clock")
	}
	c.Add(59 * time.Second)
	if c.Pending() != 1 {
		t.Fatalf("Pending before the deadline = %d, want 1", c.Pending())
	}
	c.Add(time.Hour)
	if d := <-ran; d != time.Minute {
		t.Errorf("ran the function of %v, want the one of 1m", d)
	}
	if c.Pending() != 0 {
		t.Errorf("Pending after the deadlines = %d, want 0 (one ran, one stopped)", c.Pending())
	}
	select {
	case d := <-ran:
		t.Errorf("the stopped function of %v ran", d)
	default:
	}
}

// TestFakeMoves: Step moves the clock at each reading, Add moves it either
// way, Set only forwards, and AwaitTime says when it got that far.
func TestFakeMoves(t *testing.T) {
	t.Parallel()
	c := clock.NewFake(t0)
	c.Step = time.Second
	if got := c.Now(); !got.Equal(t0.Add(time.Second)) {
		t.Errorf("first Now with a Step = %v, want t0+1s", got.Sub(t0))
	}
	c.Step = 0
	c.Add(-time.Hour)
	if got := c.Now(); !got.Equal(t0.Add(time.Second - time.Hour)) {
		t.Errorf("Now after Add(-1h) = %v, want t0-59m59s", got.Sub(t0))
	}
	c.Set(t0.Add(-2 * time.Hour))
	if got := c.Now(); !got.Equal(t0.Add(time.Second - time.Hour)) {
		t.Errorf("Set moved the clock backwards, to %v", got.Sub(t0))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	go c.Set(t0.Add(time.Hour))
	if !c.AwaitTime(ctx, t0.Add(time.Hour)) {
		t.Fatal("AwaitTime: the clock never got to t0+1h")
	}
}

// TestFakeAwaitTimer: AwaitTimer returns once a function waits for the
// clock to read that very instant, not for a timer of another one.
func TestFakeAwaitTimer(t *testing.T) {
	t.Parallel()
	c := clock.NewFake(t0)
	c.AfterFunc(time.Second, func() {})
	short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if c.AwaitTimer(short, t0.Add(2*time.Second)) {
		t.Fatal("AwaitTimer returned for a timer of another instant")
	}
	go c.AfterFunc(2*time.Second, func() {})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if !c.AwaitTimer(ctx, t0.Add(2*time.Second)) {
		t.Fatal("AwaitTimer: the goroutine's timer never came")
	}
}
