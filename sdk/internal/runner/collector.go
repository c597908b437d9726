package runner

import (
	"sync"
	"sync/atomic"
	"time"
)

// collector finishes the runs launched on their due instant (launcher.go)
// whose handlers returned, on one goroutine, in batches, after the burst
// they belong to has started: their end lines, results and observers, and
// their jobs marked idle. A run launched on its instant has no worker
// waiting for it: its own goroutine calls its handler and hands what it
// returned here, so that a burst parks no goroutine per run or per job,
// and the starts of a burst go before the ends of its first runs.
type collector struct {
	d *Dispatcher
	// returned is the runs handed over and not finished yet, the last
	// first, linked by Run.returned.next: a handler's goroutine hands its
	// run over with one compare-and-swap, no lock and no allocation.
	returned atomic.Pointer[Run]
	running  atomic.Bool // a loop runs

	mu        sync.Mutex
	notBefore time.Time // on the process's clock: finish from then on (finishDelay)
}

// handlerResult is what the handler of a launched run returned, and when.
type handlerResult struct {
	err  error
	at   time.Time
	next *Run // in collector.returned
}

// holdUntil holds back finishing until delay from now, or later if it was
// held back further already.
func (c *collector) holdUntil(delay time.Duration) {
	c.mu.Lock()
	if at := time.Now().Add(delay); at.After(c.notBefore) {
		c.notBefore = at
	}
	c.mu.Unlock()
}

// add hands r, whose handler returned (r.returned), to the collector.
func (c *collector) add(r *Run) {
	for {
		head := c.returned.Load()
		r.returned.next = head
		if c.returned.CompareAndSwap(head, r) {
			break
		}
	}
	if c.running.CompareAndSwap(false, true) {
		go c.loop()
	}
}

// loop finishes what was handed over until nothing is left. Drain waits
// for each run it finishes (launched runs count in d.wg until then).
func (c *collector) loop() {
	for {
		c.mu.Lock()
		wait := time.Until(c.notBefore)
		c.mu.Unlock()
		if wait > 0 {
			time.Sleep(wait)
			continue
		}
		head := c.returned.Swap(nil)
		if head == nil {
			c.running.Store(false)
			// A run handed over since the Swap found the loop running.
			if c.returned.Load() == nil || !c.running.CompareAndSwap(false, true) {
				return
			}
			continue
		}
		var batch []*Run
		for r := head; r != nil; r = r.returned.next {
			batch = append(batch, r)
		}
		c.finishAll(batch)
	}
}

// finishAll finishes the runs of batch, the last handed over first: their
// results go to the recorder, in the order they were handed over, and
// their jobs are idle again.
func (c *collector) finishAll(batch []*Run) {
	d := c.d
	ended := make([]endedRun, len(batch))
	for i, r := range batch {
		rr := r.returned
		r.returned = handlerResult{}
		if r.launch.stop != nil {
			r.launch.stop()
		}
		ended[len(batch)-1-i] = endedRun{r, r.launch.finishReturned(rr.err, rr.at)}
		r.cancel(nil) // its handler is done with its context
	}
	d.recorder.add(ended)
	d.release(batch)
	for range batch {
		d.wg.Done()
	}
}
