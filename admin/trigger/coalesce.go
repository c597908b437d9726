package trigger

import "sync"

// coalescer hands batches of items to fn, one call at a time, each call
// taking every group of items that queued while the previous call ran (up
// to about max items). Idle, a group is handled at once, alone; under load,
// many small groups become a few large ones, so the database's one writer
// runs a few large transactions instead of a queue of small ones. A group
// is never split.
//
// When a call fails for a batch of several groups, each group is tried
// again on its own, so one group that cannot be written fails alone.
type coalescer[T any] struct {
	max int
	fn  func(items []T) error
	wg  *sync.WaitGroup // counts the running drain, for Trigger.Wait

	mu      sync.Mutex
	groups  []group[T]
	running bool
}

// group is one caller's items and where its outcome goes.
type group[T any] struct {
	items []T
	done  chan error // buffered: drain never blocks on it
}

// add queues items and returns the channel that receives the outcome of
// the call that handled them.
func (c *coalescer[T]) add(items []T) <-chan error {
	done := make(chan error, 1)
	c.mu.Lock()
	c.groups = append(c.groups, group[T]{items: items, done: done})
	start := !c.running
	c.running = true
	if start {
		c.wg.Add(1)
	}
	c.mu.Unlock()
	if start {
		go c.drain()
	}
	return done
}

// drain handles queued groups until none is left.
func (c *coalescer[T]) drain() {
	defer c.wg.Done()
	for {
		c.mu.Lock()
		n, size := 0, 0
		for n < len(c.groups) && (n == 0 || size+len(c.groups[n].items) <= c.max) {
			size += len(c.groups[n].items)
			n++
		}
		if n == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		batch := c.groups[:n:n]
		c.groups = append([]group[T](nil), c.groups[n:]...)
		c.mu.Unlock()

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
