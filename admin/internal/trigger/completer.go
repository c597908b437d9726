package trigger

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Completer is the fire path's last stage: it records how runs were
// dispatched (store.RunStore.RecordDispatches) and settles runs from their results
// (store.RunStore.Settle), each in coalesced transactions, and hands on what
// follows a settled run. What follows (retry with backoff, alarm, child
// jobs' runs, a FIX_DELAY job's next fire) is decided by the pure policy
// Config.FollowUp and written in the settling transaction, so that a
// crash never keeps a decision and loses its run's status or the other
// way round; the new pending runs go to Config.Queue (the scheduler),
// which hands each to the Dispatcher at its due time. It is safe for
// concurrent use.
type Completer struct {
	cfg      *Config
	work     *inflight
	records  *coalescer[store.Dispatch]
	results  *coalescer[store.Result]
	deferred *deferredRecords // the dispatch records of scheduled fires, until their results come
	// killing holds the runs of XXL_JOB groups being killed (Trigger.Kill)
	// until they are settled: any result of one is taken as KILLED.
	killing sync.Map // run ID -> struct{}
}

func newCompleter(cfg *Config, w *writer, work *inflight) *Completer {
	c := &Completer{cfg: cfg, work: work}
	c.records = newCoalescer(w, "record", batchMax, recordLinger, c.recordNow)
	c.results = newCoalescer(w, "result", resultBatchMax, resultLinger, c.settleNow)
	c.results.split = true // an executor's backlog comes thousands a call
	c.deferred = newDeferredRecords(c.recordLater, cfg.Clock)
	c.deferred.hold = func() bool { return c.results.backlogged(recordDelay) }
	return c
}

// unstored returns which of runs have a dispatch record that this admin
// holds and has not stored yet: kept for its result (deferredRecords),
// waiting for the writer or being written, alone (the record lane) or
// with its result (the result lane). A burst's records wait seconds in
// each, a million results' a minute, and their runs are not undispatched
// (the monitor's judgement).
func (c *Completer) unstored(runs []store.Run) map[int64]bool {
	if len(runs) == 0 {
		return nil
	}
	out := map[int64]bool{}
	want := make(map[int64]bool, len(runs))
	for _, r := range runs {
		if c.deferred.holds(r.ID) {
			out[r.ID] = true
		} else {
			want[r.ID] = true
		}
	}
	c.records.each(func(d store.Dispatch) {
		if want[d.RunID] {
			out[d.RunID] = true
		}
	})
	// A result that carries its run's dispatch record (Result.Dispatch)
	// stores the record with it: under a backlog of results it waits in
	// the result lane longer than a run takes to look undispatched.
	c.results.each(func(r store.Result) {
		if r.Dispatch != nil && want[r.RunID] {
			out[r.RunID] = true
		}
	})
	return out
}

// record stores dispatch records and settles the runs they failed.
// Records written at the same time share one transaction.
func (c *Completer) record(ctx context.Context, ds ...store.Dispatch) error {
	if len(ds) == 0 {
		return nil
	}
	select {
	case err := <-c.records.add(ds):
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// recordNow stores dispatch records in one transaction.
func (c *Completer) recordNow(ds []store.Dispatch) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	settled, err := c.cfg.Store.Runs.RecordDispatches(ctx, c.cfg.FollowUp, ds)
	if err != nil {
		return err
	}
	c.followUp(settled)
	return nil
}

// recordLater stores the dispatch records kept for their results too
// long, in batches, without waiting for the writes.
func (c *Completer) recordLater(ds []store.Dispatch) {
	for len(ds) > 0 {
		n := min(len(ds), batchMax)
		c.logFailure(c.records.add(ds[:n:n]), "trigger: record dispatches", n)
		ds = ds[n:]
	}
}

// logFailure waits on its own goroutine for the outcome of a queued write
// of runs (done), and logs it as what if it failed.
func (c *Completer) logFailure(done <-chan error, what string, runs int) {
	c.work.Go(func() {
		if err := <-done; err != nil {
			c.cfg.Logger.Error(what, "runs", runs, "err", err)
		}
	})
}

// Settle records results of running runs (see store.RunStore.Settle), with
// their dispatch records when those were not stored yet, and hands the
// retries and child runs it creates to the scheduler. Results that arrive
// together are settled in one transaction.
func (c *Completer) Settle(ctx context.Context, results []store.Result) error {
	results = c.killed(results)
	results, taken := c.deferred.attach(results)
	select {
	case err := <-c.results.add(results):
		if err != nil && len(taken) > 0 {
			c.deferred.keep(whole(taken), time.Time{}) // the executor will report again
		}
		return err
	case <-ctx.Done():
		return ctx.Err() // the results may still be settled; repeating them is harmless
	}
}

// settleLater settles the results of runs that were not sent (the
// dispatcher skipped them), without waiting for the write: an overloaded
// admin must not hold the dispatch slots of the fires it skips while
// their results linger for a transaction. A write that fails leaves the
// runs RUNNING, unsent, for the monitor to settle.
func (c *Completer) settleLater(results []store.Result) {
	c.logFailure(c.results.add(results), "trigger: settle runs not sent", len(results))
}

// settleNow settles results in one transaction.
func (c *Completer) settleNow(results []store.Result) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	settled, err := c.cfg.Store.Runs.Settle(ctx, c.cfg.FollowUp, results)
	if err != nil {
		return err
	}
	if c.cfg.Metrics != nil {
		started := make(map[int64]time.Time, len(results))
		for _, r := range results {
			if !r.StartedAt.IsZero() {
				started[r.RunID] = r.StartedAt
			}
		}
		for _, r := range settled.Runs {
			due := r.DueAt // a retry's: the end of its delay
			if due.IsZero() {
				due = r.ScheduledAt
			}
			c.cfg.Metrics.Executed(due, started[r.ID], r.FinishedAt)
		}
	}
	c.followUp(settled)
	return nil
}

// followUp logs settled runs and hands on what follows them: pending
// runs to the queue, alarms to the alarm sender.
func (c *Completer) followUp(s store.Settled) {
	alarms := false
	logged := c.cfg.Logger.Enabled(context.Background(), slog.LevelInfo) // else no line's values are built
	for _, r := range s.Runs {
		if logged {
			c.cfg.Logger.Info("run finished", "run", r.ID, "job", r.JobID, "status", r.Status.String(),
				"attempt", r.Attempt, "executor", r.ExecutorAddress, "message", r.Message)
		}
		c.cfg.Metrics.Finished(r.Status)
		alarms = alarms || r.AlarmStatus == carillonv1.AlarmStatus_ALARM_STATUS_PENDING
	}
	if alarms && c.cfg.Alarms != nil {
		c.cfg.Alarms.Wake()
	}
	c.WorkflowRunsEnded(s.WorkflowRunsEnded)
	retries := 0
	for _, r := range s.FollowUps {
		if r.TriggerType == carillonv1.TriggerType_TRIGGER_TYPE_RETRY {
			retries++
		}
	}
	c.cfg.Metrics.Retries(retries)
	if len(s.FollowUps) > 0 {
		c.cfg.Queue.Enqueue(s.FollowUps...)
	}
	if len(s.Freed) > 0 {
		c.cfg.Queue.Enqueue(s.Freed...)
	}
	if s.Rescheduled {
		c.cfg.Queue.Wake()
	}
}

// killed returns results with those of runs being killed (Trigger.Kill)
// taken as KILLED, and forgets the runs it settles KILLED.
func (c *Completer) killed(results []store.Result) []store.Result {
	for i, r := range results {
		if _, ok := c.killing.Load(r.RunID); !ok {
			continue
		}
		if r.Status != carillonv1.RunStatus_RUN_STATUS_KILLED {
			r.Message = fmt.Sprintf("killed; the executor then reported %s: %s", strings.TrimPrefix(r.Status.String(), "RUN_STATUS_"), r.Message)
			r.Status = carillonv1.RunStatus_RUN_STATUS_KILLED
			results[i] = r
		}
		c.killing.Delete(r.RunID)
	}
	return results
}

// SentTo returns the executor run was sent to while its dispatch record is
// deferred until its result, not stored yet; "" when none is deferred.
func (c *Completer) SentTo(run int64) string { return c.deferred.address(run) }
