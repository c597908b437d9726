package sdk

import (
	"context"
	"fmt"
	"runtime"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// maxDueAhead bounds how far ahead of the executor's clock a run's due_at
// may be: the admin sends runs ahead of their instant by well under a
// second (its send-ahead), so a due_at further ahead is a mistake, or a
// clock far off, and the run is refused as invalid.
const maxDueAhead = 5 * time.Minute

// dueInstant is the runs accepted ahead of one due_at, and the timer that
// starts them. A burst of fires due on one instant has one timer per
// executor, not one per run, and its runs' block strategies are applied
// under one lock, as a RunBatch's are (acceptAll).
//
// Each waiting run has a goroutine of its own, parked on a gate of its
// instant (await), so that on the instant the handlers of a burst start as
// fast as the runtime can wake goroutines: the timer decides which runs
// start (those whose job is idle here), gateRuns at a time, and opens
// their gate, and each of them calls its handler at once; their workers
// are woken after the last gate, to see them to their end
// (worker.handoff). A run whose job is busy on the instant goes to its
// job's queue instead, as a run sent on the instant would.
type dueInstant struct {
	runs  []*run // some may no longer wait: killed or cancelled since (run.waiting)
	timer *time.Timer
	// gates[i] releases runs[i*gateRuns:(i+1)*gateRuns]: closed on the
	// instant (startDue), or when the runs are dropped (unwaitAll).
	gates []chan struct{}
}

// gateRuns is how many runs of an instant one gate releases: the first
// handlers of a burst of 100,000 start while the timer still decides the
// rest, instead of after all of them (20 ms).
const gateRuns = 1024

// wait holds r, accepted, until its due_at: r.waiting is set, and the
// timer of its instant starts it (startDue). d.mu is held.
func (d *dispatcher) wait(r *run) {
	k := r.dueAt.UnixNano()
	di := d.waiting[k]
	if di == nil {
		di = &dueInstant{}
		d.waiting[k] = di
		di.timer = time.AfterFunc(r.dueAt.Sub(d.now()), func() { d.startDue(k) })
	}
	r.waiting = true
	// Ahead, what begin would make: the instant has many to start.
	r.ctx, r.cancel = context.WithCancelCause(context.Background())
	r.launch = d.prepare(r)
	r.begun = make(chan *launch, 1)
	if len(di.runs)%gateRuns == 0 {
		di.gates = append(di.gates, make(chan struct{}))
	}
	di.runs = append(di.runs, r)
	go d.await(r, di.gates[len(di.gates)-1])
}

// await is the goroutine of run r, waiting for its due instant: when gate
// opens, if the instant's timer started r (r.launched), it begins r and
// calls its handler, handing the launch to r's worker first (r.begun).
// Otherwise r went to its job's queue, was dropped, or was never started,
// and the goroutine ends.
func (d *dispatcher) await(r *run, gate <-chan struct{}) {
	<-gate
	if !r.launched { // set before gate closed
		return
	}
	l := d.begin(r.ctx, r)
	r.begun <- l
	d.call(r, l)
}

// startDue hands the runs of due instant k that still wait to their jobs'
// workers, applying each one's block strategy now, as if it had been
// accepted on its instant: DISCARD_LATER ends it FAILED when its job is
// busy here (the run was accepted, so the refusal is its result),
// COVER_EARLY kills what its job runs or queues.
func (d *dispatcher) startDue(k int64) {
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
	for i, gate := range di.gates {
		d.mu.Lock()
		for _, r := range di.runs[i*gateRuns : min((i+1)*gateRuns, len(di.runs))] {
			if r.waiting && d.closing { // stopAccepting came in between
				r.waiting = false
				ends = append(ends, ending{r, carillonv1.RunStatus_RUN_STATUS_KILLED, ErrShuttingDown.Error()})
			}
			if w := d.startAt(r, &ends); w != nil {
				wake = append(wake, w)
			}
		}
		d.mu.Unlock()
		close(gate) // the launched runs' handlers start
	}
	// Their workers see them to their end; they can wait for the
	// handlers to start: this goroutine goes to the back of the runtime's
	// queue, behind the handlers' goroutines, before it wakes them, and a
	// large burst's are woken later still, once the handlers of every
	// executor of the process have had time to start (see wakeDelay).
	runtime.Gosched()
	if delay := wakeDelay(len(wake)); delay > 0 {
		time.AfterFunc(delay, func() { d.notifyAll(wake) })
	} else {
		d.notifyAll(wake)
	}
	for _, e := range ends {
		d.end(e.r, e.status, e.msg)
	}
}

// wakeDelayPerRun is how long after its instant the workers of a large
// burst are woken, per run of the burst: several times what starting a
// handler takes (about 1.5 µs), so that the starts are over, those of the
// other executors of the process too, before the workers report: waking
// thousands of workers at once took the processors from the handlers of
// the other executors, whose timers fire on the same instant, and their
// results took the admin's CPU, on the same host, from the starts. The
// workers' part of a run (its report, a timeout's) is not urgent. Load
// tool, 10,000 jobs on one instant: p99 37 ms at 3 µs, 17.5 ms at 10 µs
// (medians of 3; BENCHMARKS.md, issue 20).
const wakeDelayPerRun = 10 * time.Microsecond

// wakeDelay is how long after a burst's instant its n workers are woken:
// none for a burst of one gate's runs or fewer, which starts within a
// millisecond.
func wakeDelay(n int) time.Duration {
	if n <= gateRuns {
		return 0
	}
	return time.Duration(n) * wakeDelayPerRun
}

// notifyAll wakes the workers ws, starting those made for the burst.
func (d *dispatcher) notifyAll(ws []*worker) {
	d.mu.Lock()
	for _, w := range ws {
		d.startWorker(w)
	}
	d.mu.Unlock()
	for _, w := range ws {
		notify(w.wake)
	}
}

// ending is a run to end, with its status and why.
type ending struct {
	r      *run
	status carillonv1.RunStatus
	msg    string
}

// startAt applies waiting run r's block strategy on its instant, and
// returns the worker to wake, if any: r launched on its own goroutine
// when its job is idle here, or queued; runs to end are added to ends.
// d.mu is held.
func (d *dispatcher) startAt(r *run, ends *[]ending) *worker {
	if !r.waiting {
		return nil
	}
	r.waiting = false
	if err := d.discards(r); err != nil {
		*ends = append(*ends, ending{r, carillonv1.RunStatus_RUN_STATUS_FAILED, err.Error()})
		return nil
	}
	if w := d.workers[r.jobID]; !w.busy() {
		if w == nil {
			w = d.newIdleWorker(r.jobID) // started with the wake (notifyAll)
		}
		r.launched = true
		w.current, w.handoff = r, r
		return w
	}
	w, covered, cause := d.enqueue(r)
	for _, q := range covered {
		*ends = append(*ends, ending{q, carillonv1.RunStatus_RUN_STATUS_KILLED, cause.Error() + " before it started"})
	}
	return w
}

// unwaitJob takes the runs of job jobID that wait for their due_at out of
// waiting and returns them, to be ended. d.mu is held.
func (d *dispatcher) unwaitJob(jobID int64) []*run {
	var out []*run
	for _, di := range d.waiting {
		for _, r := range di.runs {
			if r.waiting && r.jobID == jobID {
				r.waiting = false
				out = append(out, r)
			}
		}
	}
	return out
}

// unwaitAll stops every due instant's timer and returns the runs that
// waited, to be ended. d.mu is held.
func (d *dispatcher) unwaitAll() []*run {
	var out []*run
	for k, di := range d.waiting {
		di.timer.Stop()
		for _, gate := range di.gates {
			close(gate) // its runs' goroutines end: none is launched
		}
		for _, r := range di.runs {
			if r.waiting {
				r.waiting = false
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
