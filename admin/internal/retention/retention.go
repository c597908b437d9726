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

// Run deletes runs older than cfg.Days every interval until ctx ends. It
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
		n, err := Delete(ctx, cfg.Store, store.RunSelection{Before: cutoff})
		switch {
		case err != nil && ctx.Err() == nil:
			cfg.Logger.Error("retention: delete old runs", "err", err)
		case n > 0:
			cfg.Logger.Info("retention: deleted old runs", "count", n, "before", cutoff)
		}
		n, err = DeleteWorkflowRuns(ctx, cfg.Store, cutoff)
		switch {
		case err != nil && ctx.Err() == nil:
			cfg.Logger.Error("retention: delete old workflow runs", "err", err)
		case n > 0:
			cfg.Logger.Info("retention: deleted old workflow runs", "count", n, "before", cutoff)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Delete deletes the settled runs of sel in batches and returns how many.
func Delete(ctx context.Context, st *store.Store, sel store.RunSelection) (int64, error) {
	var total int64
	for {
		n, err := st.DeleteRuns(ctx, sel, batch)
		total += n
		if err != nil || n < batch {
			return total, err
		}
	}
}

// DeleteWorkflowRuns deletes the workflow runs that ended before cutoff,
// with their nodes' rows, in batches, and returns how many.
func DeleteWorkflowRuns(ctx context.Context, st *store.Store, cutoff time.Time) (int64, error) {
	var total int64
	for {
		n, err := st.DeleteWorkflowRuns(ctx, cutoff, batch)
		total += n
		if err != nil || n < batch {
			return total, err
		}
	}
}
