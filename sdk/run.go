package sdk

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk/internal/report"
	"github.com/carillonhq/carillon/sdk/internal/runlog"
)

// run is one accepted execution. The fields a due instant reads of each
// of its runs come first, together (due.go: a burst's runs are out of the
// processor's caches by their instant).
type run struct {
	// waiting is true while the run waits for its dueAt (due.go); guarded
	// by dispatcher.mu.
	waiting bool
	// state is where a run launched on its due instant is (launchState).
	state atomic.Int32
	block carillonv1.BlockStrategy
	// worker is the worker of its job, for a run that waits for its
	// due_at: found or made at accept, so that its instant finds it
	// without a lookup (due.go); guarded by dispatcher.mu.
	worker *worker

	// What a run that waits for its due_at needs when its instant
	// launches it on a goroutine of its own (due.go), made at accept: ctx
	// is its own context (cancel ends it); launch is made ahead and
	// filled in by begin; begun is closed once begin is done, for cut to
	// wait on.
	ctx    context.Context
	launch *launch
	begun  chan struct{}

	id      int64
	timeout time.Duration
	log     *runlog.Log // from accept to the end of the run

	// started is when the handler started; zero until it did. Set by
	// begin, on the worker's goroutine or (a run launched on its due
	// instant) on the run's own before it closes begun; read after.
	started time.Time

	// cancel ends a started run's context; guarded by dispatcher.mu. For
	// a run that waits for its due_at it also ends the run if its instant
	// launched it (dispatcher.cut).
	cancel context.CancelCauseFunc

	// returned is what its handler returned, on its way to the settler
	// (settle.go).
	returned handlerResult

	db          string // its database (see runKey)
	jobID       int64
	name        string
	handler     Handler // before middleware
	script      bool
	param       string
	shardIndex  int
	shardTotal  int
	scheduledAt time.Time
	dueAt       time.Time // RunRequest.due_at: when to start; zero: now

	// traceContext is RunRequest.trace_context: the admin's fire span.
	traceContext map[string]string
}

// key names r among the runs of every database.
func (r *run) key() report.Key { return report.Key{DB: r.db, ID: r.id} }

// result returns r's result.
func (r *run) result(status carillonv1.RunStatus, msg string, at time.Time) report.Result {
	res := report.NewResult(r.id, status, msg, at)
	res.DatabaseID = r.db
	res.StartedAt = r.started
	return res
}

// describe names what r runs, for its log.
func (r *run) describe() string {
	if sh, ok := r.handler.(*scriptHandler); ok {
		return scriptTypeName(sh.typ) + " script"
	}
	return fmt.Sprintf("handler %q", r.name)
}
