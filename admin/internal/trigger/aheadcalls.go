package trigger

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/carillonhq/carillon/internal/clock"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Calls sent ahead of their instant (Config.SendAhead) leave SendLead
// before it, each instant's on their own: a load spread over the second
// (5,000 FIX_RATE jobs) made a call of two or three runs to each executor
// every millisecond, and the calls, more than their runs, were what
// sending cost the admin. So the calls to one executor that leave close
// together share one RunBatch: the first waits for company, up to
// aheadLinger and at most a quarter of the time left before its instant,
// and the others join it while it waits, if it leaves early enough for
// them; it leaves at once when it is full (batchMax runs, or
// aheadCallsMax calls: every slot of its executor). A call of a burst
// (aheadSmall runs or more) does not wait. Its runs still reach
// their executor long before their instant, which is when they start;
// each call learns what became of its own runs as if it had been made
// alone.

// aheadLinger is how long the first of the calls sent ahead to an
// executor waits for others to share its RunBatch: with the default
// SendAhead (300 ms) about the quarter of it that bounds the wait anyway.
const aheadLinger = 60 * time.Millisecond

// aheadSmall bounds the runs of a call that waits for company or joins
// another: a larger call, a part of a burst, gains little from sharing,
// and leaves at once.
const aheadSmall = batchMax / 8

// aheadKey names an executor of a group: calls share a RunBatch only when
// they carry the same group's token to the same address.
type aheadKey struct {
	group   int64
	address string
}

// aheadCalls gathers the calls sent ahead into RunBatches, by executor.
type aheadCalls struct {
	clock clock.Clock // for the time left before an instant

	mu   sync.Mutex
	open map[aheadKey]*aheadBatch // the batch each executor's calls may join
}

func newAheadCalls(c clock.Clock) *aheadCalls {
	return &aheadCalls{clock: c, open: map[aheadKey]*aheadBatch{}}
}

// aheadBatch is the runs of the calls that share one RunBatch.
type aheadBatch struct {
	leaveAt time.Time
	full    chan struct{} // closed by the call that fills it
	done    chan struct{} // closed once the RunBatch returned

	// Under aheadCalls.mu until the batch leaves; read-only after.
	reqs  []*carillonv1.RunRequest
	calls int

	// Set before done is closed.
	res   *carillonv1.RunBatchResponse
	err   error
	start time.Time
	took  time.Duration
}

// sharedCall is what became of one call's runs in the RunBatch that
// carried them.
type sharedCall struct {
	outcomes []*carillonv1.RunOutcome // the call's runs', in order; nil on err
	err      error
	start    time.Time     // when the RunBatch was made
	took     time.Duration // how long it took
	runs     int           // the runs of the whole RunBatch
	calls    int           // the calls that shared it
}

// send sends reqs, the runs of a call to the executor key due at dueAt, in
// one RunBatch with the runs of other calls to it that come meanwhile, and
// returns what became of them. call makes the RunBatch; the first call's
// makes it, with that call's ctx, so a call that joins another's waits for
// it, whatever its own ctx (its runs are in it).
func (a *aheadCalls) send(ctx context.Context, key aheadKey, reqs []*carillonv1.RunRequest, dueAt time.Time,
	call func(context.Context, []*carillonv1.RunRequest) (*carillonv1.RunBatchResponse, error)) sharedCall {
	now := a.clock.Now()
	room := dueAt.Sub(now) / 4 // how long these runs may wait for company
	a.mu.Lock()
	small := len(reqs) < aheadSmall
	if b := a.open[key]; small && b != nil && !b.leaveAt.After(now.Add(room)) && len(b.reqs)+len(reqs) <= batchMax {
		off := len(b.reqs)
		b.reqs = append(b.reqs, reqs...)
		b.calls++
		if len(b.reqs) >= batchMax || b.calls >= aheadCallsMax {
			delete(a.open, key)
			close(b.full)
		}
		a.mu.Unlock()
		<-b.done
		return b.result(off, len(reqs))
	}
	wait := min(aheadLinger, room)
	b := &aheadBatch{leaveAt: now.Add(wait), full: make(chan struct{}), done: make(chan struct{}), reqs: slices.Clip(reqs), calls: 1}
	lingers := wait > 0 && small
	if lingers {
		a.open[key] = b // in place of a batch this call could not join, which leaves on its own
	}
	a.mu.Unlock()
	if lingers {
		// On the machine's clock, as the writer's lanes linger: a
		// batching delay, not a schedule (a test's fake clock moves only
		// at its instants).
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-b.full:
		case <-ctx.Done():
		}
		timer.Stop()
		a.mu.Lock()
		if a.open[key] == b {
			delete(a.open, key)
		}
		a.mu.Unlock()
	}
	// Left: nobody joins any more (a.mu orders the last join before this).
	b.start = a.clock.Now()
	b.res, b.err = call(ctx, b.reqs)
	b.took = a.clock.Now().Sub(b.start)
	close(b.done)
	return b.result(0, len(reqs))
}

// result is what became of the n runs from off of a batch that returned.
func (b *aheadBatch) result(off, n int) sharedCall {
	s := sharedCall{err: b.err, start: b.start, took: b.took, runs: len(b.reqs), calls: b.calls}
	if s.err != nil {
		return s
	}
	all, err := batchOutcomes(b.res, len(b.reqs))
	if err != nil {
		s.err = err
		return s
	}
	s.outcomes = all[off : off+n]
	return s
}
