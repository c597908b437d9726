package sdk

import "context"

// A Handler runs one execution of a job.
//
// Returning nil reports the run SUCCEEDED; a non-nil error reports it FAILED
// with err.Error() as the message the admin shows to people, so don't put
// secrets in it. A panic fails the run too: the panic value becomes the
// message and the stack goes to the run's log.
//
// ctx ends when the run's timeout elapses (context.Cause(ctx) is
// [ErrTimedOut]), when the admin kills the run or a COVER_EARLY run replaces
// it ([ErrKilled]), or when the executor shuts down ([ErrShuttingDown]). A
// handler should return soon after: the run is reported as soon as ctx ends,
// whether or not the handler returns, and a handler that keeps running is
// abandoned (see [Executor]).
//
// Runs of one job on one executor are handled one after another, never at
// the same time, but runs of different jobs run concurrently, so a Handler
// registered for several jobs must be safe for concurrent use.
type Handler interface {
	ServeJob(ctx context.Context, job *Job) error
}

// The HandlerFunc type is an adapter to allow the use of ordinary functions
// as Handlers. If f is a function with the appropriate signature,
// HandlerFunc(f) is a [Handler] that calls f.
type HandlerFunc func(ctx context.Context, job *Job) error

// ServeJob calls f(ctx, job).
func (f HandlerFunc) ServeJob(ctx context.Context, job *Job) error {
	return f(ctx, job)
}

// Middleware wraps a Handler in another, in the style of net/http
// decorators: for metrics, tracing, recovery or logging around every run.
// See [Executor.Use].
type Middleware func(Handler) Handler
