package main

import (
	"context"
	"fmt"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// span is a closed range of instants, unix milliseconds.
type span struct{ from, to int64 }

// misfireRecords reads from the admins' database the fires of [start, end)
// that were recorded instead of run: SKIPPED runs of a schedule or of a
// misfire (trigger types 1 and 5, status 8), each standing for its instant
// or, with missed_count, for every instant through missed_until. It
// returns them by job.
func misfireRecords(ctx context.Context, path string, start, end time.Time) (map[int64][]span, error) {
	db, err := openDB(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = db.Close() }()
	//nolint:gosec // only placeholders are concatenated
	rows, err := db.QueryContext(ctx, `SELECT job_id, scheduled_at, coalesce(missed_until, scheduled_at) FROM runs
		WHERE trigger_type IN (1, 5) AND status = 8 AND scheduled_at < `+placeholder(path, 1)+`
		AND coalesce(missed_until, scheduled_at) >= `+placeholder(path, 2), end.UnixMilli(), start.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("misfire records: %w", err)
	}
	defer rows.Close()
	out := map[int64][]span{}
	for rows.Next() {
		var job int64
		var s span
		if err := rows.Scan(&job, &s.from, &s.to); err != nil {
			return nil, fmt.Errorf("misfire records: %w", err)
		}
		out[job] = append(out[job], s)
	}
	return out, rows.Err()
}

// recorded reports whether the fire k is among the misfire records.
func recorded(records map[int64][]span, k fireKey) bool {
	for _, s := range records[k.job] {
		if k.at >= s.from && k.at <= s.to {
			return true
		}
	}
	return false
}

// storedRuns reads from the admins' database the status of the first run
// (shard 0, attempt 0) of each scheduled fire of [start, end), by fire: a
// fire that no executor received and that is not a misfire is still
// RUNNING or PENDING, or was settled FAILED without being sent (the admin
// refused it, overloaded, or its lease ran out), or has no run at all.
func storedRuns(ctx context.Context, path string, start, end time.Time) (map[fireKey]carillonv1.RunStatus, error) {
	db, err := openDB(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = db.Close() }()
	//nolint:gosec // only placeholders are concatenated
	rows, err := db.QueryContext(ctx, `SELECT job_id, scheduled_at, status FROM runs
		WHERE trigger_type = 1 AND shard_index = 0 AND attempt = 0 AND scheduled_at >= `+placeholder(path, 1)+`
		AND scheduled_at < `+placeholder(path, 2), start.UnixMilli(), end.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("stored runs: %w", err)
	}
	defer rows.Close()
	out := map[fireKey]carillonv1.RunStatus{}
	for rows.Next() {
		var k fireKey
		var status int32
		if err := rows.Scan(&k.job, &k.at, &status); err != nil {
			return nil, fmt.Errorf("stored runs: %w", err)
		}
		out[k] = carillonv1.RunStatus(status)
	}
	return out, rows.Err()
}
