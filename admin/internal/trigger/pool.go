package trigger

import (
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
// maxWaiting already wait, the pool is overloaded and the fire fails at
// once with a reason instead of piling up.
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
// the pool is overloaded, and false after wait if no slot freed up.
func (p *pool) acquire(wait time.Duration) bool {
	if p.waiting.Add(1) > p.maxWaiting {
		p.waiting.Add(-1)
		return false
	}
	defer p.waiting.Add(-1)
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
