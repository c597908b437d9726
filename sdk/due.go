package sdk

import (
	"fmt"
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
// executor, not one per run, and its runs go to their workers under one
// lock, as a RunBatch's do (acceptAll).
type dueInstant struct {
	runs  []*run // some may no longer wait: killed or cancelled since (run.waiting)
	timer *time.Timer
}

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
	di.runs = append(di.runs, r)
}

// startDue hands the runs of due instant k that still wait to their jobs'
// workers, applying each one's block strategy now, as if it had been
// accepted on its instant: DISCARD_LATER ends it FAILED when its job is
// busy here (the run was accepted, so the refusal is its result),
// COVER_EARLY kills what its job runs or queues.
func (d *dispatcher) startDue(k int64) {
	type ending struct {
		r      *run
		status carillonv1.RunStatus
		msg    string
	}
	var wake []*worker
	var ends []ending
	d.mu.Lock()
	di := d.waiting[k]
	delete(d.waiting, k)
	if di == nil || d.closing { // stopAccepting dropped them
		d.mu.Unlock()
		return
	}
	for _, r := range di.runs {
		if !r.waiting {
			continue
		}
		r.waiting = false
		if err := d.discards(r); err != nil {
			ends = append(ends, ending{r, carillonv1.RunStatus_RUN_STATUS_FAILED, err.Error()})
			continue
		}
		w, covered, cause := d.enqueue(r)
		wake = append(wake, w)
		for _, q := range covered {
			ends = append(ends, ending{q, carillonv1.RunStatus_RUN_STATUS_KILLED, cause.Error() + " before it started"})
		}
	}
	d.mu.Unlock()
	for _, w := range wake {
		notify(w.wake)
	}
	for _, e := range ends {
		d.end(e.r, e.status, e.msg)
	}
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
