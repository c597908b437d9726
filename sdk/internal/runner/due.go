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

// dueInstant is the runs accepted ahead of one due_at, and the timer that
// starts them. A burst of fires due on one instant has one timer per
// executor, not one per run, and its runs' block strategies are applied
// under one lock, as a RunBatch's are (acceptAll).
//
// On the instant the timer decides which runs start (those whose job is
// idle here), gateRuns at a time, and launches each of them on a goroutine
// of its own (launchDue), which calls its handler at once: a burst's
// handlers start as fast as the runtime can start goroutines, while the
// timer decides the rest. A launched run needs no worker: it marks its job
// busy (worker.current), and when its handler returns, the settler sees it
// to its end (settle.go), after the burst's starts; a kill or a timeout
// ends it at once (cut). A run whose job is busy on the instant goes to its
// job's queue instead, as a run sent on the instant would.
type dueInstant struct {
	runs  []*Run // some may no longer wait: killed or cancelled since (run.waiting)
	timer *time.Timer
}

// gateRuns is how many runs of an instant the timer decides under one
// hold of the dispatcher's lock before it launches them: the first
// handlers of a burst of 100,000 start while the timer still decides the
// rest, instead of after all of them (20 ms).
const gateRuns = 1024

// launchState is where a run launched on its due instant is; run.state.
type launchState = int32

const (
	stateWaiting  launchState = iota // not launched (yet)
	stateLaunched                    // its instant decided to start it; its goroutine has not begun it
	stateBegun                       // its handler is called
	stateReturned                    // its handler returned: the settler ends it
	stateCut                         // cut (killed, timed out, shut down): cut ends it
)

// wait holds r, accepted, until its due_at: r.waiting is set, and the
// timer of its instant starts it (startDue). d.mu is held.
func (d *Dispatcher) wait(r *Run) {
	k := r.DueAt.UnixNano()
	di := d.waiting[k]
	if di == nil {
		di = &dueInstant{}
		d.waiting[k] = di
		di.timer = time.AfterFunc(r.DueAt.Sub(d.NowFunc()), func() { d.startDue(k) })
	}
	r.waiting = true
	w := d.workers[r.JobID]
	if w == nil {
		w = d.newIdleWorker(r.JobID) // no goroutine unless a run queues behind r
	}
	w.waiting++
	r.worker = w
	// Ahead, what begin would make: the instant has many to start.
	ctx, cancel := context.WithCancelCause(context.Background())
	r.ctx = ctx
	r.cancel = func(cause error) {
		cancel(cause)
		d.cut(r, ctx)
	}
	r.launch = d.prepare(r)
	r.begun = make(chan struct{})
	di.runs = append(di.runs, r)
}

// startDue starts the runs of due instant k that still wait, applying
// each one's block strategy now, as if it had been accepted on its
// instant: a run whose job is idle here is launched (launchDue),
// DISCARD_LATER ends it FAILED when its job is busy here (the run was
// accepted, so the refusal is its result), SERIAL queues it, COVER_EARLY
// kills what its job runs or queues.
func (d *Dispatcher) startDue(k int64) {
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
	d.settleAfter(settleDelay(len(di.runs))) // once the burst's handlers started
	for i := 0; i < len(di.runs); i += gateRuns {
		var launched []*Run
		d.mu.Lock()
		for _, r := range di.runs[i:min(i+gateRuns, len(di.runs))] {
			if r.waiting && d.closing { // stopAccepting came in between
				d.unwait(r)
				ends = append(ends, ending{r, carillonv1.RunStatus_RUN_STATUS_KILLED, ErrShuttingDown.Error()})
			}
			w, launch := d.startAt(r, &ends)
			if w != nil {
				wake = append(wake, w)
			}
			if launch {
				launched = append(launched, r)
			}
		}
		d.mu.Unlock()
		for j := 0; j < len(launched); j += spawnRuns {
			go d.launchAll(launched[j:min(j+spawnRuns, len(launched))])
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
		d.end(e.r, e.status, e.msg)
	}
}

// settleDelayPerRun is how long after its instant the runs of a large
// burst are settled, per run of the burst: several times what starting a
// handler takes (about 1 µs), so that the starts are over, those of the
// other executors of the process too, before the results are written and
// reported: settling took the processors from the handlers of the other
// executors, whose timers fire on the same instant, and the results took
// the admin's CPU, on the same host, from the starts. A run's result is
// not urgent; its end time is taken when its handler returns. Load tool,
// 10,000 jobs on one instant, with the workers' delayed wake this replaced
// (the same per-run delay): p99 37 ms at 3 µs, 17.5 ms at 10 µs (medians
// of 3; BENCHMARKS.md, issue 20).
const settleDelayPerRun = 10 * time.Microsecond

// settleDelay is how long after a burst's instant its n runs are settled:
// at once for a run alone.
func settleDelay(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	return time.Duration(n) * settleDelayPerRun
}

// spawnRuns is how many launched runs one goroutine starts the goroutines
// of (launchAll): the processors share the starting of a burst, each
// reusing the goroutines that ended on it, instead of one starting them
// all for the other to run.
const spawnRuns = 64

// launchAll launches rs, each on a goroutine of its own, the last one on
// this one.
func (d *Dispatcher) launchAll(rs []*Run) {
	for _, r := range rs[:len(rs)-1] {
		go d.launchDue(r)
	}
	d.launchDue(rs[len(rs)-1])
}

// launchDue is the goroutine of run r, launched on its due instant: it
// begins r and calls its handler, unless r was cut in between; what the
// handler returns goes to the settler, or to cut when r was cut while its
// handler ran (handled).
func (d *Dispatcher) launchDue(r *Run) {
	if !r.state.CompareAndSwap(stateLaunched, stateBegun) {
		return // cut before it began: cut ends it
	}
	l := d.begin(r.ctx, r)
	l.due = true
	if l.cancel != nil { // a timeout: it cuts r as a kill does
		l.stop = context.AfterFunc(l.ctx, func() { d.cut(r, l.ctx) })
	}
	close(r.begun)
	d.call(r, l)
}

// cut ends run r, launched on its due instant, whose context ctx ended
// (a kill, a timeout, a shutdown): at once, on a goroutine of its own,
// before its handler returns. A run whose handler returned already, or
// that was not launched, is left alone. It takes no lock: the kills call
// it holding d.mu.
func (d *Dispatcher) cut(r *Run, ctx context.Context) {
	for {
		switch s := r.state.Load(); s {
		case stateLaunched:
			if r.state.CompareAndSwap(s, stateCut) {
				go d.cutBeforeStart(r, ctx)
				return
			}
		case stateBegun:
			if r.state.CompareAndSwap(s, stateCut) {
				go d.cutRunning(r, ctx)
				return
			}
		default:
			return
		}
	}
}

// cutBeforeStart ends launched run r, cut before its goroutine began it.
func (d *Dispatcher) cutBeforeStart(r *Run, ctx context.Context) {
	defer d.wg.Done()
	status, msg := outcome(ctx, nil, false)
	d.end(r, status, msg+" before it started")
	d.releaseAll([]*Run{r})
}

// cutRunning ends launched run r, cut while its handler runs: its result
// is reported now, and its handler waited for as a worker waits for one
// (abandon).
func (d *Dispatcher) cutRunning(r *Run, ctx context.Context) {
	defer d.wg.Done()
	<-r.begun
	l := r.launch
	if l.cancel != nil {
		defer l.cancel()
	}
	d.abandon(r, l, ctx)
	d.releaseAll([]*Run{r})
}

// releaseAll marks the jobs of launched runs rs, ended, idle, and wakes
// their workers, which may have queued runs to start.
func (d *Dispatcher) releaseAll(rs []*Run) {
	var wake []*worker
	d.mu.Lock()
	for _, r := range rs {
		w := r.worker
		if w.current != r {
			continue
		}
		w.current = nil
		switch {
		case len(w.queue) > 0:
			d.startWorker(w)
			wake = append(wake, w)
		case w.started:
			wake = append(wake, w) // it may wait for r to end to exit (closing)
		default:
			d.dropIdle(w)
		}
	}
	d.mu.Unlock()
	for _, w := range wake {
		notify(w.wake)
	}
}

// ending is a run to end, with its status and why.
type ending struct {
	r      *Run
	status carillonv1.RunStatus
	msg    string
}

// startAt applies waiting run r's block strategy on its instant. It
// returns launch when r is to be launched on its own goroutine
// (launchDue), its job idle here, and the worker to wake, if any, when r
// was queued; runs to end are added to ends. d.mu is held.
func (d *Dispatcher) startAt(r *Run, ends *[]ending) (wake *worker, launch bool) {
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
func (d *Dispatcher) unwait(r *Run) {
	r.waiting = false
	r.worker.waiting--
	d.dropIdle(r.worker)
}

// dropIdle forgets w if it has no goroutine and nothing to do: it was made
// for runs that waited for their due_at (wait). d.mu is held.
func (d *Dispatcher) dropIdle(w *worker) {
	if !w.started && w.current == nil && len(w.queue) == 0 && w.waiting == 0 && d.workers[w.jobID] == w {
		delete(d.workers, w.jobID)
	}
}

// unwaitJob takes the runs of job jobID that wait for their due_at out of
// waiting and returns them, to be ended. d.mu is held.
func (d *Dispatcher) unwaitJob(jobID int64) []*Run {
	var out []*Run
	for _, di := range d.waiting {
		for _, r := range di.runs {
			if r.waiting && r.JobID == jobID {
				d.unwait(r)
				out = append(out, r)
			}
		}
	}
	return out
}

// unwaitAll stops every due instant's timer and returns the runs that
// waited, to be ended. d.mu is held.
func (d *Dispatcher) unwaitAll() []*Run {
	var out []*Run
	for k, di := range d.waiting {
		di.timer.Stop()
		for _, r := range di.runs {
			if r.waiting {
				d.unwait(r)
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
