package trigger

import "sync"

// writer runs the fire path's writes one at a time, on one goroutine while
// there are any, in the order of its lanes' priority: SQLite has one
// writer, so running them concurrently would only queue them in an order
// nobody chose. Claims of due fires go first, so a large batch of results
// arriving at the same moment cannot make fires late.
type writer struct {
	wg *sync.WaitGroup // counts the running drain, for Trigger.Wait

	mu      sync.Mutex
	lanes   []lane // highest priority first
	running bool
}

// lane is one kind of write waiting for the writer.
type lane interface {
	// take removes the next batch to write and returns the call that
	// writes it, or nil when nothing waits; writer.mu is held.
	take() func()
}

// kick starts the drain unless it is running.
func (w *writer) kick() {
	w.mu.Lock()
	start := !w.running
	w.running = true
	if start {
		w.wg.Add(1)
	}
	w.mu.Unlock()
	if start {
		go w.drain()
	}
}

// drain writes batches, highest priority first, until none is left.
func (w *writer) drain() {
	defer w.wg.Done()
	for {
		w.mu.Lock()
		var write func()
		for _, l := range w.lanes {
			if write = l.take(); write != nil {
				break
			}
		}
		if write == nil {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		write()
	}
}

// coalescer is a lane of the writer that hands batches of items to fn,
// each batch taking every group of items that queued while earlier writes
// ran (up to about max items). Idle, a group is written at once, alone;
// under load, many small groups become a few large transactions instead
// of a queue of small ones. A group is never split.
//
// When fn fails for a batch of several groups, each group is tried again
// on its own, so one group that cannot be written fails alone.
type coalescer[T any] struct {
	w   *writer
	max int
	fn  func(items []T) error

	groups []group[T] // guarded by w.mu
}

// group is one caller's items and where its outcome goes.
type group[T any] struct {
	items []T
	done  chan error // buffered: the writer never blocks on it
}

// newCoalescer returns a coalescer and adds it to w's lanes, after those
// added before it.
func newCoalescer[T any](w *writer, max int, fn func([]T) error) *coalescer[T] {
	c := &coalescer[T]{w: w, max: max, fn: fn}
	w.lanes = append(w.lanes, c)
	return c
}

// add queues items and returns the channel that receives the outcome of
// the write that handled them.
func (c *coalescer[T]) add(items []T) <-chan error {
	done := make(chan error, 1)
	c.w.mu.Lock()
	c.groups = append(c.groups, group[T]{items: items, done: done})
	c.w.mu.Unlock()
	c.w.kick()
	return done
}

// take implements lane.
func (c *coalescer[T]) take() func() {
	n, size := 0, 0
	for n < len(c.groups) && (n == 0 || size+len(c.groups[n].items) <= c.max) {
		size += len(c.groups[n].items)
		n++
	}
	if n == 0 {
		return nil
	}
	batch := c.groups[:n:n]
	c.groups = append([]group[T](nil), c.groups[n:]...)
	return func() {
		items := batch[0].items
		if len(batch) > 1 {
			items = make([]T, 0, size)
			for _, g := range batch {
				items = append(items, g.items...)
			}
		}
		err := c.fn(items)
		for _, g := range batch {
			if err != nil && len(batch) > 1 {
				g.done <- c.fn(g.items)
				continue
			}
			g.done <- err
		}
	}
}
