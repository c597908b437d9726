package sdk

import (
	"context"
	"strings"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk/internal/runner"
)

// An Observer watches the runs of an [Executor], for metrics or tracing:
// [github.com/carillonhq/carillon/sdk/sdkprom] counts them for Prometheus
// and [github.com/carillonhq/carillon/sdk/sdkotel] traces them with
// OpenTelemetry. Add one with [Executor.Observe]. An executor without one
// links neither.
//
// Its methods are called on the goroutines that start and end runs, many
// at once: they must be safe for concurrent use, and quick.
type Observer interface {
	// RunStarted is called as a run's handler is about to start, with the
	// run's context. The context it returns is the one the handler gets,
	// and the one RunEnded gets: return ctx itself to change nothing. A
	// non-empty note is added to the run log's "started" line, in
	// parentheses (sdkotel's is "trace <trace id>").
	RunStarted(ctx context.Context, run RunInfo) (_ context.Context, note string)

	// RunEnded is called once for every run accepted, as it ends, with
	// the context RunStarted returned, or [context.Background] for a run
	// that ended before its handler started (killed, discarded, covered).
	RunEnded(ctx context.Context, run RunInfo, end RunEnd)
}

// RunInfo is what an [Observer] sees of a run.
type RunInfo struct {
	RunID int64
	JobID int64
	// Handler is the handler name the run was sent for, or "script" for a
	// script run.
	Handler string
	// TraceContext is the W3C trace context of the admin's span of the
	// fire (RunRequest.trace_context: "traceparent", "tracestate"), empty
	// when the admin does not trace.
	TraceContext map[string]string
}

// RunEnd is how a run ended, for an [Observer].
type RunEnd struct {
	// Status is the run's final status: "SUCCEEDED", "FAILED",
	// "TIMED_OUT", "KILLED" or "SKIPPED".
	Status string
	// Message says why a run did not succeed; empty when it did.
	Message string
	// Started is when its handler started; zero for a run that ended
	// before it started.
	Started time.Time
	// Ended is when it ended.
	Ended time.Time
}

// Stats is a snapshot of an executor's backlog: see [Executor.Stats].
type Stats struct {
	// RunsQueued is how many runs wait behind their job's running run.
	RunsQueued int
	// ResultsUnreported is how many results are spooled and not yet
	// acknowledged by an admin.
	ResultsUnreported int
	// ReportFailures counts the ReportResults calls that no admin
	// answered since New (the results are retried).
	ReportFailures int64
}

// observers are the observers of a Serve, called in order.
type observers []Observer

// Started calls RunStarted of each observer for r, begun with ctx, and
// returns the handler's context and the notes for its log, joined.
func (os observers) Started(ctx context.Context, r *runner.Run) (context.Context, string) {
	if len(os) == 0 {
		return ctx, ""
	}
	info := info(r)
	var notes []string
	for _, o := range os {
		var note string
		ctx, note = o.RunStarted(ctx, info)
		if note != "" {
			notes = append(notes, note)
		}
	}
	return ctx, strings.Join(notes, ", ")
}

// Ended calls RunEnded of each observer for r, ended with status and msg
// at at; ctx is the handler's, context.Background() for a run that never
// started.
func (os observers) Ended(ctx context.Context, r *runner.Run, status carillonv1.RunStatus, msg string, at time.Time) {
	if len(os) == 0 {
		return
	}
	info, end := info(r), RunEnd{Status: strings.TrimPrefix(status.String(), "RUN_STATUS_"), Message: msg, Started: r.Started, Ended: at}
	for _, o := range os {
		o.RunEnded(ctx, info, end)
	}
}

// info is what an observer sees of r.
func info(r *runner.Run) RunInfo {
	name := r.Name
	if r.Script {
		name = "script"
	}
	return RunInfo{RunID: r.ID, JobID: r.JobID, Handler: name, TraceContext: r.TraceContext}
}
