package runner

import (
	"sync"

	"github.com/carillonhq/carillon/sdk/internal/report"
	"github.com/carillonhq/carillon/sdk/internal/runlog"
)

// recorder writes the logs and spools the results of finished runs, on
// one goroutine, in batches: a burst's runs then cost one write per log
// segment and one spool write per batch instead of two writes each, and
// their bookkeeping no longer holds up the start of the next runs'
// handlers. A run counts as running (a repeat of it is refused, its log is
// read from memory) until its batch is written.
type recorder struct {
	d       *Dispatcher
	mu      sync.Mutex
	queue   []endedRun
	running bool
}

// endedRun is a finished run with its result.
type endedRun struct {
	r   *Run
	res report.Result
}

// add hands finished runs and their results to the recorder.
func (rec *recorder) add(ers []endedRun) {
	rec.mu.Lock()
	rec.queue = append(rec.queue, ers...)
	start := !rec.running
	rec.running = true
	rec.mu.Unlock()
	if start {
		rec.d.wg.Add(1) // Drain waits for it as for the workers
		go rec.loop()
	}
}

// loop writes batches until the queue is empty.
func (rec *recorder) loop() {
	defer rec.d.wg.Done()
	for {
		rec.mu.Lock()
		batch := rec.queue
		rec.queue = nil
		if len(batch) == 0 {
			rec.running = false
			rec.mu.Unlock()
			return
		}
		rec.mu.Unlock()

		rec.write(batch)
	}
}

// write puts away finished runs, with their results: the results are
// spooled, then the logs closed (each one's end mark, for a log with a
// file of its own, written), then the runs forgotten and the results
// queued for delivery. So a log closed says its run's result is spooled
// or delivered: a restarted executor that finds a log with a file of its
// own and no end mark knows its run was cut short (see
// [Dispatcher.Held]); and a result is delivered only once its log is on
// disk, for the admin to read.
func (rec *recorder) write(batch []endedRun) {
	d := rec.d
	logs := make([]*runlog.Log, len(batch))
	results := make([]report.Result, len(batch))
	for i, er := range batch {
		logs[i], results[i] = er.r.Log, er.res
	}
	var spoolErr error
	if d.SpoolFunc != nil {
		spoolErr = d.SpoolFunc(results)
	}
	if err := d.Logs.CloseLogs(logs); err != nil {
		d.Logger.Warn("sdk: write run logs", "runs", len(batch), "err", err)
	}
	for _, er := range batch {
		d.forget(er.r)
	}
	if d.SpoolFunc != nil {
		d.QueueFunc(results, spoolErr)
		return
	}
	if d.ReportBatchFunc != nil {
		d.ReportBatchFunc(results)
		return
	}
	for _, res := range results {
		d.ReportFunc(res)
	}
}
