package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, as the admin's store uses
)

// claimLateness reads from the admin's database, read-only and beside the
// running admin (WAL allows it), how late the admin claimed each scheduled
// fire of [start, end): runs.triggered_at minus runs.scheduled_at, in
// milliseconds, the admin's own share of the lateness before the dispatch
// call. Trigger type 1 is SCHEDULE.
func claimLateness(ctx context.Context, path string, start, end time.Time) ([]float64, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	defer func() { _ = db.Close() }()
	rows, err := db.QueryContext(ctx, `SELECT triggered_at - scheduled_at FROM runs
		WHERE trigger_type = 1 AND triggered_at IS NOT NULL AND scheduled_at >= ? AND scheduled_at < ?`,
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
