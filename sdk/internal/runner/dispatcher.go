package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk/internal/report"
	"github.com/carillonhq/carillon/sdk/internal/runlog"
)

const (
	// IdleTimeoutDefault is how long a job's worker waits for work before it
	// exits; the next run of the job starts a new one.
	IdleTimeoutDefault = 90 * time.Second
	// AbandonAfterDefault is how long a worker waits for a handler to return once
	// the run's context has ended (timeout, kill, shutdown) before it
	// abandons the handler's goroutine and moves on.
	AbandonAfterDefault = 5 * time.Second
)

// Config is what a dispatcher needs from the executor.
type Config struct {
	Logs            *runlog.Store
	NowFunc         func() time.Time
	Logger          *slog.Logger
	ReportFunc      func(report.Result)   // hands a result to the reporter
	ReportBatchFunc func([]report.Result) // hands several; nil: report each
	// SpoolFunc and QueueFunc, when set, do what ReportBatchFunc does in
	// two steps, so that the recorder closes the runs' logs in between:
	// SpoolFunc writes results down, QueueFunc hands them to the
	// reporter, with SpoolFunc's error. Unset: ReportBatchFunc after.
	SpoolFunc func([]report.Result) error
	QueueFunc func([]report.Result, error)
	// PrepareFunc returns the call of run r's handler, with its
	// middleware, that the run's goroutine makes with the run's context.
	PrepareFunc    func(r *Run) Call
	ScriptsEnabled bool
	IdleTimeout    time.Duration
	AbandonAfter   time.Duration
	Observer       Observer // nil: none
}

// Dispatcher owns the per-job workers: it accepts runs, applies block
// strategies, kills, and drains on shutdown.
type Dispatcher struct {
	Config

	mu      sync.Mutex
	workers map[int64]*worker     // by job id
	runs    map[report.Key]*Run   // accepted, not ended
	waiting map[int64]*dueInstant // runs accepted ahead of their due_at, by its UnixNano (launcher.go)
	recent  recentRuns            // the runs accepted last, ended or not
	dbs     map[string]string     // each database id seen, to share one copy of it (an executor sees one or a few)
	closing bool
	wg      sync.WaitGroup // worker goroutines, the recorder's, and the runs launched on their due instant until finished

	launcher  launcher  // starts the runs sent ahead on their due instant
	collector collector // finishes the runs it launched, in batches
	recorder  recorder  // writes the logs and results of ended runs, in batches
}

// New returns a dispatcher with no worker yet.
func New(c Config) *Dispatcher {
	if c.Observer == nil {
		c.Observer = noObserver{}
	}
	d := &Dispatcher{
		Config:  c,
		workers: make(map[int64]*worker),
		runs:    make(map[report.Key]*Run),
		waiting: make(map[int64]*dueInstant),
		dbs:     make(map[string]string),
	}
	d.launcher.d, d.collector.d, d.recorder.d = d, d, d
	return d
}

// notify wakes whoever waits on c, without blocking when a wake-up is
// already pending.
func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Accept queues r on its job's worker, or refuses it.
func (d *Dispatcher) Accept(r *Run) error {
	return d.AcceptAll([]*Run{r})[0]
}

// AcceptAll queues runs on their jobs' workers, in order, or refuses each
// with its error. It takes the dispatcher's lock once and wakes the
// workers after releasing it: a RunBatch of a cron burst brings hundreds
// of runs, and taking the lock per run, which every worker also takes,
// made the accepting goroutine hand the processor to a worker at almost
// every run.
func (d *Dispatcher) AcceptAll(rs []*Run) []error {
	errs := make([]error, len(rs))
	var wake []*worker
	var refused []*Run // scripts while scripts are disabled
	type cover struct {
		runs  []*Run
		cause error
	}
	var covers []cover
	d.mu.Lock()
	for i, r := range rs {
		w, covered, cause, err := d.admit(r)
		switch {
		case err != nil:
			errs[i] = err
		case w == nil && r.waiting:
			// accepted; starts at its due_at (launcher.go)
		case w == nil:
			refused = append(refused, r)
		default:
			wake = append(wake, w)
			if len(covered) > 0 {
				covers = append(covers, cover{covered, cause})
			}
		}
	}
	d.mu.Unlock()
	for _, w := range wake {
		notify(w.wake)
	}
	for i, err := range errs {
		if errors.Is(err, ErrDuplicateRun) {
			d.Logger.Warn("sdk: run refused as a duplicate", "run_id", rs[i].ID, "database_id", rs[i].DB, "job_id", rs[i].JobID, "err", err) //nolint:gosec // errs has one entry per run of rs
		}
	}
	for _, r := range refused {
		d.finishUnstarted(r, carillonv1.RunStatus_RUN_STATUS_FAILED, ErrScriptsDisabled.Error()+" (Config.ScriptsEnabled is false)")
	}
	for _, c := range covers {
		for _, q := range c.runs {
			d.finishUnstarted(q, carillonv1.RunStatus_RUN_STATUS_KILLED, c.cause.Error()+" before it started")
		}
	}
	return errs
}

// admit queues r on its job's worker and returns the worker, or the error
// refusing r. A nil worker and error means r was accepted but does not go
// to a worker now: it waits for its due_at (r.waiting), or must end at once
// (a script while scripts are disabled). covered are the queued runs r's
// COVER_EARLY strategy dropped, to end with cause. d.mu is held.
func (d *Dispatcher) admit(r *Run) (w *worker, covered []*Run, cause error, err error) {
	if d.closing {
		return nil, nil, nil, ErrShuttingDown
	}
	if r.DB != "" {
		if db, ok := d.dbs[r.DB]; ok {
			r.DB = db
		} else {
			d.dbs[r.DB] = r.DB
		}
	}
	key := r.key()
	if _, ok := d.runs[key]; ok {
		return nil, nil, nil, fmt.Errorf("%w: run %d%s is already queued or running here", ErrDuplicateRun, r.ID, report.OfDatabase(r.DB))
	}
	due := r.DueAt.After(d.NowFunc()) // its block strategy applies when it starts
	if !due {
		if err := d.discards(r); err != nil {
			return nil, nil, nil, err
		}
	}
	if d.acceptedFrom(key) != 0 {
		return nil, nil, nil, fmt.Errorf("%w: run %d%s was accepted here before", ErrDuplicateRun, r.ID, report.OfDatabase(r.DB))
	}
	d.recent.add(key)
	r.Log = runlog.NewLog(d.Logs, d.Logs.RunDir(d.Logs.Today(), r.DB), r.ID, d.NowFunc)
	r.Log.Printf("run %d of job %d accepted: %s, param %q, shard %d of %d (0-based), block strategy %s, timeout %s%s",
		r.ID, r.JobID, r.What, r.Param, r.ShardIndex, r.ShardTotal,
		strings.TrimPrefix(r.Block.String(), "BLOCK_STRATEGY_"), timeoutString(r.Timeout), dueString(r.DueAt, due))
	d.runs[key] = r

	if r.Script && !d.ScriptsEnabled {
		return nil, nil, nil, nil
	}
	if due {
		d.launcher.wait(r)
		return nil, nil, nil, nil
	}
	w, covered, cause = d.enqueue(r)
	return w, covered, cause, nil
}

// discards returns the error of DISCARD_LATER when r has that block
// strategy and its job's worker is busy, or nil. d.mu is held.
func (d *Dispatcher) discards(r *Run) error {
	return discardsOn(r, d.workers[r.JobID])
}

// discardsOn is discards with r's job's worker w, nil if it has none.
func discardsOn(r *Run, w *worker) error {
	if r.Block == carillonv1.BlockStrategy_BLOCK_STRATEGY_DISCARD_LATER && w.busy() {
		return fmt.Errorf("%w: job %d %s here (block strategy DISCARD_LATER)", ErrDiscarded, r.JobID, w.describe())
	}
	return nil
}

// enqueue puts r, admitted, on its job's worker (started if there is none)
// and returns the worker; under COVER_EARLY it first cancels the running
// run and drops the queued ones, which it returns to end with cause. d.mu
// is held.
func (d *Dispatcher) enqueue(r *Run) (w *worker, covered []*Run, cause error) {
	w = d.workers[r.JobID]
	busy := w.busy()
	if w == nil {
		w = d.newIdleWorker(r.JobID)
	}
	d.startWorker(w)
	if busy && r.Block == carillonv1.BlockStrategy_BLOCK_STRATEGY_COVER_EARLY {
		cause = fmt.Errorf("%w: covered by run %d", ErrKilled, r.ID)
		covered, w.queue = w.queue, nil
		if w.current != nil {
			w.current.cancel(cause)
		}
	}
	w.queue = append(w.queue, r)
	return w, covered, cause
}

// newIdleWorker makes the worker of job jobID without a goroutine
// (startWorker): a run launched on its due instant needs none unless
// another run queues behind it (launcher.go). d.mu is held.
func (d *Dispatcher) newIdleWorker(jobID int64) *worker {
	w := &worker{jobID: jobID, wake: make(chan struct{}, 1)}
	d.workers[jobID] = w
	return w
}

// startWorker starts w's goroutine unless it runs; drain waits for it.
// d.mu is held.
func (d *Dispatcher) startWorker(w *worker) {
	if !w.started {
		w.started = true
		d.wg.Add(1)
		go w.work(d)
	}
}

// acceptedFrom says whether run k was accepted here before, and how it is
// known to have been; 0 when it was not, as far as the executor
// remembers, without touching the disk for a new run: the last
// recentRunsMax runs this process accepted, the runs whose results a
// previous process left unacknowledged (see Remember), and the runs whose
// logs were on disk from today or yesterday when it started (see
// [runlog.Store.EarlierRuns]; a log reaches the disk when its run ends, or
// before when it needs a file of its own, so a run cut short by a crash
// may or may not be remembered). The admin sends each run once; this
// guards against a replayed request. d.mu is held.
func (d *Dispatcher) acceptedFrom(k report.Key) runOrigin {
	earlier, err := d.Logs.EarlierRuns(k.DB, k.ID)
	if err != nil {
		d.Logger.Warn("sdk: read the run logs of before the start; a run sent twice may run twice", "err", err)
	}
	for _, id := range earlier {
		d.recent.addFrom(report.Key{DB: k.DB, ID: id}, loggedBefore)
	}
	return d.recent.origin(k)
}

// Held says, for each run id of database db, whether this executor holds
// the run, and how (see HeldRunsResponse):
//   - ACTIVE when it is queued or running;
//   - ENDED when it ended here: this process accepted it and it is no
//     longer queued or running (its result went to the reporter, which
//     spools it before its log is closed), or an earlier process left its
//     result in the spool, or its log on disk is whole: kept in memory
//     until the run ended and then written as one record, or in a file of
//     its own with the end mark written when the run ended (see
//     [logStore.logStates]);
//   - CUT_SHORT when an earlier process accepted it and left its log in a
//     file of its own without the end mark: that process was killed while
//     the run ran (or before its result was spooled), and no result will
//     come, unless the spool says otherwise (the service checks it);
//   - UNSPECIFIED when none of these, as far as the dispatcher knows.
func (d *Dispatcher) Held(db string, ids []int64) []carillonv1.HeldRunState {
	states := make([]carillonv1.HeldRunState, len(ids))
	var onDisk []int64 // the runs whose logs say
	d.mu.Lock()
	for i, id := range ids {
		k := report.Key{DB: db, ID: id}
		if id <= 0 {
			continue // never a run
		}
		if _, ok := d.runs[k]; ok {
			states[i] = carillonv1.HeldRunState_HELD_RUN_STATE_ACTIVE
			continue
		}
		switch d.acceptedFrom(k) {
		case acceptedHere, spooledBefore:
			states[i] = carillonv1.HeldRunState_HELD_RUN_STATE_ENDED
		default: // an earlier process's, or older than acceptedFrom knows
			onDisk = append(onDisk, id)
		}
	}
	d.mu.Unlock()
	if len(onDisk) == 0 {
		return states
	}
	// Read without holding d.mu.
	logs, err := d.Logs.States(db, onDisk)
	if err != nil {
		d.Logger.Warn("sdk: HeldRuns: read the run logs; runs whose logs cannot be read are not listed", "err", err)
	}
	for i, id := range ids {
		if states[i] != carillonv1.HeldRunState_HELD_RUN_STATE_UNSPECIFIED {
			continue
		}
		switch logs[id] {
		case runlog.Ended:
			states[i] = carillonv1.HeldRunState_HELD_RUN_STATE_ENDED
		case runlog.CutShort:
			states[i] = carillonv1.HeldRunState_HELD_RUN_STATE_CUT_SHORT
		}
	}
	return states
}

// Remember adds runs accepted by an earlier process, those whose results
// it left in the spool, to the runs accepted here before.
func (d *Dispatcher) Remember(keys []report.Key) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, k := range keys {
		d.recent.addFrom(k, spooledBefore)
	}
}

// Queued returns how many runs wait in their jobs' queues.
func (d *Dispatcher) Queued() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, w := range d.workers {
		n += len(w.queue)
	}
	return n
}

// Kill cancels the job's running run and drops its queued ones, and
// those waiting for their due_at.
func (d *Dispatcher) Kill(jobID int64) {
	cause := fmt.Errorf("%w by the admin", ErrKilled)
	d.mu.Lock()
	dropped := d.launcher.unwaitJob(jobID)
	if w := d.workers[jobID]; w != nil {
		dropped = append(dropped, w.queue...)
		w.queue = nil
		if w.current != nil {
			w.current.cancel(cause)
		}
	}
	d.mu.Unlock()
	for _, r := range dropped {
		d.finishUnstarted(r, carillonv1.RunStatus_RUN_STATUS_KILLED, cause.Error()+" before it started")
	}
}

// KillRun stops run k alone: it cancels it when it runs, or drops it from
// its job's queue or from the runs waiting for their due_at, reported
// KILLED. When jobID is not 0 it must be the run's job. A run that is not
// held here is left alone.
func (d *Dispatcher) KillRun(k report.Key, jobID int64) {
	cause := fmt.Errorf("%w by the admin", ErrKilled)
	d.mu.Lock()
	r := d.runs[k]
	if r == nil || (jobID != 0 && r.JobID != jobID) {
		d.mu.Unlock()
		return
	}
	if r.waiting {
		d.launcher.unwait(r)
		d.mu.Unlock()
		d.finishUnstarted(r, carillonv1.RunStatus_RUN_STATUS_KILLED, cause.Error()+" before it started")
		return
	}
	w := d.workers[r.JobID]
	if w == nil {
		d.mu.Unlock()
		return
	}
	if w.current == r {
		r.cancel(cause)
		d.mu.Unlock()
		return
	}
	i := slices.Index(w.queue, r)
	if i >= 0 {
		w.queue = slices.Delete(w.queue, i, i+1)
	}
	d.mu.Unlock()
	if i >= 0 {
		d.finishUnstarted(r, carillonv1.RunStatus_RUN_STATUS_KILLED, cause.Error()+" before it started")
	}
}

// CancelBeforeStart drops run k if its handler has not started (it waits
// for its due_at, or is queued), reported SKIPPED with reason, and says
// whether it did. When jobID is not 0 it must be the run's job. A running
// run, or one not held here, is left alone. With replace the run is
// dropped silently, to be sent again with the same id from its job's new
// definition (KillRequest.replace): no result is reported, and it is
// forgotten, its log discarded, so that the run is accepted again and
// HeldRuns does not say it is held here meanwhile.
func (d *Dispatcher) CancelBeforeStart(k report.Key, jobID int64, reason string, replace bool) bool {
	d.mu.Lock()
	r := d.runs[k]
	if r == nil || (jobID != 0 && r.JobID != jobID) {
		d.mu.Unlock()
		return false
	}
	if r.waiting {
		d.launcher.unwait(r)
	} else {
		w := d.workers[r.JobID]
		i := -1
		if w != nil {
			i = slices.Index(w.queue, r)
		}
		if i < 0 {
			d.mu.Unlock()
			return false
		}
		w.queue = slices.Delete(w.queue, i, i+1)
	}
	if replace {
		delete(d.runs, k)
		d.recent.forget(k)
		d.mu.Unlock()
		if err := r.Log.Discard(); err != nil {
			d.Logger.Warn("sdk: discard the log of a run dropped to be sent again", "run_id", r.ID, "err", err)
		}
		d.Logger.Info("sdk: run dropped before it started, to be sent again with its job's new definition",
			"run_id", r.ID, "job_id", r.JobID, "reason", cmp.Or(reason, "its job was updated"))
		return true
	}
	d.mu.Unlock()
	d.finishUnstarted(r, carillonv1.RunStatus_RUN_STATUS_SKIPPED, cmp.Or(reason, "cancelled by the admin"))
	return true
}

// Idle says whether the job has no running or queued run here.
func (d *Dispatcher) Idle(jobID int64) (bool, string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.workers[jobID]
	if w == nil || (w.current == nil && len(w.queue) == 0) {
		return true, ""
	}
	return false, fmt.Sprintf("job %d %s", jobID, w.describe())
}

// ReadLog returns one page of the log of run k. A running run's log is
// read from its own file, which it gets for that (its lines may be in
// memory only); an ended run's log from wherever it was put.
func (d *Dispatcher) ReadLog(k report.Key, from int) (runlog.Page, error) {
	d.mu.Lock()
	r, active := d.runs[k]
	d.mu.Unlock()
	if active {
		path, err := r.Log.Sync()
		if err != nil {
			return runlog.Page{}, err
		}
		if path != "" {
			f, err := os.Open(path)
			if err != nil {
				return runlog.Page{}, err
			}
			defer func() { _ = f.Close() }()
			return runlog.ReadPage(f, from, runlog.PageMaxLines, runlog.PageMaxBytes, false)
		}
	}
	src, err := d.Logs.Find(k.DB, k.ID)
	if err != nil {
		return runlog.Page{}, err
	}
	defer src.Close()
	return runlog.ReadPage(src, from, runlog.PageMaxLines, runlog.PageMaxBytes, true)
}

// StopAccepting refuses new runs from now on and drops every queued run,
// reported KILLED. Running runs go on.
func (d *Dispatcher) StopAccepting() {
	d.mu.Lock()
	d.closing = true
	dropped := d.launcher.unwaitAll()
	for _, w := range d.workers {
		dropped = append(dropped, w.queue...)
		w.queue = nil
		notify(w.wake)
	}
	d.mu.Unlock()
	for _, r := range dropped {
		d.finishUnstarted(r, carillonv1.RunStatus_RUN_STATUS_KILLED, ErrShuttingDown.Error())
	}
}

// Drain waits for the running runs to end until ctx ends, then cancels them
// with ErrShuttingDown and waits for the workers to exit; a worker waits at
// most abandonAfter for a handler that ignores its context.
func (d *Dispatcher) Drain(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		d.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	d.mu.Lock()
	for _, w := range d.workers {
		if w.current != nil {
			w.current.cancel(ErrShuttingDown)
		}
	}
	d.mu.Unlock()
	<-done
}

// statusName is a run status without its RUN_STATUS_ prefix.
func statusName(s carillonv1.RunStatus) string {
	return strings.TrimPrefix(s.String(), "RUN_STATUS_")
}

// withColon returns ": " and msg, or nothing when msg is empty.
func withColon(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}

// timeoutString shows a run's timeout for its log.
func timeoutString(d time.Duration) string {
	if d <= 0 {
		return "none"
	}
	return d.String()
}

// release marks the jobs of launched runs rs, finished, idle, and wakes
// their workers, which may have queued runs to start.
func (d *Dispatcher) release(rs []*Run) {
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

// dropIdle forgets w if it has no goroutine and nothing to do: it was made
// for runs that waited for their due_at (wait). d.mu is held.
func (d *Dispatcher) dropIdle(w *worker) {
	if !w.started && w.current == nil && len(w.queue) == 0 && w.waiting == 0 && d.workers[w.jobID] == w {
		delete(d.workers, w.jobID)
	}
}

// forget forgets a run that has ended: it is no longer held here as
// active.
func (d *Dispatcher) forget(r *Run) {
	d.mu.Lock()
	delete(d.runs, r.key())
	d.mu.Unlock()
}
