package trigger

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/carillonhq/carillon/admin/internal/metrics"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Fire dispatches the runs of fires whose instant has come (or comes
// soon: each is sent at its entry's At). It returns at once; Wait waits for
// the dispatches it started. Runs the scan claimed already (Entry.Run) go
// straight to dispatch; pending ones are claimed (PENDING to RUNNING)
// first, together with those that came due while the previous claim ran.
// Runs are dispatched in batches, concurrently, in a bounded pool; a job
// whose dispatches were slow more than 10 times this minute uses a
// separate slow pool, so a slow or dead executor cannot hold up fires to
// healthy ones. When a pool is overloaded its fires fail at once with the
// reason: a fire is never dropped silently.
func (t *Trigger) Fire(es []schedule.Entry) {
	var pending []schedule.Entry
	cs := make([]claimedRun, 0, len(es))
	for _, e := range es {
		if e.Run != nil {
			cs = append(cs, claimedRun{run: e.Run, at: e.At, stopSeq: e.StopSeq})
		} else {
			pending = append(pending, e)
		}
	}
	t.dispatchClaimed(cs)
	for len(pending) > 0 {
		n := min(len(pending), batchMax)
		t.claimWrites.add(pending[:n:n])
		pending = pending[n:]
	}
}

// claimPending claims the pending runs of es (those still pending: a job stopped
// or changed since its fires were read ahead has none) and starts their
// dispatches, which send each run at its entry's instant.
func (t *Trigger) claimPending(es []schedule.Entry) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	now := t.clock.Now()
	seq := t.cfg.Store.StopSeq()
	runs, err := t.cfg.Store.ClaimRuns(ctx, runClaims(es), now)
	if err != nil {
		t.cfg.Logger.Error("trigger: claim due runs; the monitor will settle them", "runs", len(es), "err", err)
		return err
	}
	at := make(map[int64]time.Time, len(es))
	for _, e := range es {
		at[e.RunID] = e.At
	}
	cs := make([]claimedRun, len(runs))
	for i := range runs {
		cs[i] = claimedRun{run: &runs[i], at: at[runs[i].ID], stopSeq: seq}
	}
	t.dispatchClaimed(cs)
	return nil
}

func runClaims(es []schedule.Entry) []store.RunClaim {
	cs := make([]store.RunClaim, len(es))
	for i, e := range es {
		cs[i] = store.RunClaim{RunID: e.RunID, TriggerType: e.TriggerType, SendAt: e.At}
	}
	return cs
}

// claimedRun is a run claimed for dispatch at instant at, with the stop
// sequence (store.StopSeq) read before its claim. The run is shared along
// the fire path, never copied (a burst holds thousands) nor changed.
type claimedRun struct {
	run     *store.Run
	at      time.Time
	stopSeq uint64
	// lead is how long before at the run is sent to an executor that
	// takes due_at: longer for a larger burst (SendLead).
	lead time.Duration
	// pin, if not "", is the executor the run goes to, whatever its job's
	// strategy: one an earlier admin routed it to, which does not hold
	// it. The run is sent again there only, where the executor's run ID
	// check keeps a late call of that admin from running it twice.
	pin string
}

// dispatchClaimed starts the dispatches of claimed runs, in batches, in
// the fast pool or, for jobs that were slow lately, the slow one.
func (t *Trigger) dispatchClaimed(cs []claimedRun) {
	t.cfg.Metrics.FiresClaimed(len(cs))
	now := t.clock.Now()
	burst := map[time.Time]int{} // runs by instant
	for _, c := range cs {
		burst[c.at]++
	}
	for i := range cs {
		cs[i].lead = SendLead(t.cfg.SendAhead, burst[cs[i].at])
	}
	// Most often no job is slow, and a burst's runs are not copied.
	fast, slow := cs, []claimedRun(nil)
	if slices.ContainsFunc(cs, func(c claimedRun) bool { return t.slowJobs.slow(c.run.JobID, now) }) {
		fast = make([]claimedRun, 0, len(cs))
		for _, c := range cs {
			if t.slowJobs.slow(c.run.JobID, now) {
				slow = append(slow, c)
			} else {
				fast = append(fast, c)
			}
		}
	}
	for _, part := range []struct {
		p  *pool
		cs []claimedRun
	}{{t.fast, fast}, {t.slow, slow}} {
		for len(part.cs) > 0 {
			n := min(len(part.cs), batchMax)
			t.startBatch(part.p, part.cs[:n:n])
			part.cs = part.cs[n:]
		}
	}
}

// startBatch dispatches one batch of claimed runs on its own goroutine, in pool p.
func (t *Trigger) startBatch(p *pool, cs []claimedRun) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), batchTimeout(t.clock.Now(), cs, t.cfg.DispatchTimeout))
		defer cancel()
		var err error
		// The runs are claimed: a bounded wait for a slot keeps them from
		// looking half-dispatched to the monitor.
		if p.acquire(t.cfg.DispatchTimeout) {
			err = t.sendBatch(ctx, &batchSlot{p: p, busy: 1, held: true}, cs)
		} else {
			err = t.refuse(ctx, cs, fmt.Sprintf("admin overloaded: more than %d dispatch batches waiting in the %s pool, or none free for %s; not dispatched",
				p.maxWaiting, p.name, t.cfg.DispatchTimeout))
		}
		if err != nil {
			t.cfg.Logger.Error("trigger: fire", "runs", len(cs), "err", err)
		}
	}()
}

// batchTimeout bounds a dispatch batch handed over at now: until its last
// instant, then two calls and a margin. It counts from the last instant,
// not from now: a large burst is handed over long before it
// (schedule.Config.FireAheadPerFire), a million runs 25 s before.
func batchTimeout(now time.Time, cs []claimedRun, dispatchTimeout time.Duration) time.Duration {
	var wait time.Duration
	for _, c := range cs {
		wait = max(wait, c.at.Sub(now))
	}
	return wait + 2*dispatchTimeout + 5*time.Second
}

// refuse fails claimed runs that cannot be dispatched.
func (t *Trigger) refuse(ctx context.Context, cs []claimedRun, msg string) error {
	t.cfg.Logger.Warn("trigger: runs not dispatched", "runs", len(cs), "reason", msg)
	t.cfg.Metrics.Dispatched(carillonv1.RouteStrategy_ROUTE_STRATEGY_UNSPECIFIED, metrics.CodeNotSent, len(cs))
	ds := make([]store.Dispatch, len(cs))
	for i, c := range cs {
		ds[i] = failed(c.run, msg, t.clock.Now())
	}
	return t.record(ctx, ds...)
}
