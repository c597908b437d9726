package runner

import (
	"context"
	"fmt"
	"runtime"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// MaxDueAhead bounds how far ahead of the executor's clock a run's due_at
// may be: the admin sends runs ahead of their instant by well under a
// second (its send-ahead), so a due_at further ahead is a mistake, or a
// clock far off, and the run is refused as invalid.
const MaxDueAhead = 5 * time.Minute

// launcher starts the runs sent ahead of their instant (RunRequest.due_at)
// on their due instant. Its state is the Dispatcher's (waiting, workers),
// under its lock.
type launcher struct {
	d *Dispatcher
}

// dueInstant is the runs accepted ahead of one due_at, and the timer that
// starts them. A burst of fires due on one instant has one timer per
// executor, not one per run, and its runs' block strategies are applied
// under one lock, as a RunBatch's are (AcceptAll).
//
// On the instant the timer decides which runs start (those whose job is
// idle here), gateRuns at a time, and launches each of them on a goroutine
// of its own (launch), which calls its handler at once: a burst's
// handlers start as fast as the runtime can start goroutines, while the
// timer decides the rest. A launched run needs no worker: it marks its job
// busy (worker.current), and when its handler returns, the collector
// finishes it (collector.go), after the burst's starts; a kill or a
// timeout finishes it at once (cut). A run whose job is busy on the instant goes to its
// job's queue instead, as a run sent on the instant would.
type dueInstant struct {
	runs  []*Run // some may no longer wait: killed or cancelled since (run.waiting)
	timer *time.Timer
}

// gateRuns is how many runs of an instant the timer decides under one
// hold of the dispatcher's lock before it launches them: the first
// handlers of a large burst start while the timer still decides the
// rest, instead of after all of them.
const gateRuns = 1024

// wait holds r, accepted, until its due_at: r.waiting is set, and the
// timer of its instant starts it (start). d.mu is held.
func (ln *launcher) wait(r *Run) {
	d := ln.d
	k := r.DueAt.UnixNano()
	di := d.waiting[k]
	if di == nil {
		di = &dueInstant{}
		d.waiting[k] = di
		di.timer = time.AfterFunc(r.DueAt.Sub(d.NowFunc()), func() { ln.start(k) })
	}
	r.waiting = true
	w := d.workers[r.JobID]
	if w == nil {
		w = d.newIdleWorker(r.JobID) // no goroutine unless a run queues behind r
	}
	w.waiting++
	r.worker = w
	// Ahead, what start would make: the instant has many to start.
	ctx, cancel := context.WithCancelCause(context.Background())
	r.ctx = ctx
	r.launch = d.prepare(r)
	l := r.launch
	r.cancel = func(cause error) {
		cancel(cause)
		l.cut(ctx)
	}
	r.begun = make(chan struct{})
	di.runs = append(di.runs, r)
}

// start starts the runs of due instant k that still wait, applying
// each one's block strategy now, as if it had been accepted on its
// instant: a run whose job is idle here is launched (launch),
// DISCARD_LATER ends it FAILED when its job is busy here (the run was
// accepted, so the refusal is its result), SERIAL queues it, COVER_EARLY
// kills what its job runs or queues.
func (ln *launcher) start(k int64) {
	d := ln.d
	var wake []*worker
	var ends []ending
	d.mu.Lock()
	di := d.waiting[k]
	delete(d.waiting, k)        // di is this function's from now on
	if di == nil || d.closing { // stopAccepting dropped them
		d.mu.Unlock()
		return
	}
	d.mu.Unlock()
	d.collector.holdUntil(finishDelay(len(di.runs))) // once the burst's handlers started
	for i := 0; i < len(di.runs); i += gateRuns {
		var launched []*Run
		d.mu.Lock()
		for _, r := range di.runs[i:min(i+gateRuns, len(di.runs))] {
			if r.waiting && d.closing { // stopAccepting came in between
				ln.unwait(r)
				ends = append(ends, ending{r, carillonv1.RunStatus_RUN_STATUS_KILLED, ErrShuttingDown.Error()})
			}
			w, launch := ln.startAt(r, &ends)
			if w != nil {
				wake = append(wake, w)
			}
			if launch {
				launched = append(launched, r)
			}
		}
		d.mu.Unlock()
		for j := 0; j < len(launched); j += spawnRuns {
			go ln.launchAll(launched[j:min(j+spawnRuns, len(launched))])
		}
		// Their handlers start before the next gate is decided, on this
		// processor too: another executor's timer of the same instant
		// may hold the other one.
		runtime.Gosched()
	}
	for _, w := range wake {
		notify(w.wake)
	}
	for _, e := range ends {
		d.finishUnstarted(e.r, e.status, e.msg)
	}
}

// finishDelayPerRun is how long after its instant the runs of a large
// burst are finished, per run of the burst: several times what starting a
// handler takes, so that the starts are over, those of the other
// executors of the process too, before the results are written and
// reported: finishing took the processors from the handlers of the other
// executors, whose timers fire on the same instant, and the results took
// the admin's CPU, on the same host, from the starts. A run's result is
// not urgent; its end time is taken when its handler returns. The figures
// that chose it are in BENCHMARKS.md (issue 20).
const finishDelayPerRun = 10 * time.Microsecond

// finishDelay is how long after a burst's instant its n runs are
// finished: at once for a run alone.
func finishDelay(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	return time.Duration(n) * finishDelayPerRun
}

// spawnRuns is how many launched runs one goroutine starts the goroutines
// of (launchAll): the processors share the starting of a burst, each
// reusing the goroutines that ended on it, instead of one starting them
// all for the other to run.
const spawnRuns = 64

// launchAll launches rs, each on a goroutine of its own, the last one on
// this one.
func (ln *launcher) launchAll(rs []*Run) {
	for _, r := range rs[:len(rs)-1] {
		go ln.launch(r)
	}
	ln.launch(rs[len(rs)-1])
}

// launch is the goroutine of run r, launched on its due instant: it starts
// r and calls its handler, unless r was cut in between; what the handler
// returns goes to the collector, or to finishCut when r was cut while its
// handler ran.
func (ln *launcher) launch(r *Run) {
	l := r.launch
	if !l.start(r.ctx) {
		return // cut before it started: cut finishes it
	}
	l.due = true
	if l.cancel != nil { // a timeout: it cuts r as a kill does
		l.stop = context.AfterFunc(l.ctx, func() { l.cut(l.ctx) })
	}
	close(r.begun)
	l.callHandler()
}

// ending is a run to finish before it started, with its status and why.
type ending struct {
	r      *Run
	status carillonv1.RunStatus
	msg    string
}

// startAt applies waiting run r's block strategy on its instant. It
// returns launch when r is to be launched on its own goroutine
// (launch), its job idle here, and the worker to wake, if any, when r
// was queued; runs to finish are added to ends. d.mu is held.
func (ln *launcher) startAt(r *Run, ends *[]ending) (wake *worker, launch bool) {
	d := ln.d
	if !r.waiting {
		return nil, false
	}
	r.waiting = false
	r.worker.waiting--
	if err := discardsOn(r, r.worker); err != nil {
		*ends = append(*ends, ending{r, carillonv1.RunStatus_RUN_STATUS_FAILED, err.Error()})
		d.dropIdle(r.worker)
		return nil, false
	}
	if w := r.worker; !w.busy() {
		w.current = r
		r.state.Store(stateLaunched)
		d.wg.Add(1) // drain waits for r
		return nil, true
	}
	w, covered, cause := d.enqueue(r)
	for _, q := range covered {
		*ends = append(*ends, ending{q, carillonv1.RunStatus_RUN_STATUS_KILLED, cause.Error() + " before it started"})
	}
	return w, false
}

// unwait takes r out of the runs that wait for their due_at. d.mu is held.
func (ln *launcher) unwait(r *Run) {
	d := ln.d
	r.waiting = false
	r.worker.waiting--
	d.dropIdle(r.worker)
}

// unwaitJob takes the runs of job jobID that wait for their due_at out of
// waiting and returns them, to be ended. d.mu is held.
func (ln *launcher) unwaitJob(jobID int64) []*Run {
	d := ln.d
	var out []*Run
	for _, di := range d.waiting {
		for _, r := range di.runs {
			if r.waiting && r.JobID == jobID {
				ln.unwait(r)
				out = append(out, r)
			}
		}
	}
	return out
}

// unwaitAll stops every due instant's timer and returns the runs that
// waited, to be ended. d.mu is held.
func (ln *launcher) unwaitAll() []*Run {
	d := ln.d
	var out []*Run
	for k, di := range d.waiting {
		di.timer.Stop()
		for _, r := range di.runs {
			if r.waiting {
				ln.unwait(r)
				out = append(out, r)
			}
		}
		delete(d.waiting, k)
	}
	return out
}

// dueString is the end of a run's "accepted" log line: when it is due,
// if it waits for that.
func dueString(at time.Time, waits bool) string {
	if !waits {
		return ""
	}
	return fmt.Sprintf(", due at %s", at.UTC().Format("15:04:05.000"))
}
