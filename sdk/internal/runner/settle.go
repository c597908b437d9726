package runner

import (
	"sync"
	"sync/atomic"
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
	// returned is the runs handed over and not settled yet, the last
	// first, linked by run.returned.next: a handler's goroutine hands its
	// run over with one compare-and-swap, no lock and no allocation.
	returned atomic.Pointer[Run]
	running  atomic.Bool // a settleLoop runs

	mu        sync.Mutex
	notBefore time.Time // on the process's clock: settle from then on (settleDelay)
}

// handlerResult is what the handler of a launched run returned, and when.
type handlerResult struct {
	err  error
	at   time.Time
	next *Run // in settler.returned
}

// settleAfter holds back settling until delay from now, or later if it was
// held back further already.
func (d *Dispatcher) settleAfter(delay time.Duration) {
	s := &d.settler
	s.mu.Lock()
	if at := time.Now().Add(delay); at.After(s.notBefore) {
		s.notBefore = at
	}
	s.mu.Unlock()
}

// settle hands r, whose handler returned (r.returned), to the settler.
func (d *Dispatcher) settle(r *Run) {
	s := &d.settler
	for {
		head := s.returned.Load()
		r.returned.next = head
		if s.returned.CompareAndSwap(head, r) {
			break
		}
	}
	if s.running.CompareAndSwap(false, true) {
		go d.settleLoop()
	}
}

// settleLoop settles what was handed over until nothing is left. drain
// waits for each run it settles (launched runs count in d.wg until then).
func (d *Dispatcher) settleLoop() {
	s := &d.settler
	for {
		s.mu.Lock()
		wait := time.Until(s.notBefore)
		s.mu.Unlock()
		if wait > 0 {
			time.Sleep(wait)
			continue
		}
		head := s.returned.Swap(nil)
		if head == nil {
			s.running.Store(false)
			// A run handed over since the Swap found the loop running.
			if s.returned.Load() == nil || !s.running.CompareAndSwap(false, true) {
				return
			}
			continue
		}
		var batch []*Run
		for r := head; r != nil; r = r.returned.next {
			batch = append(batch, r)
		}
		d.settleAll(batch)
	}
}

// settleAll ends the runs of batch, the last handed over first: their
// results go to the finisher, in the order they were handed over, and
// their jobs are idle again.
func (d *Dispatcher) settleAll(batch []*Run) {
	ended := make([]finishedRun, len(batch))
	for i, r := range batch {
		rr := r.returned
		r.returned = handlerResult{}
		if r.launch.stop != nil {
			r.launch.stop()
		}
		ended[len(batch)-1-i] = finishedRun{r, d.returned(r, r.launch, rr.err, rr.at)}
		r.cancel(nil) // its handler is done with its context
	}
	d.completeAll(ended)
	d.releaseAll(batch)
	for range batch {
		d.wg.Done()
	}
}
