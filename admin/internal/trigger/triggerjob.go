package trigger

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"

	"github.com/carillonhq/carillon/admin/internal/store"
)

// Manual says how TriggerJob runs a job.
type Manual struct {
	// TriggerType is MANUAL (a person) or API (a program); default MANUAL.
	TriggerType carillonv1.TriggerType
	// Param replaces the job's param when not nil.
	Param *string
	// Addresses, when not empty, replace the group's executors for routing.
	Addresses []string
}

// TriggerJob runs job once now and returns the IDs of the runs it created
// (one, or one per shard). It waits for the dispatch, so each run's status
// says whether an executor accepted it.
func (t *Trigger) TriggerJob(ctx context.Context, job store.Job, m Manual) ([]int64, error) {
	now := t.clock.Now()
	run := store.Run{
		JobID: job.ID, GroupID: job.GroupID, Handler: job.Handler, Param: job.Param, ShardTotal: 1,
		TriggerType: cmp.Or(m.TriggerType, carillonv1.TriggerType_TRIGGER_TYPE_MANUAL),
		ScheduledAt: now, DueAt: now, TriggeredAt: now, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING,
	}
	if m.Param != nil {
		run.Param = *m.Param
	}
	runs, err := t.cfg.Store.InsertRuns(ctx, []store.Run{run})
	if err != nil {
		return nil, err
	}
	var override []string
	if len(m.Addresses) > 0 {
		override = slices.Clone(m.Addresses)
		slices.Sort(override)
		override = slices.Compact(override)
	}
	return t.dispatchNow(ctx, []routable{{run: &runs[0], job: job.Definition(), override: override}})
}

// dispatchNow routes fires (running runs) and sends them at once: see plan
// and calls. It returns the IDs of all runs of the fires.
func (t *Trigger) dispatchNow(ctx context.Context, fires []routable) ([]int64, error) {
	t.cfg.Metrics.FiresClaimed(len(fires))
	p, err := t.plan(ctx, fires)
	if err != nil {
		return nil, err
	}
	if p.sends, err = t.route(ctx, p.sends); err != nil {
		if errors.Is(err, store.ErrLeaseLost) {
			// The runs are claimed in this admin's name: the admin that
			// adopts it sends them (they were never routed, so never sent).
			t.cfg.Logger.Warn("trigger: this admin's lease ran out while it triggered a job; the admin that adopts it sends the runs", "runs", p.ids)
			return p.ids, nil
		}
		return nil, err
	}
	return p.ids, t.record(ctx, append(p.failed, t.sendNow(ctx, t.calls(p.sends, time.Time{}))...)...)
}
