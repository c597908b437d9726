package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
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
	sqlSkipped  = "8"
	sqlInFlight = "runs.status IN (" + sqlRunning + ", " + sqlPending + ")"
)

// monitorBatch bounds the runs one monitor query returns.
const monitorBatch = 1000

// The monitor's queries. Each reads, through runs_active (status,
// triggered_at), only the running runs dispatched before a cutoff: the
// runs dispatched since, thousands under load, are not read at all.
var (
	lostRunsSQL = `SELECT ` + prefixed("runs.", runColumns) + ` FROM runs JOIN groups g ON g.id = runs.group_id
		WHERE ` + sqlInFlight + ` AND runs.status = ` + sqlRunning + ` AND runs.triggered_at < $1
		AND runs.executor_address != '' AND g.address_mode != $2
		AND NOT EXISTS (SELECT 1 FROM registry r WHERE r.app_name = g.app_name AND r.address = runs.executor_address AND r.updated_at >= $3)
		ORDER BY runs.triggered_at LIMIT $4`
	// A timeout is at least a second: the cutoff $1 (now minus grace) is
	// implied by the timeout condition, and lets runs_active skip the
	// runs dispatched since.
	overdueRunsSQL = `SELECT ` + runColumns + ` FROM runs
		WHERE ` + sqlInFlight + ` AND status = ` + sqlRunning + ` AND triggered_at < $1
		AND timeout_seconds > 0 AND triggered_at + timeout_seconds * 1000 + $2 < $3
		ORDER BY triggered_at LIMIT $4`
	// undispatchedRunsSQL is SQLite's (one admin); pgUndispatchedRunsSQL
	// that of an admin sharing the database.
	undispatchedRunsSQL = `SELECT ` + runColumns + ` FROM runs
		WHERE ` + sqlInFlight + ` AND status = ` + sqlRunning + ` AND triggered_at < $1 AND executor_address = ''
		AND id NOT IN (SELECT value FROM json_each($2)) ORDER BY triggered_at LIMIT $3`
	pgUndispatchedRunsSQL = `SELECT ` + runColumns + ` FROM runs
		WHERE ` + sqlInFlight + ` AND status = ` + sqlRunning + ` AND triggered_at < $1 AND executor_address = ''
		AND claimed_by = $2 ORDER BY triggered_at LIMIT $3`
	unsentRunIDsSQL = `SELECT id FROM runs WHERE ` + sqlInFlight + ` AND status = ` + sqlRunning + ` AND executor_address = '' ORDER BY id`
	manualRunsSQL   = `SELECT ` + prefixed("runs.", runColumns) + ` FROM runs JOIN groups g ON g.id = runs.group_id
		WHERE ` + sqlInFlight + ` AND runs.status = ` + sqlRunning + ` AND runs.triggered_at < $1
		AND runs.executor_address != '' AND g.address_mode = $2
		ORDER BY runs.triggered_at LIMIT $3`
	runsDueAtSQL = `SELECT ` + runColumns + ` FROM runs
		WHERE ` + sqlInFlight + ` AND status = ` + sqlRunning + ` AND triggered_at >= $1 AND executor_address = $2
		ORDER BY triggered_at LIMIT $3`
	runsAtSQL = `SELECT ` + runColumns + ` FROM runs
		WHERE ` + sqlInFlight + ` AND status = ` + sqlRunning + ` AND triggered_at < $1 AND executor_address = $2
		ORDER BY triggered_at LIMIT $3`
	pendingRunsSQL = `SELECT ` + runColumns + ` FROM runs WHERE ` + sqlInFlight + ` AND status = ` + sqlPending +
		` ORDER BY scheduled_at, id`
)

// Lost returns running runs, dispatched before triggeredBefore, whose
// executor belongs to an AUTO group and has not registered since
// liveSince (it expired or deregistered). Runs of MANUAL groups are never
// lost this way: their executors do not register.
func (s RunStore) Lost(ctx context.Context, liveSince, triggeredBefore time.Time) ([]Run, error) {
	return s.queryRuns(ctx, lostRunsSQL, triggeredBefore.UnixMilli(), carillonv1.AddressMode_ADDRESS_MODE_MANUAL,
		liveSince.UnixMilli(), monitorBatch)
}

// Overdue returns running runs with a timeout whose dispatch plus
// timeout plus grace is before now.
func (s RunStore) Overdue(ctx context.Context, now time.Time, grace time.Duration) ([]Run, error) {
	return s.queryRuns(ctx, overdueRunsSQL, now.Add(-grace).UnixMilli(), grace.Milliseconds(), now.UnixMilli(), monitorBatch)
}

// Undispatched returns running runs claimed for dispatch before
// before that never recorded an executor, except the runs of except: those
// an earlier admin process claimed (RunStore.UnsentIDs), which are Reconcile's.
//
// Over a shared database only this admin's claims count: another live
// admin's are its own to record, a dead one's are adopted (RunStore.Adopted);
// except is not needed there.
func (s RunStore) Undispatched(ctx context.Context, before time.Time, except []int64) ([]Run, error) {
	if s.pg != nil {
		return s.queryRuns(ctx, pgUndispatchedRunsSQL, before.UnixMilli(), s.pg.adminID, monitorBatch)
	}
	return s.queryRuns(ctx, undispatchedRunsSQL, before.UnixMilli(), jsonIDs(except), monitorBatch)
}

// UnsentIDs returns the IDs of the running runs that recorded no
// executor. Read when an admin starts, before it claims anything, they are
// the runs earlier admin processes claimed and may or may not have sent
// before they stopped: the runs Reconcile settles. Read later, they would
// include this process's own claims on their way, pending runs an earlier
// process made among them.
func (s RunStore) UnsentIDs(ctx context.Context) ([]int64, error) {
	ids, err := collectColumn[int64](s.reader(ctx).QueryContext(ctx, unsentRunIDsSQL))
	if err != nil {
		return nil, fmt.Errorf("store: unsent runs: %w", err)
	}
	return ids, nil
}

// Unsent returns the runs of ids (RunStore.UnsentIDs) still running with no
// executor recorded: claimed by an earlier admin process, which may or may
// not have sent them before it stopped; if it did, to the executor each
// was routed to (Run.RoutedTo).
func (s RunStore) Unsent(ctx context.Context, ids []int64) ([]Run, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return s.queryRouted(ctx, unsentRunsSQL(s.d), jsonIDs(ids))
}

// unsentRunsSQL reads the runs of a JSON list of IDs still running with
// no executor recorded, and where each was routed.
func unsentRunsSQL(d dialect) string {
	return `SELECT ` + runColumns + `, routed_to FROM runs
		WHERE ` + sqlInFlight + ` AND status = ` + sqlRunning + ` AND executor_address = '' AND id IN (` + d.idRows(`$1`) + `)
		ORDER BY id`
}

// queryRouted runs q, which returns runColumns and routed_to.
func (s *db) queryRouted(ctx context.Context, q string, args ...any) ([]Run, error) {
	rs, err := collectRouted(s.reader(ctx).QueryContext(ctx, q, args...))
	if err != nil {
		return nil, fmt.Errorf("store: runs: %w", err)
	}
	return rs, nil
}

// Manual returns running runs of MANUAL groups, dispatched before
// before: their executors do not register, so the monitor probes them.
func (s RunStore) Manual(ctx context.Context, before time.Time) ([]Run, error) {
	return s.queryRuns(ctx, manualRunsSQL, before.UnixMilli(), carillonv1.AddressMode_ADDRESS_MODE_MANUAL, monitorBatch)
}

// DueAt returns the running runs recorded at address whose instant
// (triggered_at) is from on: runs sent ahead of an instant from on.
func (s RunStore) DueAt(ctx context.Context, address string, from time.Time) ([]Run, error) {
	return s.queryRuns(ctx, runsDueAtSQL, from.UnixMilli(), address, monitorBatch)
}

// At returns running runs dispatched to address before before.
func (s RunStore) At(ctx context.Context, address string, before time.Time) ([]Run, error) {
	return s.queryRuns(ctx, runsAtSQL, before.UnixMilli(), address, monitorBatch)
}

// MaxID returns the largest run ID so far; 0 with no run.
func (s RunStore) MaxID(ctx context.Context) (int64, error) {
	id, err := dbsqlc.New(s.r).MaxRunID(ctx)
	if err != nil {
		return 0, fmt.Errorf("store: max run id: %w", err)
	}
	return id, nil
}

// Pending returns every pending run, oldest scheduled instant first.
func (s RunStore) Pending(ctx context.Context) ([]Run, error) {
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
