package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk/internal/report"
)

// state is where a run is in its life (Run.state). Every run goes through
// the same states, whether its job's worker starts it (queued) or its due
// instant launches it (launcher.go); where two goroutines may race (its
// handler returning, its context ending), the state changes by
// compare-and-swap, and the one that changes it finishes the run:
//
//	accepted --(its worker takes it, or its instant launches it)--> launched
//	launched --(start)--> running --(its handler returns)--> returned
//	launched or running --(its context ends: kill, timeout, shutdown)--> cut
//
// A returned run is finished by its worker, or by the collector for a run
// its instant launched; a cut run is finished at once, and its handler
// waited for (finishCut). A run dropped before it was launched (killed,
// covered, cancelled, refused at its instant, shut down) is finished from
// accepted (finishUnstarted).
type state = int32

const (
	stateAccepted state = iota // queued behind its job's run, or waiting for its due_at
	stateLaunched              // its worker took it, or its instant launched it: its handler is not called yet
	stateRunning               // its handler is called
	stateReturned              // its handler returned: its worker or the collector finishes it
	stateCut                   // its context ended first: it is finished at once
)

// launch is a launched run's call of its handler: the context the handler
// gets (the run's own, with its timeout and what its observer added), and
// where what the handler returned arrives.
type launch struct {
	d      *Dispatcher
	r      *Run
	ctx    context.Context
	cancel context.CancelFunc // ends the timeout's timer; nil without a timeout
	done   chan error
	// call calls the handler; made ahead (prepare) for a run that waits
	// for its due_at, else when its worker takes it.
	call Call
	// due says the run was launched on its due instant, on a goroutine of
	// its own: the collector finishes it. stop stops its timeout's
	// context.AfterFunc; nil without a timeout.
	due  bool
	stop func() bool
}

// prepare returns r's launch with what needs no clock made: its done
// channel and the call of its handler (PrepareFunc).
func (d *Dispatcher) prepare(r *Run) *launch {
	return &launch{d: d, r: r, done: make(chan error, 1), call: d.PrepareFunc(r)}
}

// start moves the launched run from launched to running, with its own
// context ctx: its timeout, its observer's start, its start time and the
// line of its log that says so; its handler is to be called next
// (callHandler). It says false, and does nothing, when the run was cut
// since it was launched.
func (l *launch) start(ctx context.Context) bool {
	r, d := l.r, l.d
	if !r.state.CompareAndSwap(stateLaunched, stateRunning) {
		return false
	}
	if r.Timeout > 0 {
		ctx, l.cancel = context.WithTimeoutCause(ctx, r.Timeout, fmt.Errorf("%w after %s", ErrTimedOut, r.Timeout))
	}
	var note string
	l.ctx, note = d.Observer.Started(ctx, r)
	r.Started = d.NowFunc()
	if note != "" {
		r.Log.Printf("----- run %d started (%s)", r.ID, note)
	} else {
		r.Log.Started(r.Started) // written later: a burst's handlers wait for it
	}
	return true
}

// callHandler calls the run's handler and hands what it returned (its
// error, or its panic, or a runtime.Goexit, as one) to returned.
func (l *launch) callHandler() {
	r := l.r
	var err error
	ok := false
	defer func() {
		if !ok {
			v := recover()
			if v == nil {
				v = "runtime.Goexit called"
			}
			r.Log.Printf("panic: %v\n%s", v, debug.Stack())
			l.d.Logger.Error("sdk: handler panicked", "run_id", r.ID, "job_id", r.JobID, "handler", r.Name, "panic", v)
			err = fmt.Errorf("panic: %v", v)
		}
		l.returned(err)
	}()
	err = l.call.Call(l.ctx)
	ok = true
}

// returned takes what the run's handler returned: running becomes
// returned, and its worker (supervise) or, for a run its instant
// launched, the collector finishes it. A run cut meanwhile is being
// finished (finishCut), which waits for err on l.done.
func (l *launch) returned(err error) {
	r := l.r
	if l.due {
		at := l.d.NowFunc()
		if r.state.CompareAndSwap(stateRunning, stateReturned) {
			r.returned = handlerResult{err: err, at: at}
			l.d.collector.add(r)
			return
		}
	} else {
		r.state.CompareAndSwap(stateRunning, stateReturned) // or cut: finishCut takes err
	}
	l.done <- err
}

// supervise is the worker's wait for the end of its run: its handler's
// return, or the end of its context (timeout, kill, shutdown), whichever
// moves the run on first; it finishes the run.
func (l *launch) supervise() {
	if l.cancel != nil {
		defer l.cancel()
	}
	select {
	case err := <-l.done:
		l.d.recorder.add([]endedRun{{l.r, l.finishReturned(err, l.d.NowFunc())}})
	case <-l.ctx.Done():
		if l.r.state.CompareAndSwap(stateRunning, stateCut) {
			l.finishCut(l.ctx)
			return
		}
		err := <-l.done // its handler returned as its context ended
		l.d.recorder.add([]endedRun{{l.r, l.finishReturned(err, l.d.NowFunc())}})
	}
}

// cut moves a run its instant launched to cut when its context ctx ends
// (a kill, a timeout, a shutdown) before its handler returned, and
// finishes it at once, on a goroutine of its own. A run that returned
// already, or that was not launched, is left alone. It takes no lock: the
// kills call it holding d.mu.
func (l *launch) cut(ctx context.Context) {
	r := l.r
	for {
		switch s := r.state.Load(); s {
		case stateLaunched, stateRunning:
			if r.state.CompareAndSwap(s, stateCut) {
				go l.finishCutDue(ctx, s == stateRunning)
				return
			}
		default:
			return
		}
	}
}

// finishCutDue finishes a run its instant launched, cut before its
// goroutine started it or while its handler ran, and marks its job idle.
func (l *launch) finishCutDue(ctx context.Context, running bool) {
	d, r := l.d, l.r
	defer d.wg.Done()
	if running {
		<-r.begun
		if l.cancel != nil {
			defer l.cancel()
		}
		l.finishCut(ctx)
	} else {
		status, msg := outcome(ctx, nil, false)
		d.finishUnstarted(r, status, msg+" before it started")
	}
	d.release([]*Run{r})
}

// finishReturned finishes the run whose handler returned err at at, and
// returns its result.
func (l *launch) finishReturned(err error, at time.Time) report.Result {
	status, msg := outcome(l.ctx, err, true)
	res := l.d.finish(l.ctx, l.r, status, msg, at)
	if p, ok := l.call.(Publisher); ok {
		res.Outputs = p.Outputs()
	}
	return res
}

// finishCut finishes the run whose context ctx ended before its handler
// returned: its result is reported now, and its handler waited for
// AbandonAfter, then abandoned; its log is closed after that.
func (l *launch) finishCut(ctx context.Context) {
	d, r := l.d, l.r
	status, msg := outcome(ctx, nil, false)
	d.ReportFunc(d.finish(l.ctx, r, status, msg, d.NowFunc()))
	t := time.NewTimer(d.AbandonAfter)
	select {
	case err := <-l.done:
		t.Stop()
		if err != nil {
			r.Log.Printf("handler returned: %v", err)
		} else {
			r.Log.Printf("handler returned")
		}
	case <-t.C:
		r.Log.Printf("handler still running %s after the run ended: abandoned; its later log lines are dropped", d.AbandonAfter)
		d.Logger.Warn("sdk: handler ignores its context; abandoned",
			"run_id", r.ID, "job_id", r.JobID, "handler", r.Name, "after", d.AbandonAfter)
	}
	_ = r.Log.Close()
	d.forget(r)
}

// finish ends run r, with status and msg at at: the last line of its log,
// its observer told, and its result, which it returns to be recorded or
// reported. It is the one way a run ends; ctx is its handler's context,
// context.Background() for a run that never started.
func (d *Dispatcher) finish(ctx context.Context, r *Run, status carillonv1.RunStatus, msg string, at time.Time) report.Result {
	if r.Started.IsZero() {
		r.Log.PrintfAt(at, "run %d ended before it started: %s: %s", r.ID, statusName(status), msg)
	} else {
		r.Log.PrintfAt(at, "----- run %d ended: %s%s", r.ID, statusName(status), withColon(msg))
	}
	d.Observer.Ended(ctx, r, status, msg, at)
	return r.result(status, msg, at)
}

// finishUnstarted finishes a run that never started (dropped from a
// queue, or refused after it was accepted), and records it at once.
func (d *Dispatcher) finishUnstarted(r *Run, status carillonv1.RunStatus, msg string) {
	d.recorder.write([]endedRun{{r, d.finish(context.Background(), r, status, msg, d.NowFunc())}})
}

// outcome maps how a handler ended to a status and a message.
func outcome(ctx context.Context, err error, returned bool) (carillonv1.RunStatus, string) {
	if returned && err == nil {
		return carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, ""
	}
	if ctx.Err() != nil {
		cause := context.Cause(ctx)
		if errors.Is(cause, ErrTimedOut) {
			return carillonv1.RunStatus_RUN_STATUS_TIMED_OUT, cause.Error()
		}
		return carillonv1.RunStatus_RUN_STATUS_KILLED, cause.Error()
	}
	return carillonv1.RunStatus_RUN_STATUS_FAILED, err.Error()
}
