package store

import (
	"context"
	"strings"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// sqlRunning and sqlPending are RUN_STATUS_RUNNING and RUN_STATUS_PENDING
// as SQL literals, and sqlInFlight is the condition of the partial index
// runs_active. SQLite uses a partial index only for a query whose WHERE
// clause contains the index's own condition word for word ("status = 1"
// alone is not enough, nor is a bound parameter), so every query of
// in-flight runs names sqlInFlight besides its status; TestQueryPlans
// checks that none scans the runs table.
const (
	sqlRunning  = "1"
	sqlPending  = "7"
	sqlInFlight = "runs.status IN (" + sqlRunning + ", " + sqlPending + ")"
)

// monitorBatch bounds the runs one monitor query returns.
const monitorBatch = 1000

// The monitor's queries. Each reads, through runs_active (status,
// triggered_at), only the running runs dispatched before a cutoff: the
// runs dispatched since, thousands under load, are not read at all.
var (
	lostRunsSQL = `SELECT ` + prefixed("runs.", runColumns) + ` FROM runs JOIN groups g ON g.id = runs.group_id
		WHERE ` + sqlInFlight + ` AND runs.status = ` + sqlRunning + ` AND runs.triggered_at < ?1
		AND runs.executor_address != '' AND g.address_mode != ?2
		AND NOT EXISTS (SELECT 1 FROM registry r WHERE r.app_name = g.app_name AND r.address = runs.executor_address AND r.updated_at >= ?3)
		ORDER BY runs.triggered_at LIMIT ?4`
	// A timeout is at least a second: the cutoff ?1 (now minus grace) is
	// implied by the timeout condition, and lets runs_active skip the
	// runs dispatched since.
	overdueRunsSQL = `SELECT ` + runColumns + ` FROM runs
		WHERE ` + sqlInFlight + ` AND status = ` + sqlRunning + ` AND triggered_at < ?1
		AND timeout_seconds > 0 AND triggered_at + timeout_seconds * 1000 + ?2 < ?3
		ORDER BY triggered_at LIMIT ?4`
	undispatchedRunsSQL = `SELECT ` + runColumns + ` FROM runs
		WHERE ` + sqlInFlight + ` AND status = ` + sqlRunning + ` AND triggered_at < ?1 AND executor_address = ''
		ORDER BY triggered_at LIMIT ?2`
	pendingRunsSQL = `SELECT ` + runColumns + ` FROM runs WHERE ` + sqlInFlight + ` AND status = ` + sqlPending +
		` ORDER BY scheduled_at, id`
)

// LostRuns returns running runs, dispatched before triggeredBefore, whose
// executor belongs to an AUTO group and has not registered since
// liveSince (it expired or deregistered). Runs of MANUAL groups are never
// lost this way: their executors do not register.
func (s *Store) LostRuns(ctx context.Context, liveSince, triggeredBefore time.Time) ([]Run, error) {
	return s.queryRuns(ctx, lostRunsSQL, triggeredBefore.UnixMilli(), carillonv1.AddressMode_ADDRESS_MODE_MANUAL,
		liveSince.UnixMilli(), monitorBatch)
}

// OverdueRuns returns running runs with a timeout whose dispatch plus
// timeout plus grace is before now.
func (s *Store) OverdueRuns(ctx context.Context, now time.Time, grace time.Duration) ([]Run, error) {
	return s.queryRuns(ctx, overdueRunsSQL, now.Add(-grace).UnixMilli(), grace.Milliseconds(), now.UnixMilli(), monitorBatch)
}

// UndispatchedRuns returns running runs claimed for dispatch before
// before that never recorded an executor: their admin died mid-dispatch.
func (s *Store) UndispatchedRuns(ctx context.Context, before time.Time) ([]Run, error) {
	return s.queryRuns(ctx, undispatchedRunsSQL, before.UnixMilli(), monitorBatch)
}

// PendingRuns returns every pending run, oldest scheduled instant first.
func (s *Store) PendingRuns(ctx context.Context) ([]Run, error) {
	return s.queryRuns(ctx, pendingRunsSQL)
}

// prefixed qualifies each column of a comma-separated list with p.
func prefixed(p, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
