// Package testsignal lets code tell its tests that something happened, so
// that a test waits for it instead of polling or sleeping (river's
// rivershared/testsignal idea). The code keeps a Signal where the event
// happens and calls Emit; a test reaches the Signal (through an
// export_test.go accessor) and waits with Await or Next. Until a test
// first waits on it, a Signal is off and Emit costs one atomic load.
package testsignal

import (
	"context"
	"sync"
	"sync/atomic"
)

// Signal is an event that code emits for its tests. The zero value is
// ready to use; a Signal must not be copied after first use.
type Signal struct {
	on   atomic.Bool // a test has waited on it
	mu   sync.Mutex
	next chan struct{} // closed at the next Emit; nil until asked for
}

// Emit wakes everyone waiting for the next emission. It does nothing
// until a test waits on s.
func (s *Signal) Emit() {
	if !s.on.Load() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next != nil {
		close(s.next)
		s.next = nil
	}
}

// Next returns a channel closed at the next Emit.
func (s *Signal) Next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on.Store(true)
	if s.next == nil {
		s.next = make(chan struct{})
	}
	return s.next
}

// Await waits until cond is true, checking it at once and after each
// Emit, and reports whether it was before ctx ended.
func (s *Signal) Await(ctx context.Context, cond func() bool) bool {
	for {
		next := s.Next() // before the check: an Emit after it closes next
		if cond() {
			return true
		}
		select {
		case <-next:
		case <-ctx.Done():
			return false
		}
	}
}
