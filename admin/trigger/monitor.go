package trigger

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/carillonhq/carillon/admin/store"
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
//   - LOST: the executor expired (no heartbeat for ExecutorTTL) or
//     deregistered, and the run was dispatched more than Grace ago;
//   - TIMED_OUT: the run is past its timeout plus Grace, whether or not the
//     executor ever answers;
//   - FAILED: the admin died while dispatching it, so it is unknown whether
//     the executor got it.
//
// A result that arrives later for such a run is ignored (and logged by the
// store's caller as a repeat). Settled runs get their retries and alarms
// like any other.
func (t *Trigger) Monitor(ctx context.Context, cfg MonitorConfig) error {
	cfg.Interval = cmp.Or(cfg.Interval, MonitorIntervalDefault)
	cfg.Grace = cmp.Or(cfg.Grace, LostGraceDefault)
	ticker := time.NewTicker(cfg.Interval)
	defer ticker.Stop()
	for {
		if err := t.Sweep(ctx, cfg.Grace); err != nil && ctx.Err() == nil {
			t.cfg.Logger.Error("trigger: monitor", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Sweep settles, once, the runs Monitor settles.
func (t *Trigger) Sweep(ctx context.Context, grace time.Duration) error {
	now := t.cfg.NowFunc()
	var results []store.Result
	lost, err := t.cfg.Store.LostRuns(ctx, now.Add(-t.cfg.ExecutorTTL), now.Add(-grace))
	if err != nil {
		return err
	}
	for _, r := range lost {
		results = append(results, store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_LOST, FinishedAt: now,
			Message: fmt.Sprintf("lost: executor %s stopped heartbeating or deregistered before reporting a result", r.ExecutorAddress)})
	}
	overdue, err := t.cfg.Store.OverdueRuns(ctx, now, grace)
	if err != nil {
		return err
	}
	for _, r := range overdue {
		results = append(results, store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_TIMED_OUT, FinishedAt: now,
			Message: fmt.Sprintf("timed out: no result from executor %s within the %d s timeout plus %s grace", r.ExecutorAddress, r.TimeoutSeconds, grace)})
	}
	stuck, err := t.cfg.Store.UndispatchedRuns(ctx, now.Add(-2*t.cfg.DispatchTimeout-grace))
	if err != nil {
		return err
	}
	for _, r := range stuck {
		results = append(results, store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_FAILED, FinishedAt: now,
			Message: "the admin stopped while dispatching this run; the executor may or may not have run it"})
	}
	if len(results) == 0 {
		return nil
	}
	return t.Settle(ctx, results)
}
