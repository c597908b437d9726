package service

import (
	"context"
	"errors"
	"sync"
)

// ErrStarted is the error of a second Start, or of a Start after Stop:
// a service runs once.
var ErrStarted = errors.New("service: started already")

// Loop is a Watched service that runs one function in a goroutine of its
// own, from Start until the function returns: Stop cancels the function's
// context and waits for it to return.
type Loop struct {
	run func(ctx context.Context) error

	mu      sync.Mutex
	cancel  context.CancelFunc // set by Start
	stopped bool               // Stop was called
	done    chan struct{}
	err     error // set before done is closed
}

// NewLoop returns a Loop that runs run. run must return once its context
// ends; an error it returns then is no failure (Err is nil).
func NewLoop(run func(ctx context.Context) error) *Loop {
	return &Loop{run: run, done: make(chan struct{})}
}

// Start starts the loop's goroutine, with a context that ends with ctx or
// at Stop.
func (l *Loop) Start(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cancel != nil || l.stopped {
		return ErrStarted
	}
	ctx, l.cancel = context.WithCancel(ctx)
	go func() {
		err := l.run(ctx)
		if ctx.Err() != nil {
			err = nil // ended by Stop or ctx, as asked
		}
		l.err = err
		close(l.done)
	}()
	return nil
}

// Stop cancels the loop's context and returns once its function has
// returned.
func (l *Loop) Stop() {
	l.mu.Lock()
	cancel := l.cancel
	l.stopped = true
	l.mu.Unlock()
	if cancel == nil {
		return // never started
	}
	cancel()
	<-l.done
}

// Done is closed once the loop's function has returned.
func (l *Loop) Done() <-chan struct{} { return l.done }

// Err is the error the loop's function returned on its own, before its
// context ended; nil while it runs.
func (l *Loop) Err() error {
	select {
	case <-l.done:
		return l.err
	default:
		return nil
	}
}
