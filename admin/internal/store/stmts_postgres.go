package store

// The hot statements on PostgreSQL. They take the same JSON lists as
// SQLite's (stmts.go), read with jsonb_array_elements and cast, since
// PostgreSQL compares no text with a number. Each first locks the rows it
// changes in id order (the l CTE), so that two admins writing the same runs
// or jobs wait for each other instead of deadlocking; the claims skip the
// rows another admin holds (SKIP LOCKED): that admin is claiming them.
//
// The update then joins l alone: l carries each row of the list with its
// locked row (settle, dispatch record), or, for a list that is an object
// by ID, l locks the rows by id = ANY(its keys) and the update reads each
// row's values by key (claims, routes). Joined to the list and to l both,
// PostgreSQL, which guesses 100 rows for any JSON list, matched the two
// row by row or read the whole table (see BENCHMARKS.md, issue 36's
// tenth steps). pgShardTotalsSQL, of sharding broadcasts only, still
// joins both.

import (
	"strconv"
	"strings"
)

const (
	// pgAdmin is this admin's id, which it connects with (Store.adminID).
	pgAdmin = `coalesce(current_setting('carillon.admin', true), '')`

	// pgDispatches' l carries each dispatch with its locked row, as
	// pgSettleRunsSQL's does (BenchmarkRecordDispatches/batch=256/postgres:
	// 10.6–12.1 ms against 20.4–21.4 joined to d and l both).
	pgDispatches = `WITH d AS (SELECT (e->>0)::bigint AS d_id, e->>1 AS d_addr, (e->>2)::bigint AS d_shard, (e->>3)::bigint AS d_total,
			e->>4 AS d_msg, (e->>5)::bigint AS d_timeout, (e->>6)::bigint AS d_sent FROM jsonb_array_elements($1::jsonb) AS e),
		l AS (SELECT d.* FROM runs JOIN d ON runs.id = d_id ORDER BY runs.id FOR UPDATE OF runs)
		`
	pgRecordRunsSQL = pgDispatches + `UPDATE runs SET executor_address = d_addr, shard_index = d_shard, shard_total = d_total,
		trigger_message = d_msg, timeout_seconds = d_timeout FROM l WHERE runs.id = d_id` + pgRecordWhere
	pgRecordSentSQL = pgDispatches + `UPDATE runs SET executor_address = d_addr, shard_index = d_shard, shard_total = d_total,
		trigger_message = d_msg, timeout_seconds = d_timeout, triggered_at = coalesce(d_sent, triggered_at) FROM l WHERE runs.id = d_id` + pgRecordWhere
	// pgRecordWhere is recordWhere, fenced: inside the lease fence
	// (holdLease), it records the runs this admin claimed, or an admin it
	// adopted claimed. A run another admin adopted and sent again is that
	// admin's to record.
	pgRecordWhere = ` AND (runs.executor_address = '' OR (runs.status = ` + sqlRunning + ` AND runs.executor_address = d_addr))
		AND (runs.claimed_by = ` + pgAdmin + ` OR runs.claimed_by IN (SELECT id FROM admins WHERE adopted_by = ` + pgAdmin + `))
		RETURNING runs.id`
	pgShardTotalsSQL = `WITH t AS (SELECT (e->>0)::bigint AS t_id, (e->>1)::bigint AS t_total FROM jsonb_array_elements($1::jsonb) AS e),
		l AS (SELECT id AS l_id FROM runs WHERE id IN (SELECT t_id FROM t) ORDER BY id FOR UPDATE)
		UPDATE runs SET shard_total = t_total FROM t, l WHERE runs.id = t_id AND runs.id = l_id`

	// pgAdvanceJobsSQL is advanceJobsSQL over PostgreSQL. Its l locks the
	// jobs by id alone (an index scan of jobs_pkey, in id order), checking
	// each one's due instant by key, and the update joins l alone: joined
	// to the claims' list and to l both, PostgreSQL read every job (a
	// sequential scan, guessing 100 rows for any JSON list) and matched
	// the two lists row by row.
	pgAdvanceJobsSQL = `WITH l AS (SELECT id AS l_id FROM jobs WHERE id = ANY(ARRAY(SELECT k::bigint FROM jsonb_object_keys($1::jsonb) AS k))
			AND enabled = 1 AND next_fire_at = ($1::jsonb -> id::text ->> 0)::bigint` + jobsNotPaused + `
			ORDER BY id FOR UPDATE SKIP LOCKED)
		UPDATE jobs SET next_fire_at = ($1::jsonb -> jobs.id::text ->> 1)::bigint,
			last_fire_at = coalesce(($1::jsonb -> jobs.id::text ->> 2)::bigint, last_fire_at)
		FROM l WHERE jobs.id = l_id RETURNING jobs.id`
)

// pgRunColumns are runColumns of the table runs, for a RETURNING of an
// UPDATE ... FROM, where a bare name could be the FROM list's.
var (
	pgRunColumns = prefixed("runs.", runColumns)

	// pgClaimRunsSQL locks the runs by id alone, as pgAdvanceJobsSQL does
	// the jobs.
	pgClaimRunsSQL = `WITH l AS (SELECT id AS l_id FROM runs WHERE id = ANY(ARRAY(SELECT k::bigint FROM jsonb_object_keys($1::jsonb) AS k))
			AND runs.status = ` + sqlPending + runsNotPaused + ` ORDER BY id FOR UPDATE SKIP LOCKED)
		UPDATE runs SET status = ` + sqlRunning + `, trigger_type = ($1::jsonb -> runs.id::text ->> 0)::bigint,
			triggered_at = coalesce(($1::jsonb -> runs.id::text ->> 1)::bigint, $2), claimed_by = ` + pgAdmin + `
		FROM l WHERE runs.id = l_id RETURNING ` + pgRunColumns

	// pgSettleRunsSQL settles results; its l carries each result with its
	// locked row, so that the UPDATE joins one list: joined to r and l
	// both, PostgreSQL matched every row of one with every row of the
	// other (a settle of 1,000 results took 66–190 ms instead of 36–39 ms:
	// BenchmarkSettleRuns/batch=1000/postgres).
	pgSettleRunsSQL = `WITH r AS (SELECT (e->>0)::bigint AS r_id, (e->>1)::bigint AS r_status, e->>2 AS r_msg, (e->>3)::bigint AS r_finished,
			e->>4 AS r_addr, e->>5 AS r_tmsg, (e->>6)::bigint AS r_timeout, (e->>7)::bigint AS r_sent, (e->>8)::bigint AS r_by,
			e->>9 AS r_outputs, (e->>10)::bigint AS r_started
			FROM jsonb_array_elements($1::jsonb) AS e),
		l AS (SELECT r.* FROM runs JOIN r ON runs.id = r_id ORDER BY runs.id FOR UPDATE OF runs)
		UPDATE runs SET status = r_status,
		message = CASE WHEN runs.status = ` + sqlRunning + ` THEN r_msg
			ELSE r_msg || ' (reported after the admin had settled the run ' ||
				CASE runs.status WHEN 3 THEN 'FAILED' WHEN 4 THEN 'TIMED_OUT' WHEN 6 THEN 'LOST' ELSE 'without it' END ||
				': ' || runs.message || ')' END,
		finished_at = CASE WHEN r_finished < coalesce(r_sent, runs.triggered_at) THEN coalesce(r_sent, runs.triggered_at) ELSE r_finished END,
		executor_address = coalesce(r_addr, runs.executor_address), trigger_message = coalesce(r_tmsg, runs.trigger_message),
		timeout_seconds = coalesce(r_timeout, runs.timeout_seconds), triggered_at = coalesce(r_sent, runs.triggered_at),
		admin_settled = CASE WHEN runs.status = ` + sqlRunning + ` THEN coalesce(r_by, 0) ELSE 2 END,
		outputs = coalesce(r_outputs, runs.outputs), started_at = coalesce(r_started, runs.started_at),
		missed_count = CASE WHEN r_status = ` + sqlSkipped + ` AND runs.missed_count = 0 THEN 1 ELSE runs.missed_count END,
		missed_until = CASE WHEN r_status = ` + sqlSkipped + ` AND runs.missed_count = 0 THEN runs.scheduled_at ELSE runs.missed_until END
		FROM l WHERE runs.id = r_id
		AND (runs.status = ` + sqlRunning + ` OR (runs.admin_settled = 1 AND r_by IS NULL)) RETURNING ` + pgSettledColumns
)

// pgSettledColumns are settledColumns over PostgreSQL.
var pgSettledColumns = prefixed("runs.", settledColumns)

// pgInsertRunListSQL stores the runs of a JSON list whose rows are
// appendInsertArgs' values, in one statement, RETURNING their IDs: each
// value cast to its column's type (pgRunTextColumns are text), the rows
// taken in the list's order (WITH ORDINALITY), which is the order the
// identity numbers them in, as a multi-row VALUES is (insertRuns).
var pgInsertRunListSQL = func() string {
	cols := strings.Split(runInsertColumns, ",")
	values := make([]string, len(cols))
	for i, c := range cols {
		values[i] = `e->>` + strconv.Itoa(i)
		if !pgRunTextColumns[strings.TrimSpace(c)] {
			values[i] = `(` + values[i] + `)::bigint`
		}
	}
	return `INSERT INTO runs (` + runInsertColumns + `) SELECT ` + strings.Join(values, `, `) +
		` FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS t(e, n) ORDER BY n RETURNING id`
}()

// pgRunTextColumns are the text columns among runInsertColumns; the
// others are bigint.
var pgRunTextColumns = map[string]bool{
	"executor_address": true, "handler": true, "param": true, "trigger_message": true, "message": true,
	"alarm_message": true, "workflow_node": true, "outputs": true, "inputs": true, "rendered_param": true,
}
