// Package clock is the one injected clock of Carillon's code, and the
// rule for how its tests wait.
//
// The rule, for every test of the admin and the SDK:
//
//  1. Where the code under test can run in a testing/synctest bubble, its
//     test runs it in one (synctest.Test) and the code reads the machine's
//     time (time.Now, time.AfterFunc, timers, tickers): the bubble's fake
//     clock moves only when every goroutine in it is blocked, so a test
//     sleeps an hour at once and synctest.Wait says when the code is idle.
//     A bubble fits code that works in memory or on files (SQLite
//     included), with its goroutines and timers started inside the bubble.
//  2. Where it cannot (it talks to PostgreSQL, to servers or processes
//     started outside the bubble, or a test must move the time backwards,
//     as a wall clock may), the code takes a [Clock]: [Wall] in production,
//     a [Fake] in tests, moved by hand. A part that only reads the time may
//     take just the Clock's Now, as a NowFunc func() time.Time field
//     (pass clock.Wall.Now or a Fake's Now), never a clock of its own.
//  3. Outside a bubble, a test does not sleep to wait for the code: it
//     waits on a signal the code emits (a channel it closes, a hook it
//     calls, a Fake's AwaitPending or AwaitTime, a testsignal.Signal),
//     bounded so that a broken test fails instead of hanging. The one
//     exception is waiting on another process (a child a script started,
//     a Java executor), which has no signal to give: such a wait polls,
//     bounded, with a comment saying what it waits for.
package clock

import "time"

// Clock is a source of time that tests can replace: Now for timestamps
// and deadlines, AfterFunc for waits.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f on its own goroutine once d has passed, unless
	// stop is called first; stop reports whether it prevented the call.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// Wall is the machine's clock.
var Wall Clock = wall{}

// wall is the machine's clock.
type wall struct{}

func (wall) Now() time.Time { return time.Now() }

func (wall) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
