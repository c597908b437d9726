// Package retention deletes old runs: by default those scheduled more than
// 30 days ago, and the workflow runs that ended before then, in small
// batches, so a large cleanup never holds the database's one writer for
// long.
package retention

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
)

const (
	// DaysDefault is how many days of runs are kept.
	DaysDefault = 30
	// IntervalDefault is how often old runs are deleted.
	IntervalDefault = time.Hour
	// batch is how many runs one delete transaction removes.
	batch = 500
)

// Config configures Run.
type Config struct {
	// Store holds the runs. Required.
	Store *store.Store
	// Days of runs to keep; 0 means DaysDefault, negative keeps everything.
	Days int
	// Interval defaults to IntervalDefault.
	Interval time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Run deletes runs older than cfg.Days, and workflow runs that ended
// before then, every interval until ctx ends. It
// reads the machine's clock: its tests run it in a synctest bubble.
func Run(ctx context.Context, cfg Config) error {
	cfg.Days = cmp.Or(cfg.Days, DaysDefault)
	cfg.Interval = cmp.Or(cfg.Interval, IntervalDefault)
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	if cfg.Days < 0 {
		return nil
	}
	ticker := time.NewTicker(cfg.Interval)
	defer ticker.Stop()
	for {
		cutoff := time.Now().AddDate(0, 0, -cfg.Days)
		sweep(ctx, cfg.Logger, "runs", cutoff, func() (int64, error) { return Delete(ctx, cfg.Store, store.RunSelection{Before: cutoff}) })
		sweep(ctx, cfg.Logger, "workflow runs", cutoff, func() (int64, error) { return DeleteWorkflowRuns(ctx, cfg.Store, cutoff) })
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// sweep deletes old rows of what with del and logs the outcome.
func sweep(ctx context.Context, log *slog.Logger, what string, cutoff time.Time, del func() (int64, error)) {
	n, err := del()
	switch {
	case err != nil && ctx.Err() == nil:
		log.Error("retention: delete old "+what, "err", err)
	case n > 0:
		log.Info("retention: deleted old "+what, "count", n, "before", cutoff)
	}
}

// Delete deletes the settled runs of sel in batches and returns how many.
func Delete(ctx context.Context, st *store.Store, sel store.RunSelection) (int64, error) {
	return inBatches(func() (int64, error) { return st.Runs.Delete(ctx, sel, batch) })
}

// DeleteWorkflowRuns deletes the workflow runs that ended before cutoff,
// with their nodes' rows, in batches, and returns how many.
func DeleteWorkflowRuns(ctx context.Context, st *store.Store, cutoff time.Time) (int64, error) {
	return inBatches(func() (int64, error) { return st.Workflows.DeleteRuns(ctx, cutoff, batch) })
}

// inBatches calls del, which deletes up to batch rows, until it deletes
// fewer, and returns how many it deleted in all.
func inBatches(del func() (int64, error)) (int64, error) {
	var total int64
	for {
		n, err := del()
		total += n
		if err != nil || n < batch {
			return total, err
		}
	}
}
