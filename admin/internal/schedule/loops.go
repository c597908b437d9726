package schedule

import (
	"context"
	"sync"
	"time"

	"github.com/carillonhq/carillon/admin/internal/service"
)

// ScanLoop returns the service of the scheduler's scans. Its Start
// recovers the pending runs a previous admin left (failing if it cannot
// read them), then it scans until stopped. Start it after the fire loop
// (FireLoop), which hands the fires it claims to the dispatcher, and stop
// it before.
func (s *Scheduler) ScanLoop() service.Service {
	return &scanLoop{Loop: service.NewLoop(s.scans), s: s}
}

// scanLoop is the service of ScanLoop.
type scanLoop struct {
	*service.Loop
	s *Scheduler
}

// Start recovers the previous admin's pending runs, then starts scanning.
func (l *scanLoop) Start(ctx context.Context) error {
	now := time.Now()
	l.s.health.start(now)
	l.s.behind.started = now
	if err := l.s.recover(ctx); err != nil {
		l.s.health.stop()
		return err
	}
	return l.Loop.Start(ctx)
}

// FireLoop returns the service that hands queued runs to d at their
// instants. When it stops, it hands d every fire the scans claimed that
// is still queued (the dispatcher sends each on its instant), so that a
// graceful stop leaves no claimed fire unsent: stop the scan loop
// (ScanLoop) first.
func (s *Scheduler) FireLoop(d Dispatcher) service.Service {
	return &fireLoop{Loop: service.NewLoop(func(ctx context.Context) error {
		s.fireLoop(ctx, d)
		return nil
	}), s: s, d: d}
}

// fireLoop is the service of FireLoop.
type fireLoop struct {
	*service.Loop
	s *Scheduler
	d Dispatcher

	mu       sync.Mutex
	started  bool
	handOver sync.Once
}

// Start starts handing queued runs to the dispatcher.
func (l *fireLoop) Start(ctx context.Context) error {
	if err := l.Loop.Start(ctx); err != nil {
		return err
	}
	l.mu.Lock()
	l.started = true
	l.mu.Unlock()
	return nil
}

// Stop stops the loop, then hands the claimed fires still queued to the
// dispatcher, once.
func (l *fireLoop) Stop() {
	l.Loop.Stop()
	l.mu.Lock()
	started := l.started
	l.mu.Unlock()
	if started {
		l.handOver.Do(func() { l.s.handOver(l.d) })
	}
}
