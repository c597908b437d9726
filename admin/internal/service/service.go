// Package service gives the admin's background parts one lifecycle, after
// river's startstop: a Service starts, runs until it is stopped, and
// stops; a Group starts a list of them in order and stops them in
// reverse. A Loop is the common service: one function that runs until
// its context ends.
package service

import "context"

// Service is a part that runs in the background between Start and Stop.
type Service interface {
	// Start starts the service and returns once it runs, or with the
	// error that kept it from starting (then it holds nothing). The
	// service runs until Stop, or until ctx ends.
	Start(ctx context.Context) error
	// Stop stops the service and returns once it has stopped. It may be
	// called more than once, and before Start or after a failed Start:
	// then it does nothing.
	Stop()
}

// Watched is a Service that can end on its own while it runs (a Loop
// whose function failed). A Group watches its Watched members: one that
// ends with an error fails the group.
type Watched interface {
	Service
	// Done is closed once the service has ended, on its own or by Stop.
	Done() <-chan struct{}
	// Err is the error the service ended with: nil while it runs, and
	// nil when it ended cleanly.
	Err() error
}
