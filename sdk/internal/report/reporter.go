package report

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Tuning of the reporter.
const (
	reportBatchMax   = 5000                   // results per ReportResults call, at most
	reportBatchBytes = 1 << 20                // and their size (Result.size) at most, but for one result
	reportBatchDelay = 5 * time.Millisecond   // wait for more results before a small batch
	reportIdle       = 100 * time.Millisecond // after this long without a send, a result goes at once
	reportMemMax     = 5000                   // results held in memory; the rest wait on disk
	reportBackoffMin = time.Second            // first retry after every admin failed
	BackoffMax       = time.Minute            // longest wait between retries
)

// Reporter delivers results to the admin: batched, retried with backoff
// until acknowledged, and kept in the spool meanwhile. A result the admin
// refuses as malformed is dropped, with a warning: the admin would refuse
// it every time. It holds at most reportMemMax results in memory; during a
// long admin outage the others wait on disk only. The backoff ends the moment any call to an admin
// succeeds (see adminAnswered): runs that end during an outage are
// reported as soon as an admin is back, not up to a minute later.
type Reporter struct {
	spool      *Spool
	send       func(ctx context.Context, batch []Result) ([]Refusal, error) // see admins.reportResults
	Failures   *atomic.Int64                                                // counts the calls no admin answered; nil: none
	logger     *slog.Logger
	BackoffMin time.Duration // the first wait; reportBackoffMin but in tests

	answers  atomic.Uint64 // calls an admin answered, any call
	answered chan struct{} // notified on each of them

	mu      sync.Mutex
	queue   []Result     // oldest first
	known   map[Key]bool // the runs in queue and aside
	spilled bool         // the spool may hold results that are not in queue
	wake    chan struct{}
	// aside are the results an admin that answered could not take for
	// now, sent again from asideUntil on, after a backoff of their own
	// (asideBackoff): the results behind them do not wait for them.
	aside        []Result
	asideUntil   time.Time
	asideBackoff time.Duration

	lastSend time.Time // when Run last sent a batch; Run's goroutine only
}

// NewReporter returns a reporter that sends through send and keeps results
// in sp; it starts by delivering what sp holds from an earlier process.
func NewReporter(sp *Spool, send func(context.Context, []Result) ([]Refusal, error), logger *slog.Logger) *Reporter {
	return &Reporter{
		spool:      sp,
		send:       send,
		logger:     logger,
		known:      make(map[Key]bool),
		spilled:    true, // results left by an earlier process
		wake:       make(chan struct{}, 1),
		BackoffMin: reportBackoffMin,
		answered:   make(chan struct{}, 1),
	}
}

// AdminAnswered tells the reporter that an admin answered a call (a
// heartbeat, say): if it is waiting to retry after every admin failed, it
// retries at once, with its backoff reset. Safe for concurrent use.
func (r *Reporter) AdminAnswered() {
	r.answers.Add(1)
	notify(r.answered)
}

// Add stores res and queues it for delivery.
func (r *Reporter) Add(res Result) { r.AddAll([]Result{res}) }

// AddAll spools results with one write and queues them for delivery.
func (r *Reporter) AddAll(rs []Result) {
	r.QueueAll(rs, r.SpoolAll(rs))
}

// SpoolAll spools results with one write, to be queued by queueAll.
func (r *Reporter) SpoolAll(rs []Result) error {
	err := r.spool.putAll(rs)
	if err != nil {
		r.logger.Error("sdk: results kept in memory only", "runs", len(rs), "err", err)
	}
	return err
}

// QueueAll queues for delivery results that spoolAll spooled, or failed to
// spool with err (they are then kept in memory, however many).
func (r *Reporter) QueueAll(rs []Result, err error) {
	r.mu.Lock()
	for _, res := range rs {
		switch {
		case r.known[res.key()]:
		case len(r.queue) < reportMemMax || err != nil:
			r.queue = append(r.queue, res)
			r.known[res.key()] = true
		default:
			r.spilled = true
		}
	}
	r.mu.Unlock()
	notify(r.wake)
}

// next returns the oldest results, up to a batch, refilling the queue from
// the spool when it is empty. A batch is as many as wait, up to
// reportBatchMax results and reportBatchBytes: one call a round trip
// delivers the results that queued during the last, so a backlog (a
// burst's results, an admin back from an outage) goes in large calls,
// which the admin settles as fast as its writer can, and a trickle in
// small ones. The bytes keep a call of long messages and outputs far
// below the admin's bound on a request (4 MiB). The results set aside go
// first once their wait is over, or at once when all is true (a flush).
func (r *Reporter) next(all bool) []Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.aside) > 0 && (all || !time.Now().Before(r.asideUntil)) {
		r.queue = append(r.aside, r.queue...)
		r.aside = nil
	}
	if len(r.queue) == 0 && r.spilled {
		loaded, more, err := r.spool.load(reportMemMax, func(k Key) bool { return r.known[k] })
		if err != nil {
			r.logger.Error("sdk: load spooled results", "err", err)
		}
		for _, res := range loaded {
			r.queue = append(r.queue, res)
			r.known[res.key()] = true
		}
		r.spilled = more
	}
	n, size := 0, 0
	for n < min(len(r.queue), reportBatchMax) {
		size += r.queue[n].size()
		if n > 0 && size > reportBatchBytes {
			break
		}
		n++
	}
	return append([]Result(nil), r.queue[:n]...)
}

// applyAnswer forgets the results of a batch the admin answered, which next
// returned and is still at the head of the queue, as refusals (one per
// result, or nil when it took all) say: those it took, and those it refused
// as malformed, dropped with a warning. It sets aside the others, which
// the admin could not take for now, to be sent again after a backoff, and
// returns their refusals.
func (r *Reporter) applyAnswer(batch []Result, refusals []Refusal) (kept []Refusal) {
	done, keep := batch, []Result(nil)
	if refusals != nil {
		done = make([]Result, 0, len(batch))
		for i, res := range batch {
			switch f := refusals[i]; {
			case f.Code == "":
				done = append(done, res)
			case f.Malformed():
				r.logger.Warn("sdk: result dropped: the admin refuses it as malformed", "run", res.RunID, "database_id", res.DatabaseID, "status", res.Status.String(), "reason", f.Message)
				done = append(done, res)
			default:
				keep = append(keep, res)
				kept = append(kept, f)
			}
		}
	}
	ids := make([]Key, len(done))
	for i, res := range done {
		ids[i] = res.key()
	}
	if err := r.spool.ack(ids); err != nil {
		r.logger.Warn("sdk: record delivered results; they may be delivered again after a restart", "results", len(ids), "err", err)
	}
	r.mu.Lock()
	for _, res := range done {
		delete(r.known, res.key())
	}
	clear(r.queue[:len(batch)])
	r.queue = r.queue[len(batch):]
	switch {
	case len(keep) > 0:
		r.aside = append(r.aside, keep...)
		r.asideBackoff = r.nextBackoff(r.asideBackoff)
		r.asideUntil = time.Now().Add(jitter(r.asideBackoff))
	case len(r.aside) == 0:
		r.asideBackoff = 0 // every result taken, none waiting
	}
	r.mu.Unlock()
	return kept
}

// Pending says how many results wait in memory.
func (r *Reporter) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.queue) + len(r.aside)
}

// asideWait returns how long until the results set aside are due again,
// and whether there are any.
func (r *Reporter) asideWait() (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Until(r.asideUntil), len(r.aside) > 0
}

// Run delivers results until stop is closed or ctx ends. Closing stop lets
// a call to the admin that is under way finish, so that a result the admin
// took is not sent again by flush; ending ctx cancels it.
func (r *Reporter) Run(ctx context.Context, stop <-chan struct{}) {
	var backoff time.Duration
	for {
		select {
		case <-stop:
			return
		default:
		}
		batch := r.next(false)
		if len(batch) == 0 {
			if !r.idle(ctx, stop) {
				return
			}
			continue
		}
		answers := r.answers.Load()
		r.lastSend = time.Now()
		refusals, err := r.send(ctx, batch)
		if err == nil {
			backoff = 0
			// The admin is up but could not take these for now: they wait
			// aside, however many calls it answers meanwhile; the others
			// go on.
			if kept := r.applyAnswer(batch, refusals); len(kept) > 0 {
				wait, _ := r.asideWait()
				r.logger.Warn("sdk: report results: the admin could not take some for now; retrying", "results", len(kept),
					"retry_in", wait.Round(time.Millisecond), "code", kept[0].Code, "reason", kept[0].Message)
			}
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if r.Failures != nil {
			r.Failures.Add(1)
		}
		backoff = r.nextBackoff(backoff)
		wait := jitter(backoff)
		r.logger.Warn("sdk: report results: no admin took them; retrying", "results", len(batch), "retry_in", wait, "err", err)
		slept, answered := r.backOff(ctx, stop, wait, answers)
		if !slept {
			return
		}
		if answered {
			r.logger.Info("sdk: report results: an admin answered; retrying now", "results", len(batch))
			backoff = 0
		}
	}
}

// idle waits for results to send: new ones, or those set aside, once
// due. New ones wait a little more for a fuller batch, unless nothing was
// sent for reportIdle: then nothing else is coming soon, and a result
// that others wait for (a workflow node's dependents) goes at once. It
// says whether to go on: false when ctx ended or stop was closed.
func (r *Reporter) idle(ctx context.Context, stop <-chan struct{}) bool {
	var due <-chan time.Time
	if wait, ok := r.asideWait(); ok {
		t := time.NewTimer(wait)
		defer t.Stop()
		due = t.C
	}
	select {
	case <-r.wake:
	case <-due:
		return true
	case <-stop:
		return false
	case <-ctx.Done():
		return false
	}
	if time.Since(r.lastSend) >= reportIdle {
		return true
	}
	return sleep(ctx, stop, reportBatchDelay)
}

// backOff waits for d, or until an admin has answered more calls than
// answers, the count before the failed send (so an answer that came while
// the send failed counts too). slept is false when ctx ended or stop was
// closed first; answered says an admin answered.
func (r *Reporter) backOff(ctx context.Context, stop <-chan struct{}, d time.Duration, answers uint64) (slept, answered bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		if r.answers.Load() != answers {
			return true, true
		}
		select {
		case <-t.C:
			return true, false
		case <-r.answered:
		case <-stop:
			return false, false
		case <-ctx.Done():
			return false, false
		}
	}
}

// Flush sends what is left, once, until everything is delivered, an admin
// call fails, the admin cannot take some result for now, or ctx ends. What
// is not delivered stays in the spool for the next start.
func (r *Reporter) Flush(ctx context.Context) error {
	for {
		batch := r.next(true)
		if len(batch) == 0 {
			return nil
		}
		refusals, err := r.send(ctx, batch)
		if err != nil {
			return err
		}
		if kept := r.applyAnswer(batch, refusals); len(kept) > 0 {
			return fmt.Errorf("report results: the admin could not take %d of them for now: %s: %s", len(kept), kept[0].Code, kept[0].Message)
		}
	}
}

// nextBackoff is the wait after d before the next retry: doubling from
// r.backoffMin up to reportBackoffMax.
func (r *Reporter) nextBackoff(d time.Duration) time.Duration {
	if d == 0 {
		return r.BackoffMin
	}
	return min(2*d, BackoffMax)
}

// jitter spreads retries of many executors: d plus up to a quarter of d.
func jitter(d time.Duration) time.Duration {
	return d + rand.N(d/4+1)
}

// sleep waits for d, and says whether it did: false when ctx ended or stop
// was closed first.
func sleep(ctx context.Context, stop <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	case <-ctx.Done():
		return false
	}
}

// notify wakes whoever waits on c, without blocking when a wake-up is
// already pending.
func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
