package sdk

import (
	"sync"
	"time"
)

// settler ends the runs launched on their due instant (due.go) whose
// handlers returned, on one goroutine, in batches, after the burst they
// belong to has started: their end lines, results and metrics, and their
// jobs marked idle. A run launched on its instant has no worker waiting
// for it: its own goroutine calls its handler and hands what it returned
// here, so that a burst of 100,000 runs parks no goroutine per run or per
// job, and the starts of a burst go before the ends of its first runs.
type settler struct {
	mu        sync.Mutex
	queue     []returnedRun
	running   bool
	notBefore time.Time // on the process's clock: settle from then on (settleDelay)
}

// returnedRun is a launched run whose handler returned err at at.
type returnedRun struct {
	r    *run
	l    *launch
	err  error
	at   time.Time
	stop func() bool // stops the timeout's context.AfterFunc; nil without a timeout
}

// settleAfter holds back settling until delay from now, or later if it was
// held back further already.
func (d *dispatcher) settleAfter(delay time.Duration) {
	s := &d.settler
	s.mu.Lock()
	s.notBefore = later(s.notBefore, time.Now().Add(delay))
	s.mu.Unlock()
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// settle hands rr to the settler.
func (d *dispatcher) settle(rr returnedRun) {
	s := &d.settler
	s.mu.Lock()
	s.queue = append(s.queue, rr)
	start := !s.running
	s.running = true
	s.mu.Unlock()
	if start {
		go d.settleLoop()
	}
}

// settleLoop settles batches until the queue is empty. drain waits for
// each run it settles (launched runs count in d.wg until then).
func (d *dispatcher) settleLoop() {
	s := &d.settler
	for {
		s.mu.Lock()
		if wait := time.Until(s.notBefore); wait > 0 {
			s.mu.Unlock()
			time.Sleep(wait)
			continue
		}
		batch := s.queue
		s.queue = nil
		if len(batch) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		d.settleAll(batch)
	}
}

// settleAll ends the runs of batch: their results go to the finisher, and
// their jobs are idle again.
func (d *dispatcher) settleAll(batch []returnedRun) {
	ended := make([]finishedRun, len(batch))
	rs := make([]*run, len(batch))
	for i, rr := range batch {
		if rr.stop != nil {
			rr.stop()
		}
		ended[i] = finishedRun{rr.r, d.returned(rr.r, rr.l, rr.err, rr.at)}
		rr.r.cancel(nil) // its handler is done with its context
		rs[i] = rr.r
	}
	d.completeAll(ended)
	d.releaseAll(rs)
	for range batch {
		d.wg.Done()
	}
}
