package trigger

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

const (
	// MonitorIntervalDefault is how often Monitor looks for runs to settle.
	MonitorIntervalDefault = 10 * time.Second
	// LostGraceDefault is how long a run waits for its result after its
	// executor went away, and after its timeout, before the admin settles it.
	LostGraceDefault = 30 * time.Second
)

// MonitorConfig configures Monitor.
type MonitorConfig struct {
	// Interval defaults to MonitorIntervalDefault.
	Interval time.Duration
	// Grace defaults to LostGraceDefault.
	Grace time.Duration
}

// Monitor settles, every interval until ctx ends, the running runs whose
// result will not come:
//   - LOST: the executor expired (no heartbeat for ExecutorTTL, judged from
//     beats since the admin came up) or deregistered, and the run was
//     dispatched more than Grace ago; or a new process registered on the
//     executor's address and does not hold the run, or says it was cut
//     short (see Registered); or, for a MANUAL group, whose executors do
//     not register, the executor has not answered the monitor's probes for
//     ExecutorTTL, or answers without holding the run; or, as a backstop
//     for an AUTO group's run dispatched more than Grace ago, its executor
//     says it was cut short, or has not said it holds it ACTIVE for longer
//     than Grace (see watchHeld);
//   - TIMED_OUT: the run is past its timeout plus Grace, whether or not the
//     executor ever answers (and the admin has been up for Grace: results
//     cannot arrive while it is down);
//   - LOST too: a run this admin process claimed whose dispatch was never
//     recorded (its record could not be written).
//
// These are the admin's own judgements: a result the executor reports later
// replaces them (store.Result.ByAdmin). Settled runs get their retries and
// alarms like any other.
func (rs *Rescuer) Monitor(ctx context.Context, cfg MonitorConfig) error {
	cfg.Interval = cmp.Or(cfg.Interval, MonitorIntervalDefault)
	cfg.Grace = cmp.Or(cfg.Grace, LostGraceDefault)
	for {
		if err := rs.Sweep(ctx, cfg.Grace); err != nil && ctx.Err() == nil {
			rs.cfg.Logger.Error("trigger: monitor", "err", err)
		}
		if !sleep(ctx, rs.cfg.Clock, cfg.Interval) {
			return nil
		}
	}
}

// Sweep settles, once, the runs Monitor settles.
func (rs *Rescuer) Sweep(ctx context.Context, grace time.Duration) error {
	now := rs.cfg.Clock.Now()
	var results []store.Result
	lost, err := rs.cfg.Store.Runs.Lost(ctx, rs.router.liveSince(now), now.Add(-grace))
	if err != nil {
		return err
	}
	for _, r := range lost {
		results = append(results, store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_LOST, FinishedAt: now, ByAdmin: true,
			Message: fmt.Sprintf("lost: executor %s stopped heartbeating or deregistered before reporting a result", r.ExecutorAddress)})
	}
	// Results cannot arrive while the admin is down: a run is overdue only
	// once its executor had the grace, since the admin came up, to report.
	var overdue []store.Run
	if !now.Before(rs.cfg.Started.Add(grace)) {
		if overdue, err = rs.cfg.Store.Runs.Overdue(ctx, now, grace); err != nil {
			return err
		}
	}
	for _, r := range overdue {
		results = append(results, store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_TIMED_OUT, FinishedAt: now, ByAdmin: true,
			Message: fmt.Sprintf("timed out: no result from executor %s within the %d s timeout plus %s grace", r.ExecutorAddress, r.TimeoutSeconds, grace)})
	}
	var earlier []int64 // Reconcile's
	if p := rs.earlier.Load(); p != nil {
		earlier = *p
	}
	stuck, err := rs.undispatched(ctx, func(ctx context.Context) ([]store.Run, error) {
		return rs.cfg.Store.Runs.Undispatched(ctx, now.Add(-2*rs.cfg.DispatchTimeout-grace), earlier)
	})
	if err != nil {
		return err
	}
	for _, r := range stuck {
		results = append(results, store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_LOST, FinishedAt: now, ByAdmin: true,
			Message: "lost: the admin could not record where it sent this run; the executor may or may not have run it"})
	}
	restarted, err := rs.restartedRuns(ctx, now)
	if err != nil {
		return err
	}
	results = append(results, restarted...)
	manual, err := rs.manualRuns(ctx, now, grace)
	if err != nil {
		return err
	}
	results = append(results, manual...)
	watched, err := rs.watchHeld(ctx, now, grace)
	if err != nil {
		return err
	}
	results = append(results, watched...)
	if len(results) == 0 {
		return nil
	}
	return rs.completer.Settle(ctx, oncePerRun(results))
}

// oncePerRun drops the results of runs that have one earlier in results:
// a run may be judged by several of the monitor's rules in one sweep.
func oncePerRun(results []store.Result) []store.Result {
	seen := make(map[int64]bool, len(results))
	kept := results[:0]
	for _, r := range results {
		if !seen[r.RunID] {
			seen[r.RunID] = true
			kept = append(kept, r)
		}
	}
	return kept
}

// undispatched returns the running runs that read (Undispatched) finds
// with no dispatch recorded and whose dispatch record this admin does not
// hold either (Completer.unstored): recorded, not stored yet, a run is not
// stuck. Those it does not hold are read again: a record whose write
// returned between the first read and the check left the admin's hands
// then, and is in the database by the second read.
func (rs *Rescuer) undispatched(ctx context.Context, read func(context.Context) ([]store.Run, error)) ([]store.Run, error) {
	stuck, err := read(ctx)
	if err != nil || len(stuck) == 0 {
		return nil, err
	}
	held := rs.completer.unstored(stuck)
	stuck = slices.DeleteFunc(stuck, func(r store.Run) bool { return held[r.ID] })
	if len(stuck) == 0 {
		return nil, nil
	}
	again, err := read(ctx)
	if err != nil {
		return nil, err
	}
	still := make(map[int64]bool, len(again))
	for _, r := range again {
		still[r.ID] = true
	}
	return slices.DeleteFunc(stuck, func(r store.Run) bool { return !still[r.ID] }), nil
}
