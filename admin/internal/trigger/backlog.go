package trigger

import (
	"sync"
	"time"
)

// The dispatcher's latest sends say how late it runs only while it
// sends: an admin that falls behind holds its claimed fires waiting for a
// dispatch slot, the writer or the CPU, reaches none of them for seconds,
// and its latest sends, old news, stop saying it is overloaded
// (lateSendValid). The scan then claimed as much as ever, and the backlog
// grew until batches gave up their wait for a slot, ten seconds after
// their instants: 150,000 to 210,000 fires of a 20,000-a-second load on
// one core were still RUNNING, neither sent nor recorded, ten seconds
// after the load ended (BENCHMARKS.md, issue 36). So the dispatcher also
// counts the scheduled fires handed to it and not reached yet for their
// calls (backlog), and says it is overloaded while the oldest of them is
// more than half the misfire threshold past its instant: the scan sheds
// until the backlog is back within it.

// backlogStep is the resolution of the backlog's instants.
const backlogStep = 100 * time.Millisecond

// backlog counts the scheduled fires handed to the dispatcher and not
// reached yet for their calls, by their instant rounded down to a
// backlogStep: a few dozen steps even for a backlog of a million fires.
type backlog struct {
	mu    sync.Mutex
	steps map[int64]int // fires by instant, in backlogSteps since the epoch
}

// counted reports whether fire f counts in the backlog: a scheduled fire,
// the only kind that can be overdue (lateness).
func counted(f *fire) bool {
	_, scheduled := lateness(f, time.Time{})
	return scheduled
}

// add counts the scheduled fires of fs, handed to the dispatcher, and
// marks them (fire.waits) for reached.
func (b *backlog) add(fs []fire) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.steps == nil {
		b.steps = map[int64]int{}
	}
	for i := range fs {
		if f := &fs[i]; counted(f) {
			f.waits = true
			b.steps[step(f.at)]++
		}
	}
}

// reached takes fire f out of the backlog, if it is in it: its call is
// being made, or it is settled or failed without one. fire.waits is read
// and written with b.mu held: a fire re-routed is in two calls.
func (b *backlog) reached(f *fire) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !f.waits {
		return
	}
	f.waits = false
	s := step(f.at)
	if b.steps[s]--; b.steps[s] <= 0 {
		delete(b.steps, s)
	}
}

// oldest returns the earliest instant of the fires in the backlog, to a
// backlogStep (rounded down), and false if it is empty.
func (b *backlog) oldest() (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	first, ok := int64(0), false
	for s := range b.steps {
		if !ok || s < first {
			first, ok = s, true
		}
	}
	return time.UnixMilli(first * backlogStep.Milliseconds()), ok
}

// len returns how many fires the backlog holds.
func (b *backlog) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, c := range b.steps {
		n += c
	}
	return n
}

// step is instant at (after the epoch) in backlogSteps since the epoch,
// rounded down.
func step(at time.Time) int64 { return at.UnixMilli() / backlogStep.Milliseconds() }
