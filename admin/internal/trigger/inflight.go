package trigger

import "sync"

// inflight counts the trigger's goroutines and queued writes, like a
// sync.WaitGroup, except that Add may be called at any time, also while
// Wait waits: during a shutdown, results and the monitor keep adding work
// while the admin waits for the fires it claimed to be sent.
type inflight struct {
	mu   sync.Mutex
	n    int
	zero *sync.Cond
}

// Add adds delta to the count.
func (f *inflight) Add(delta int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.zero == nil {
		f.zero = sync.NewCond(&f.mu)
	}
	if f.n += delta; f.n < 0 {
		panic("trigger: negative inflight count")
	}
	if f.n == 0 {
		f.zero.Broadcast()
	}
}

// Done subtracts one.
func (f *inflight) Done() { f.Add(-1) }

// Go runs fn on its own goroutine, counted.
func (f *inflight) Go(fn func()) {
	f.Add(1)
	go func() {
		defer f.Done()
		fn()
	}()
}

// Wait waits until the count is zero.
func (f *inflight) Wait() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.n > 0 {
		f.zero.Wait()
	}
}
