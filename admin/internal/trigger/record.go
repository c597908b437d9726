package trigger

import (
	"context"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
)

// record stores dispatch outcomes and follows up on the runs they failed.
// Outcomes recorded at the same time share one transaction.
func (t *Trigger) record(ctx context.Context, ds ...store.Dispatch) error {
	if len(ds) == 0 {
		return nil
	}
	select {
	case err := <-t.recordWrites.add(ds):
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// recordNow records dispatch outcomes in one transaction.
func (t *Trigger) recordNow(ds []store.Dispatch) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	settled, err := t.cfg.Store.RecordDispatches(ctx, t.cfg.FollowUp, ds)
	if err != nil {
		return err
	}
	t.followUp(settled)
	return nil
}

// recordLater records dispatches held for their results too long, in
// batches, without waiting for the writes.
func (t *Trigger) recordLater(ds []store.Dispatch) {
	for len(ds) > 0 {
		n := min(len(ds), batchMax)
		done := t.recordWrites.add(ds[:n:n])
		ds = ds[n:]
		t.wg.Go(func() {
			if err := <-done; err != nil {
				t.cfg.Logger.Error("trigger: record dispatches", "runs", n, "err", err)
			}
		})
	}
}

// failed is the dispatch outcome of a run that could not be dispatched.
func failed(run *store.Run, msg string, now time.Time) store.Dispatch {
	return store.Dispatch{
		RunID: run.ID, ShardIndex: run.ShardIndex, ShardTotal: run.ShardTotal, TriggerMessage: "not dispatched",
		Failed: true, Message: msg, FinishedAt: now,
	}
}
