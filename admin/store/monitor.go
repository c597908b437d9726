package store

import (
	"context"
	"strings"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// sqlRunning and sqlPending are RUN_STATUS_RUNNING and RUN_STATUS_PENDING
// as SQL literals. Queries of in-flight runs name them literally: SQLite
// uses the partial index runs_active only for a query whose WHERE clause
// names its values (a bound parameter is not enough).
const (
	sqlRunning = "1"
	sqlPending = "7"
)

// monitorBatch bounds the runs one monitor query returns.
const monitorBatch = 1000

// LostRuns returns running runs, dispatched before triggeredBefore, whose
// executor belongs to an AUTO group and has not registered since
// liveSince (it expired or deregistered). Runs of MANUAL groups are never
// lost this way: their executors do not register.
func (s *Store) LostRuns(ctx context.Context, liveSince, triggeredBefore time.Time) ([]Run, error) {
	return s.queryRuns(ctx, `SELECT `+prefixed("runs.", runColumns)+` FROM runs JOIN groups g ON g.id = runs.group_id
		WHERE runs.status = `+sqlRunning+` AND runs.executor_address != '' AND runs.triggered_at < ? AND g.address_mode != ?
		AND NOT EXISTS (SELECT 1 FROM registry r WHERE r.app_name = g.app_name AND r.address = runs.executor_address AND r.updated_at >= ?)
		ORDER BY runs.id LIMIT ?`,
		triggeredBefore.UnixMilli(), carillonv1.AddressMode_ADDRESS_MODE_MANUAL,
		liveSince.UnixMilli(), monitorBatch)
}

// OverdueRuns returns running runs with a timeout whose dispatch plus
// timeout plus grace is before now.
func (s *Store) OverdueRuns(ctx context.Context, now time.Time, grace time.Duration) ([]Run, error) {
	return s.queryRuns(ctx, `SELECT `+runColumns+` FROM runs
		WHERE status = `+sqlRunning+` AND timeout_seconds > 0 AND triggered_at + timeout_seconds * 1000 + ? < ?
		ORDER BY id LIMIT ?`,
		grace.Milliseconds(), now.UnixMilli(), monitorBatch)
}

// UndispatchedRuns returns running runs claimed for dispatch before
// before that never recorded an executor: their admin died mid-dispatch.
func (s *Store) UndispatchedRuns(ctx context.Context, before time.Time) ([]Run, error) {
	return s.queryRuns(ctx, `SELECT `+runColumns+` FROM runs
		WHERE status = `+sqlRunning+` AND executor_address = '' AND triggered_at < ? ORDER BY id LIMIT ?`,
		before.UnixMilli(), monitorBatch)
}

// prefixed qualifies each column of a comma-separated list with p.
func prefixed(p, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
