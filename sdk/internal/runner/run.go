package runner

import (
	"context"
	"sync/atomic"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk/internal/report"
	"github.com/carillonhq/carillon/sdk/internal/runlog"
)

// Run is one accepted execution. The fields a due instant reads of each
// of its runs come first, together (launcher.go: a burst's runs are out of the
// processor's caches by their instant).
type Run struct {
	// waiting is true while the run waits for its dueAt (launcher.go); guarded
	// by Dispatcher.mu.
	waiting bool
	// state is where the run is in its life (state.go).
	state atomic.Int32
	Block carillonv1.BlockStrategy
	// worker is the worker of its job, for a run that waits for its
	// due_at: found or made at accept, so that its instant finds it
	// without a lookup (launcher.go); guarded by Dispatcher.mu.
	worker *worker

	// What a run that waits for its due_at needs when its instant
	// launches it on a goroutine of its own (launcher.go), made at accept: ctx
	// is its own context (cancel ends it); launch is made ahead and
	// filled in by start; begun is closed once start is done, for cut to
	// wait on.
	ctx    context.Context
	launch *launch
	begun  chan struct{}

	ID      int64
	Timeout time.Duration
	Log     *runlog.Log // from accept to the end of the run

	// Started is when the handler started; zero until it did. Set by
	// start, on the worker's goroutine or (a run launched on its due
	// instant) on the run's own before it closes begun; read after.
	Started time.Time

	// cancel ends a started run's context; guarded by Dispatcher.mu. For
	// a run that waits for its due_at it also ends the run if its instant
	// launched it (launch.cut).
	cancel context.CancelCauseFunc

	// returned is what its handler returned, on its way to the collector
	// (collector.go), for a run launched on its due instant.
	returned handlerResult

	DB          string // its database (see report.Key)
	JobID       int64
	Name        string
	Handler     any    // what PrepareFunc calls: the executor's, before middleware
	What        string // what it runs, for its log: a handler's name, or a script's type
	Script      bool
	Param       string
	ShardIndex  int
	ShardTotal  int
	ScheduledAt time.Time
	Attempt     int       // RunRequest.attempt: 0 first, n the n-th retry
	DueAt       time.Time // RunRequest.due_at: when to start; zero: now

	// TraceContext is RunRequest.trace_context: the admin's fire span.
	TraceContext map[string]string
	// Inputs are RunRequest.inputs: a workflow node's dependencies'
	// outputs.
	Inputs map[string]string
	// AdminID is RunRequest.admin_id: the admin that sent the run.
	AdminID string
}

// key names r among the runs of every database.
func (r *Run) key() report.Key { return report.Key{DB: r.DB, ID: r.ID} }

// result returns r's result.
func (r *Run) result(status carillonv1.RunStatus, msg string, at time.Time) report.Result {
	res := report.NewResult(r.ID, status, msg, at)
	res.DatabaseID, res.AdminID = r.DB, r.AdminID
	res.StartedAt = r.Started
	return res
}
