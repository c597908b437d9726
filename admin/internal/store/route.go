package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"
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

// Hot statements: record routes of running runs that record no dispatch
// yet, RETURNING those recorded. They take the routes as a JSON object of
// each run's executor by run ID (routeList), which PostgreSQL reads by
// key: its statement locks the runs by their ids alone (an index scan of
// runs_pkey, in id order) and updates them by id, so that no plan joins
// two lists. Joined to the routes' list and the locked ids both, with its
// estimates (100 rows for any JSON list, 1 for the runs the partial
// index runs_unsent holds), PostgreSQL matched every routed run with every
// locked one (a route of 256 runs beside 3,000 unsent took 26–27 ms
// instead of 4–6: BENCHMARKS.md, issue 36's tenth steps).
const (
	routeRunsSQL = `UPDATE runs SET routed_to = r.value FROM json_each($1) AS r
		WHERE runs.id = CAST(r.key AS INTEGER) AND runs.status = ` + sqlRunning + ` AND runs.executor_address = '' RETURNING runs.id`
	// pgRouteRunsSQL is routeRunsSQL over PostgreSQL, in one statement
	// with the admins' fence and no transaction of its own: a round trip
	// where BEGIN, the fence (pgHoldLeaseSQL), the update and COMMIT took
	// four. Its fence finds and holds this admin's row as pgHoldLeaseSQL
	// does, for the statement; it routes nothing unless the row was found,
	// and returns a row of id 0 when it was (routeFenced). Of the runs, it
	// routes those this admin claimed, or an admin it adopted claimed, and
	// makes them its own. Its l locks them, checking what a route needs of
	// each: once locked, a run cannot change before the update.
	pgRouteRunsSQL = `WITH fence AS (` + pgHoldLeaseSQL + `),
		l AS (SELECT id AS l_id FROM runs WHERE id = ANY(ARRAY(SELECT k::bigint FROM jsonb_object_keys($1::jsonb) AS k))
			AND status = ` + sqlRunning + ` AND executor_address = ''
			AND (claimed_by = ` + pgAdmin + ` OR claimed_by IN (SELECT id FROM admins WHERE adopted_by = ` + pgAdmin + `))
			AND EXISTS (SELECT 1 FROM fence)
			ORDER BY id FOR UPDATE),
		routed AS (UPDATE runs SET routed_to = $1::jsonb ->> runs.id::text, claimed_by = ` + pgAdmin + ` FROM l
			WHERE runs.id = l_id RETURNING runs.id)
		SELECT id FROM routed UNION ALL SELECT 0 FROM fence`
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
	list := routeList(routes)
	if s.pg != nil {
		return s.routeFenced(ctx, list)
	}
	var routed map[int64]bool
	err := s.writeLeased(ctx, func(tx *sql.Tx) error {
		var err error
		routed, err = recordedIDs(tx.StmtContext(ctx, s.q.routeRuns).QueryContext(ctx, list)) //nolint:sqlclosecheck // a transaction's statement closes with the transaction
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: route runs: %w", err)
	}
	return routed, nil
}

// routeFenced is Route over PostgreSQL: pgRouteRunsSQL, the fence and the
// routes in one statement, as writeLeased would run them in a
// transaction.
func (s *db) routeFenced(ctx context.Context, list string) (map[int64]bool, error) {
	if !s.awaitLease(ctx) {
		return nil, ErrLeaseLost
	}
	began := time.Now()
	routed, err := recordedIDs(s.q.routeRuns.QueryContext(ctx, list))
	s.writes.observe(time.Since(began))
	err = storageError(err)
	s.health.record(err)
	switch {
	case err != nil:
		return nil, fmt.Errorf("store: route runs: %w", err)
	case !routed[0]: // the fence found no lease
		s.loseLease()
		return nil, ErrLeaseLost
	}
	delete(routed, 0)
	s.changed.Emit()
	return routed, nil
}

// routeList returns routes as the route statements take them: a JSON
// object of each run's executor by run ID, {"17":"http://…"}. Of two
// routes of one run, one counts, as of two rows of a list joined to it.
func routeList(routes []Route) string {
	b := make([]byte, 0, 2+len(routes)*48)
	b = append(b, '{')
	for i, r := range routes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, r.RunID, 10)
		b = append(b, '"', ':')
		b = appendJSONString(b, r.Address)
	}
	return string(append(b, '}'))
}
