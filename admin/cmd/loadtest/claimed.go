package main

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// claimLateness reads from the admin's database, read-only and beside the
// running admin (SQLite's WAL allows it), how late the admin claimed each scheduled
// fire of [start, end): runs.triggered_at minus runs.scheduled_at, in
// milliseconds, the admin's own share of the lateness before the dispatch
// call. Trigger type 1 is SCHEDULE.
func claimLateness(ctx context.Context, path string, start, end time.Time) ([]float64, error) {
	db, err := openDB(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = db.Close() }()
	//nolint:gosec // only placeholders are concatenated
	rows, err := db.QueryContext(ctx, `SELECT triggered_at - scheduled_at FROM runs
		WHERE trigger_type = 1 AND triggered_at IS NOT NULL AND scheduled_at >= `+placeholder(path, 1)+` AND scheduled_at < `+placeholder(path, 2),
		start.UnixMilli(), end.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("claim lateness: %w", err)
	}
	defer rows.Close()
	var late []float64
	for rows.Next() {
		var ms int64
		if err := rows.Scan(&ms); err != nil {
			return nil, fmt.Errorf("claim lateness: %w", err)
		}
		late = append(late, float64(ms))
	}
	slices.Sort(late)
	return late, rows.Err()
}
