package trigger

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// writer runs the fire path's writes one at a time, on one goroutine while
// there are any, in the order of its lanes' priority: SQLite has one
// writer, so running them concurrently would only queue them in an order
// nobody chose. Claims of due fires go first, so a large batch of results
// arriving at the same moment cannot make fires late.
type writer struct {
	wg  *inflight        // counts the running drain, for Trigger.Wait
	now func() time.Time // for lingering lanes

	mu      sync.Mutex
	lanes   []lane // highest priority first
	running bool
	wake    chan struct{} // a group was added while the drain runs
}

// lane is one kind of write waiting for the writer.
type lane interface {
	// take removes the next batch to write and returns the call that
	// writes it; or, when no batch is ready, nil and how long until one
	// is (negative: nothing waits). writer.mu is held.
	take(now time.Time) (write func(), ready time.Duration)
	// waited is how long the oldest waiting group has waited; writer.mu
	// is held.
	waited(now time.Time) time.Duration
	// queued names the lane and says how many items wait in it; writer.mu
	// is held.
	queued() (name string, items int)
	// taken is when the lane last took a batch; writer.mu is held.
	taken() time.Time
}

// queued returns the items waiting in each lane, by lane name.
func (w *writer) queued() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := make(map[string]int, len(w.lanes))
	for _, l := range w.lanes {
		name, n := l.queued()
		q[name] = n
	}
	return q
}

// starveAfter is how long a lower lane's group may wait before it goes
// ahead of higher lanes (the one written least lately first): a steady
// flood of claims must not keep results from being written as fast as
// they come. Claims are made 100 ms ahead of their instant, so waiting
// for one batch of each other lane does not make a fire late.
const starveAfter = 20 * time.Millisecond

// kick makes the drain look at the lanes, starting it unless it runs.
func (w *writer) kick() {
	w.mu.Lock()
	start := !w.running
	w.running = true
	if start {
		w.wg.Add(1)
	} else {
		notify(w.wake)
	}
	w.mu.Unlock()
	if start {
		go w.drain()
	}
}

func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// drain writes batches, highest priority first, until none is left.
func (w *writer) drain() {
	defer w.wg.Done()
	var timer *time.Timer
	for {
		w.mu.Lock()
		var write func()
		wait := time.Duration(-1)
		now := w.now()
		// Of the lower lanes starved, the one written least lately: a
		// backlog in one (a burst's dispatch records) must not starve the
		// lanes after it (the results that would take those records).
		var starved lane
		for _, l := range w.lanes[1:] {
			if l.waited(now) >= starveAfter && (starved == nil || l.taken().Before(starved.taken())) {
				starved = l
			}
		}
		if starved != nil {
			write, _ = starved.take(now)
		}
		for _, l := range w.lanes {
			if write != nil {
				break
			}
			var ready time.Duration
			if write, ready = l.take(now); write != nil {
				break
			}
			if ready >= 0 && (wait < 0 || ready < wait) {
				wait = ready
			}
		}
		if write == nil && wait < 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		if write != nil {
			write()
			continue
		}
		// Only lingering batches wait: sleep until the first is ready, or
		// until something new (a claim) arrives.
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		} else {
			timer.Reset(wait)
		}
		select {
		case <-timer.C:
		case <-w.wake:
		}
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
//
// A lane that splits (split: results, which may be settled in parts)
// queues a caller's items beyond max as several groups of at most max,
// whose outcome goes to the caller once all are written (the first error,
// if any): the other lanes' writes go between them, and a call of five
// thousand results holds up a claim no longer than a call of one
// thousand.
//
// A lane with a linger holds its first group up to that long for others to
// join it, unless max items are waiting, or the lane wrote nothing for
// lingerIdle: for writes nobody waits on closely, so that a steady
// trickle also makes few transactions, while a lone write after a quiet
// spell (the result of a workflow node whose dependents wait for it) is
// not held up for company that is not coming.
type coalescer[T any] struct {
	w      *writer
	name   string
	max    int
	linger time.Duration
	split  bool // a caller's items beyond max go as several groups
	fn     func(items []T) error

	groups  []group[T] // guarded by w.mu
	size    int        // items in groups
	last    time.Time  // when the lane last took a batch; guarded by w.mu
	full    time.Time  // when max items or more last waited; guarded by w.mu
	writing []group[T] // the batch being written, until its write returned; guarded by w.mu
}

// lingerIdle is how long a lingering lane must have written nothing for
// its next group to be written at once.
const lingerIdle = 100 * time.Millisecond

// group is one caller's items, or a part of them (split), and where its
// outcome goes.
type group[T any] struct {
	items []T
	added time.Time
	done  chan error // buffered: the writer never blocks on it
	parts *parts     // the caller's other parts, when split; nil: the whole
}

// parts counts the groups a caller's items were split into that are not
// written yet, and keeps the first error of those that were.
type parts struct {
	mu   sync.Mutex
	left int
	err  error
}

// finish hands the outcome of g's write to its caller: at once for a
// whole group, once every part was written for a part.
func (g group[T]) finish(err error) {
	if g.parts == nil {
		g.done <- err
		return
	}
	p := g.parts
	p.mu.Lock()
	defer p.mu.Unlock()
	p.left--
	p.err = cmp.Or(p.err, err)
	if p.left == 0 {
		g.done <- p.err
	}
}

// newCoalescer returns a coalescer and adds it to w's lanes, after those
// added before it.
func newCoalescer[T any](w *writer, name string, max int, linger time.Duration, fn func([]T) error) *coalescer[T] {
	c := &coalescer[T]{w: w, name: name, max: max, linger: linger, fn: fn}
	w.lanes = append(w.lanes, c)
	return c
}

// add queues items and returns the channel that receives the outcome of
// the write that handled them.
func (c *coalescer[T]) add(items []T) <-chan error {
	done := make(chan error, 1)
	g := group[T]{items: items, done: done}
	var gs []group[T]
	if c.split && len(items) > c.max {
		g.parts = &parts{}
		for chunk := range slices.Chunk(items, c.max) {
			g.items = chunk
			gs = append(gs, g)
		}
		g.parts.left = len(gs)
	} else {
		gs = []group[T]{g}
	}
	c.w.mu.Lock()
	now := c.w.now()
	for _, g := range gs {
		g.added = now
		c.groups = append(c.groups, g)
	}
	c.size += len(items)
	if c.size >= c.max {
		c.full = now
	}
	c.w.mu.Unlock()
	c.w.kick()
	return done
}

// backlogged says whether max items or more waited in the lane within the
// last period: the writer is behind with it, not between two of its
// callers' writes.
func (c *coalescer[T]) backlogged(period time.Duration) bool {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	return c.size >= c.max || c.w.now().Sub(c.full) < period
}

// withdraw takes the group whose outcome goes to done out of the lane, if
// it still waits there, and reports whether it did: its items will not be
// written, and done receives nothing. False when a write took it. Not for
// a lane that splits.
func (c *coalescer[T]) withdraw(done <-chan error) bool {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	for i, g := range c.groups {
		if g.done == done {
			c.size -= len(g.items)
			c.groups = slices.Delete(c.groups, i, i+1)
			return true
		}
	}
	return false
}

// waited implements lane.
func (c *coalescer[T]) waited(now time.Time) time.Duration {
	if len(c.groups) == 0 {
		return 0
	}
	return now.Sub(c.groups[0].added)
}

// queued implements lane.
func (c *coalescer[T]) queued() (string, int) { return c.name, c.size }

// each calls fn with every item waiting in the lane or being written,
// under the writer's lock: fn must be quick and must not use the writer.
// An item leaves once its write returned, so a reader that read the
// database before calling each sees every item not yet stored there.
func (c *coalescer[T]) each(fn func(T)) {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	for _, gs := range [][]group[T]{c.writing, c.groups} {
		for _, g := range gs {
			for _, it := range g.items {
				fn(it)
			}
		}
	}
}

// taken implements lane.
func (c *coalescer[T]) taken() time.Time { return c.last }

// take implements lane.
func (c *coalescer[T]) take(now time.Time) (func(), time.Duration) {
	if len(c.groups) == 0 {
		return nil, -1
	}
	if age := now.Sub(c.groups[0].added); age < c.linger && c.size < c.max && now.Sub(c.last) < lingerIdle {
		return nil, c.linger - age
	}
	c.last = now
	n, size := 0, 0
	for n < len(c.groups) && (n == 0 || size+len(c.groups[n].items) <= c.max) {
		size += len(c.groups[n].items)
		n++
	}
	batch := c.groups[:n:n]
	c.groups = append([]group[T](nil), c.groups[n:]...)
	c.size -= size
	c.writing = batch
	return func() {
		items := batch[0].items
		if len(batch) > 1 {
			items = make([]T, 0, size)
			for _, g := range batch {
				items = append(items, g.items...)
			}
		}
		err := c.fn(items)
		errs := make([]error, len(batch))
		for i, g := range batch {
			errs[i] = err
			if err != nil && len(batch) > 1 {
				errs[i] = c.fn(g.items)
			}
		}
		c.w.mu.Lock()
		c.writing = nil
		c.w.mu.Unlock()
		for i, g := range batch {
			g.finish(errs[i])
		}
	}, 0
}
