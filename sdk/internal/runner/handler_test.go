package runner

import (
	"context"
	"time"

	"github.com/carillonhq/carillon/sdk/internal/runlog"
)

// The tests' handlers: package sdk's Handler, HandlerFunc and Job, as far
// as the tests use them (the runner knows a handler only through
// Config.PrepareFunc).

type Handler interface {
	ServeJob(ctx context.Context, job *Job) error
}

type HandlerFunc func(ctx context.Context, job *Job) error

func (f HandlerFunc) ServeJob(ctx context.Context, job *Job) error { return f(ctx, job) }

type Job struct {
	RunID, JobID int64
	Param        string
	ScheduledAt  time.Time
	log          *runlog.Log
}

func (j *Job) Logf(format string, args ...any) { j.log.Printf(format, args...) }

// call is r's Handler with a Job of r.
type call struct {
	job Job
	h   Handler
}

func (c *call) Call(ctx context.Context) error { return c.h.ServeJob(ctx, &c.job) }

// prepare is the tests' Config.PrepareFunc.
func prepare(r *Run) Call {
	return &call{Job{RunID: r.ID, JobID: r.JobID, Param: r.Param, ScheduledAt: r.ScheduledAt, log: r.Log}, r.Handler.(Handler)}
}
