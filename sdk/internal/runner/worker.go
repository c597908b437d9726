package runner

import (
	"context"
	"fmt"
	"time"
)

// worker runs the runs of one job, one at a time, in order. Its current
// run may be one launched on its due instant (launcher.go), which runs on a
// goroutine of its own: the worker, if it has a goroutine, waits for its
// end before it starts the next.
type worker struct {
	jobID   int64
	queue   []*Run
	current *Run
	started bool // its goroutine runs (startWorker); guarded by dispatcher.mu
	// waiting counts the runs of the job that wait for their due_at
	// (run.worker): the worker stays in dispatcher.workers until they
	// start. Guarded by dispatcher.mu.
	waiting int
	wake    chan struct{}
}

// busy says whether w runs or has queued a run; a nil worker is not busy.
// d.mu is held.
func (w *worker) busy() bool {
	return w != nil && (w.current != nil || len(w.queue) > 0)
}

// describe says what a worker is busy with; d.mu is held.
func (w *worker) describe() string {
	switch {
	case w.current != nil && len(w.queue) > 0:
		return fmt.Sprintf("is running run %d with %d more queued", w.current.ID, len(w.queue))
	case w.current != nil:
		return fmt.Sprintf("is running run %d", w.current.ID)
	case len(w.queue) > 0:
		return fmt.Sprintf("has %d runs queued", len(w.queue))
	}
	return "is idle"
}

// work is the goroutine of job's worker w. It runs the runs queued for it
// one at a time, after the run launched for its job on a due instant, if
// one runs (launcher.go: release wakes it then): it launches each one,
// calls its handler on a goroutine of its own, and waits for its end
// (supervise).
func (w *worker) work(d *Dispatcher) {
	defer d.wg.Done()
	idle := time.NewTimer(d.IdleTimeout)
	defer idle.Stop()
	for {
		d.mu.Lock()
		if len(w.queue) == 0 || w.current != nil {
			if d.closing && w.current == nil && w.waiting == 0 {
				delete(d.workers, w.jobID)
				d.mu.Unlock()
				return
			}
			d.mu.Unlock()
			select {
			case <-w.wake:
			case <-idle.C:
				d.mu.Lock()
				if len(w.queue) == 0 && w.current == nil && w.waiting == 0 {
					delete(d.workers, w.jobID)
					d.mu.Unlock()
					return
				}
				d.mu.Unlock()
			}
			continue
		}
		r := w.queue[0]
		w.queue[0] = nil
		w.queue = w.queue[1:]
		ctx, cancel := context.WithCancelCause(context.Background())
		r.cancel = cancel
		r.state.Store(stateLaunched)
		w.current = r
		d.mu.Unlock()

		l := r.launch // prepared ahead for a run that waited for its due_at
		if l == nil {
			l = d.prepare(r)
		}
		if l.start(ctx) { // a run its worker launched is not cut before it starts
			go l.callHandler()
			l.supervise()
		}
		cancel(nil)

		d.mu.Lock()
		w.current = nil
		d.mu.Unlock()
		idle.Reset(d.IdleTimeout)
	}
}
