package trigger

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// slowDispatch is how long a dispatch may take before it counts as slow.
	slowDispatch = 500 * time.Millisecond
	// slowLimit is how many slow dispatches in one minute move a job to the
	// slow pool for the rest of that minute (xxl-job's rule).
	slowLimit = 10
)

// pool bounds concurrent dispatches. Fires wait for a slot; when more than
// maxWaiting already wait for one they need now, the pool is overloaded
// and the fire fails at once with a reason instead of piling up.
type pool struct {
	name       string
	slots      chan struct{}
	waiting    atomic.Int64
	maxWaiting int64
}

func newPool(name string, size int) *pool {
	return &pool{name: name, slots: make(chan struct{}, size), maxWaiting: int64(size) * 16}
}

// acquire takes a slot, waiting at most wait; it returns false at once when
// the pool is overloaded, and false after wait if no slot freed up. A
// batch handed over ahead of its instant (ahead) waits without counting
// toward the overload: the scheduler hands a large burst over that early
// on purpose, and its thousands of batches wait for slots by design.
func (p *pool) acquire(wait time.Duration, ahead bool) bool {
	if !ahead {
		if p.waiting.Add(1) > p.maxWaiting {
			p.waiting.Add(-1)
			return false
		}
		defer p.waiting.Add(-1)
	}
	select {
	case p.slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case p.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}

func (p *pool) release() { <-p.slots }

// take takes a slot, waiting as long as ctx lets it; false when ctx ended
// first. A slot free now is taken whatever ctx says.
func (p *pool) take(ctx context.Context) bool {
	select {
	case p.slots <- struct{}{}:
		return true
	default:
	}
	select {
	case p.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// batchSlot is one dispatch batch's use of a slot of its pool: taken while
// the batch prepares its calls and makes them, let go while it waits for
// its instant, so that the batches of a large burst, handed over long
// before their instant (Config.SendAheadPerRun), do not wait for slots
// that batches waiting for the same instant hold. The batch's instants
// (instant.send, one per instant, concurrently) share it: it is let go when
// none of them works.
type batchSlot struct {
	p     *pool
	mu    sync.Mutex
	busy  int  // the batch's instants working
	taken bool // the slot is taken
}

// work marks one more of the batch's instants working, taking the slot
// back if it was let go (waiting as long as ctx lets it: a batch that
// cannot have one goes on without, and its calls end with ctx).
func (s *batchSlot) work(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy++
	if !s.taken {
		s.taken = s.p.take(ctx)
	}
}

// idle marks one of the batch's instants waiting; the slot is let go when
// none works.
func (s *batchSlot) idle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy--
	if s.busy == 0 && s.taken {
		s.p.release()
		s.taken = false
	}
}

// slowJobs remembers which jobs dispatched slowly this minute, so their
// fires go to the slow pool and a slow or dead executor cannot take every
// dispatch slot from healthy ones.
type slowJobs struct {
	mu     sync.Mutex
	minute int64
	counts map[int64]int
}

// observe records one dispatch of job that took d, at now.
func (s *slowJobs) observe(job int64, d time.Duration, now time.Time) {
	if d <= slowDispatch {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roll(now)
	s.counts[job]++
}

// slow reports whether job dispatched slowly more than slowLimit times in
// the current minute.
func (s *slowJobs) slow(job int64, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roll(now)
	return s.counts[job] > slowLimit
}

func (s *slowJobs) roll(now time.Time) {
	if m := now.Unix() / 60; m != s.minute || s.counts == nil {
		s.minute, s.counts = m, map[int64]int{}
	}
}
