package clock

import (
	"context"
	"sync"
	"time"
)

// Fake is a [Clock] for tests that moves only when told: Add and Set move
// it, and the functions given to AfterFunc run when it passes their
// deadlines. With a Step, every reading moves it too, so that code paced
// by the clock sees time pass without the test sleeping.
//
// A test waits for the code under test with AwaitPending ("it is waiting
// on the clock now") or AwaitTime ("the clock got this far"), which return
// as soon as the clock's state says so, instead of polling on the
// machine's clock. A Fake is safe for concurrent use.
type Fake struct {
	// Step, if set before use, moves the clock by Step at each Now, and
	// makes AfterFunc's waits pass at once (the clock jumps to their end).
	Step time.Duration

	mu      sync.Mutex
	now     time.Time
	timers  []*timer
	changed chan struct{} // closed and replaced at every move and every new timer
}

type timer struct {
	at   time.Time
	f    func()
	done bool
}

// NewFake returns a Fake at t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now returns the clock's time, after moving it by Step.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	c.now = c.now.Add(c.Step)
	now := c.now
	if c.Step != 0 {
		c.signal()
	}
	due := c.due()
	c.mu.Unlock()
	run(due)
	return now
}

// Add moves the clock by d (backwards if d < 0, as a wall clock set back)
// and runs the functions whose time has come,
// each on its own goroutine.
func (c *Fake) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.signal()
	due := c.due()
	c.mu.Unlock()
	run(due)
}

// Set moves the clock to t (not backwards) and runs what came due.
func (c *Fake) Set(t time.Time) {
	c.mu.Lock()
	if t.After(c.now) {
		c.now = t
		c.signal()
	}
	due := c.due()
	c.mu.Unlock()
	run(due)
}

// AfterFunc runs f on its own goroutine once the clock has moved d past
// now; stop cancels it and reports whether it had not run yet. With a
// Step, the clock moves by d at once.
func (c *Fake) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	c.mu.Lock()
	tm := &timer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, tm)
	if c.Step > 0 && tm.at.After(c.now) {
		c.now = tm.at
	}
	c.signal()
	due := c.due()
	c.mu.Unlock()
	run(due)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if tm.done {
			return false
		}
		tm.done = true
		return true
	}
}

// Pending returns how many AfterFunc functions wait for the clock.
func (c *Fake) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending()
}

// pending counts the timers not yet run or stopped. c.mu is held.
func (c *Fake) pending() int {
	n := 0
	for _, tm := range c.timers {
		if !tm.done {
			n++
		}
	}
	return n
}

// AwaitPending waits until at least n AfterFunc functions wait for the
// clock, that is, until the code under test is waiting on it, and reports
// whether they did before ctx ended.
func (c *Fake) AwaitPending(ctx context.Context, n int) bool {
	return c.await(ctx, func() bool { return c.pending() >= n })
}

// AwaitTimer waits until an AfterFunc function waits for the clock to
// read t exactly: the code under test waits for that instant, so that a
// Set to t runs it. (AwaitPending with a Set right after can race a
// timer being made: code that computed its wait from Now before the Set
// and registers it after waits past t.) It reports whether one did before
// ctx ended.
func (c *Fake) AwaitTimer(ctx context.Context, t time.Time) bool {
	return c.await(ctx, func() bool {
		for _, tm := range c.timers {
			if !tm.done && tm.at.Equal(t) {
				return true
			}
		}
		return false
	})
}

// AwaitTime waits until the clock reads t or later, moved by the code under
// test (with a Step) or by another goroutine, and reports whether it did
// before ctx ended.
func (c *Fake) AwaitTime(ctx context.Context, t time.Time) bool {
	return c.await(ctx, func() bool { return !c.now.Before(t) })
}

// await waits until cond, called with c.mu held, is true at a change of
// the clock.
func (c *Fake) await(ctx context.Context, cond func() bool) bool {
	for {
		c.mu.Lock()
		if cond() {
			c.mu.Unlock()
			return true
		}
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// signal wakes the goroutines in await. c.mu is held.
func (c *Fake) signal() {
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// due takes the timers whose time has come. c.mu is held.
func (c *Fake) due() []func() {
	var fs []func()
	kept := c.timers[:0]
	for _, tm := range c.timers {
		switch {
		case tm.done:
		case !tm.at.After(c.now):
			tm.done = true
			fs = append(fs, tm.f)
		default:
			kept = append(kept, tm)
		}
	}
	clear(c.timers[len(kept):])
	c.timers = kept
	return fs
}

func run(fs []func()) {
	for _, f := range fs {
		go f()
	}
}
