package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Route is where a run is about to be sent: the executor its call goes to.
type Route struct {
	RunID   int64
	Address string
}

// RouteAnyExecutor is a run's routed_to when the executor it went to is
// unknown: a run an admin older than routes had in flight (migration
// 0011). An admin taking it over asks every executor that may hold it.
const RouteAnyExecutor = "*"

// Hot statements: record routes, [run, executor], of running runs that
// record no dispatch yet, RETURNING those recorded.
const (
	routeRunsSQL = `UPDATE runs SET routed_to = r.value->>1 FROM json_each($1) AS r
		WHERE runs.id = r.value->>0 AND runs.status = ` + sqlRunning + ` AND runs.executor_address = '' RETURNING runs.id`
	// pgRouteRunsSQL is routeRunsSQL over PostgreSQL, inside the lease
	// fence (pgHoldLeaseSQL): of the runs, it routes those this admin
	// claimed, or an admin it adopted claimed, and makes them its own.
	pgRouteRunsSQL = `WITH r AS (SELECT (e->>0)::bigint AS r_id, e->>1 AS r_addr FROM jsonb_array_elements($1::jsonb) AS e),
		l AS (SELECT id AS l_id FROM runs WHERE id IN (SELECT r_id FROM r) ORDER BY id FOR UPDATE)
		UPDATE runs SET routed_to = r_addr, claimed_by = ` + pgAdmin + ` FROM r, l
		WHERE runs.id = r_id AND runs.id = l_id AND runs.status = ` + sqlRunning + ` AND runs.executor_address = ''
		AND (runs.claimed_by = ` + pgAdmin + ` OR runs.claimed_by IN (SELECT id FROM admins WHERE adopted_by = ` + pgAdmin + `))
		RETURNING runs.id`
)

// Route records, before the calls that send them, the executor each of
// routes goes to (runs.routed_to), and returns the IDs of the runs it
// recorded: those still running with no dispatch recorded. Only those may
// be sent. An admin that takes over after a crash or a lapsed lease then
// knows that a run with no route was never sent, and asks only its routed
// executor about one with a route, and sends it again only there, where
// the executor's run ID check makes it run once (see RunStore.Unsent).
//
// Over PostgreSQL it is the admins' fence: it records nothing once this
// admin's lease ran out or another admin adopted it (ErrLeaseLost), and
// it routes only the runs this admin claimed, or claimed by an admin it
// adopted, which become its own.
func (s RunStore) Route(ctx context.Context, routes []Route) (map[int64]bool, error) {
	if len(routes) == 0 {
		return nil, nil
	}
	var list jsonRows
	for _, r := range routes {
		list.next().int(r.RunID).str(r.Address)
	}
	var routed map[int64]bool
	err := s.writeLeased(ctx, func(tx *sql.Tx) error {
		var err error
		routed, err = recordedIDs(tx.StmtContext(ctx, s.q.routeRuns).QueryContext(ctx, list.String())) //nolint:sqlclosecheck // a transaction's statement closes with the transaction
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: route runs: %w", err)
	}
	return routed, nil
}
