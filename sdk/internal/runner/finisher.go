package runner

import (
	"sync"

	"github.com/carillonhq/carillon/sdk/internal/report"
	"github.com/carillonhq/carillon/sdk/internal/runlog"
)

// finisher writes the logs and spools the results of runs whose handlers
// returned, on one goroutine, in batches: a burst's runs then cost one
// write per log segment and one spool write per batch instead of two
// writes each, and their bookkeeping no longer holds up the start of the
// next runs' handlers. A run counts as running (a repeat of it is refused,
// its log is read from memory) until its batch is written.
type finisher struct {
	mu      sync.Mutex
	queue   []finishedRun
	running bool
}

// finishedRun is a run whose handler returned, with its result.
type finishedRun struct {
	r   *Run
	res report.Result
}

// complete hands r and its result to the finisher.
func (d *Dispatcher) complete(r *Run, res report.Result) {
	d.completeAll([]finishedRun{{r, res}})
}

// completeAll hands runs and their results to the finisher.
func (d *Dispatcher) completeAll(frs []finishedRun) {
	f := &d.finisher
	f.mu.Lock()
	f.queue = append(f.queue, frs...)
	start := !f.running
	f.running = true
	f.mu.Unlock()
	if start {
		d.wg.Add(1) // drain waits for it as for the workers
		go d.finishLoop()
	}
}

// finishLoop writes batches until the queue is empty.
func (d *Dispatcher) finishLoop() {
	defer d.wg.Done()
	f := &d.finisher
	for {
		f.mu.Lock()
		batch := f.queue
		f.queue = nil
		if len(batch) == 0 {
			f.running = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()

		d.finishRuns(batch)
	}
}

// finishRuns puts away runs that ended, with their results: the results
// are spooled, then the logs closed (each one's end mark, for a log with a
// file of its own, written), then the runs forgotten and the results
// queued for delivery. So a log closed says its run's result is spooled
// or delivered: a restarted executor that finds a log with a file of its
// own and no end mark knows its run was cut short (see
// [dispatcher.held]); and a result is delivered only once its log is on
// disk, for the admin to read.
func (d *Dispatcher) finishRuns(batch []finishedRun) {
	logs := make([]*runlog.Log, len(batch))
	results := make([]report.Result, len(batch))
	for i, fr := range batch {
		logs[i], results[i] = fr.r.Log, fr.res
	}
	var spoolErr error
	if d.SpoolFunc != nil {
		spoolErr = d.SpoolFunc(results)
	}
	if err := d.Logs.CloseLogs(logs); err != nil {
		d.Logger.Warn("sdk: write run logs", "runs", len(batch), "err", err)
	}
	for _, fr := range batch {
		d.finish(fr.r)
	}
	if d.SpoolFunc != nil {
		d.QueueFunc(results, spoolErr)
		return
	}
	d.reportAll(results)
}

// reportAll hands results to the reporter.
func (d *Dispatcher) reportAll(rs []report.Result) {
	if d.ReportBatchFunc != nil {
		d.ReportBatchFunc(rs)
		return
	}
	for _, r := range rs {
		d.ReportFunc(r)
	}
}
