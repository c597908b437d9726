package runner

import (
	"context"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// A Call is a run's call of its handler, with the handler's middleware
// and what it gets of the run (package sdk's Job): see Config.PrepareFunc.
type Call interface {
	Call(ctx context.Context) error
}

// Publisher is a Call whose handler may publish outputs: the result of a
// run whose handler returned carries them (report.Result.Outputs).
type Publisher interface {
	Outputs() map[string]string
}

// Observer is told of each run's start and end: the executor's observers
// (metrics, tracing). Its methods are called on the goroutines that start
// and end runs.
type Observer interface {
	// Started is called as r's handler is about to start, with its
	// context; it returns the handler's context, and a note for the log's
	// "started" line ("" for none).
	Started(ctx context.Context, r *Run) (context.Context, string)
	// Ended is called once for each run as it ends, with the context
	// Started returned, or context.Background() for a run that never
	// started.
	Ended(ctx context.Context, r *Run, status carillonv1.RunStatus, msg string, at time.Time)
}

// noObserver observes nothing: the Observer of a Config without one.
type noObserver struct{}

func (noObserver) Started(ctx context.Context, _ *Run) (context.Context, string) { return ctx, "" }

func (noObserver) Ended(context.Context, *Run, carillonv1.RunStatus, string, time.Time) {}
