package service

import (
	"context"
	"sync"
)

// onStop is the Service of OnStop.
type onStop struct {
	fn func()

	mu      sync.Mutex
	started bool
	once    sync.Once
}

// OnStop returns a Service that does nothing while it runs and calls fn
// when it stops, once, if it was started: a point of a Group's shutdown
// that waits for work to end (say, sends in flight) before the services
// started before it stop.
func OnStop(fn func()) Service { return &onStop{fn: fn} }

func (s *onStop) Start(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
	return nil
}

func (s *onStop) Stop() {
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if started {
		s.once.Do(s.fn)
	}
}
