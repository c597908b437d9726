package trigger

import (
	"context"
	"fmt"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Backfill stores one pending BACKFILL run of job for each of instants
// (oldest first), each with its instant as scheduled_at and due now, in
// one transaction, and queues them: their claims take the slots of the
// job's cap (store's caps.go). A SERIAL_EXECUTION job's backfill runs one
// instant at a time, in order: its first run is queued, the others wait
// for the backfill's slot, each handed on when the one before settles. It
// returns the runs' IDs in the order of instants.
func (d *Dispatcher) Backfill(ctx context.Context, job store.Job, instants []time.Time) ([]int64, error) {
	now := d.cfg.Clock.Now().Truncate(time.Millisecond) // what the store keeps
	serial := job.BlockStrategy == carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL ||
		job.BlockStrategy == carillonv1.BlockStrategy_BLOCK_STRATEGY_UNSPECIFIED
	runs := make([]store.Run, len(instants))
	for i, at := range instants {
		runs[i] = store.Run{
			JobID: job.ID, GroupID: job.GroupID, Handler: job.Handler, Param: job.Param, ShardTotal: 1,
			TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_BACKFILL, ScheduledAt: at, DueAt: now,
			Status: carillonv1.RunStatus_RUN_STATUS_PENDING,
		}
		if serial && i > 0 {
			runs[i].Slot = store.SlotWaiting
			runs[i].Message = fmt.Sprintf("%s (job %d runs its backfill one instant at a time (SERIAL_EXECUTION))", store.SlotWaitMessage, job.ID)
		}
	}
	runs, err := d.cfg.Store.Runs.Insert(ctx, runs)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(runs))
	for i := range runs {
		ids[i] = runs[i].ID
	}
	if serial && len(runs) > 0 {
		runs = runs[:1]
	}
	d.cfg.Queue.Enqueue(runs...)
	return ids, nil
}
