package service

import (
	"context"
	"errors"
	"sync"
)

// Group is a list of services that run together: Start starts them in
// order, Stop stops them in reverse order, so that each service stops
// before those it was started after. A Group is itself a Watched service:
// it fails when one of its Watched members ends with an error.
type Group struct {
	services []Service

	mu       sync.Mutex
	started  int  // how many services Start started, in order
	stopping bool // Stop was called
	failed   int  // the index of the first member that failed, or -1
	err      error
	done     chan struct{} // closed at the first failure, or by Stop
	stopped  chan struct{} // closed once Stop has stopped every member
	watchers sync.WaitGroup
}

// NewGroup returns a Group of services, to start in this order.
func NewGroup(services ...Service) *Group {
	return &Group{services: services, failed: -1, done: make(chan struct{}), stopped: make(chan struct{})}
}

// Start starts the services one after another, each once the one before
// it has started, all with ctx. If one fails to start, Start stops those
// it started, in reverse order, and returns that one's error.
func (g *Group) Start(ctx context.Context) error {
	for i, s := range g.services {
		g.mu.Lock()
		stopping := g.stopping
		g.mu.Unlock()
		if stopping {
			return ErrStarted
		}
		if err := s.Start(ctx); err != nil {
			g.Stop()
			return err
		}
		g.mu.Lock()
		g.started = i + 1
		g.mu.Unlock()
		if w, ok := s.(Watched); ok {
			g.watchers.Go(func() { g.watch(i, w) })
		}
	}
	return nil
}

// watch fails the group if member i ends with an error before Stop.
func (g *Group) watch(i int, w Watched) {
	<-w.Done()
	err := w.Err()
	if err == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopping || g.failed >= 0 {
		return
	}
	g.failed, g.err = i, err
	close(g.done)
}

// Stop stops the services Start started, in reverse order, each once the
// one after it has stopped. A second Stop waits for the first.
func (g *Group) Stop() {
	g.mu.Lock()
	if g.stopping {
		g.mu.Unlock()
		<-g.stopped
		return
	}
	g.stopping = true
	started, failed := g.started, g.failed
	if failed < 0 {
		close(g.done)
	}
	g.mu.Unlock()
	for i := started - 1; i >= 0; i-- {
		g.services[i].Stop()
	}
	g.watchers.Wait()
	errs := make([]error, 0, started)
	for i := started - 1; i >= 0; i-- {
		if w, ok := g.services[i].(Watched); ok && i != failed {
			errs = append(errs, w.Err())
		}
	}
	g.mu.Lock()
	g.err = errors.Join(append([]error{g.err}, errs...)...)
	g.mu.Unlock()
	close(g.stopped)
}

// Done is closed once a member failed (ended on its own with an error),
// or once Stop began.
func (g *Group) Done() <-chan struct{} { return g.done }

// Err is the first member's failure, and after Stop with it the errors
// the other members ended with (a server's failed shutdown), in the
// order they stopped; nil while none failed.
func (g *Group) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}
