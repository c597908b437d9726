package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// stmts are the statements of the fire path, prepared once when the store
// opens. SQLite spends as long parsing a statement as running a small one,
// so the hot paths never hand it new SQL text: a statement that takes a
// list takes it as one JSON array parameter, read with json_each (with
// jsonb_array_elements on PostgreSQL), and keeps one shape whatever the
// list's length. Each dialect has its texts (hotSQL): SQLite's are here,
// PostgreSQL's in stmts_postgres.go. Transactions use them through
// tx.StmtContext, which reuses the writer connection's prepared statement.
type stmts struct {
	claimRuns   *sql.Stmt                    // writer: PENDING → RUNNING, RETURNING the runs
	recordRuns  *sql.Stmt                    // writer: how runs were dispatched
	recordSent  *sql.Stmt                    // writer: recordRuns, with when runs sent late were really sent
	routeRuns   *sql.Stmt                    // writer: where runs are about to be sent
	shardTotals *sql.Stmt                    // writer: shard totals of broadcasts
	advanceJobs *sql.Stmt                    // writer: the scan's compare-and-set of next fires
	insertRuns  [len(insertChunks)]*sql.Stmt // writer, hotSQL.insertRuns: insertChunks[i] new runs
	insertPlain [len(insertChunks)]*sql.Stmt // writer, hotSQL.insertPlain: insertChunks[i] new plain runs, where set
	insertList  *sql.Stmt                    // writer, hotSQL.insertRunList: new runs, RETURNING their IDs
	settleRuns  *sql.Stmt                    // writer, hotSQL.settleRuns: RUNNING → final, RETURNING the runs
	settle      [len(insertChunks)]*sql.Stmt // writer, hotSQL.settleChunk: insertChunks[i] runs RUNNING → final, RETURNING them
	txJobs      *sql.Stmt                    // writer: jobs by ID, inside a write transaction
	jobsByID    *sql.Stmt                    // readers: jobs by ID
	resultRuns  *sql.Stmt                    // readers: what results are checked against (RunStore.Results)
	dueJobs     *sql.Stmt                    // readers: the scan's due jobs, for an admin that owns every bucket
	nextBoth    *sql.Stmt                    // readers: the scan's next fires (FireStore.Next), likewise
	countDue    *sql.Stmt                    // readers: the scan's count of a burst coming (FireStore.CountDue), likewise
}

// Hot statements. Each list parameter is a JSON array, or an object by
// run or job ID (jsonRows.key, routeList), which PostgreSQL's statements
// read by key; an element that is itself an array is read by position
// (value->>0, value->>1, …).
const (
	claimRunsSQL = `UPDATE runs SET status = ` + sqlRunning + `, trigger_type = c.value->>0, triggered_at = coalesce(c.value->>1, $2)
		FROM json_each($1) AS c WHERE runs.id = CAST(c.key AS INTEGER) AND runs.status = ` + sqlPending + runsNotPaused + ` RETURNING ` + runColumns
	// recordRunsSQL records dispatches: [run, executor, shard index, shard
	// total, trigger message, timeout].
	recordRunsSQL = `UPDATE runs SET executor_address = d.value->>1, shard_index = d.value->>2, shard_total = d.value->>3,
		trigger_message = d.value->>4, timeout_seconds = d.value->>5 FROM json_each($1) AS d WHERE runs.id = d.value->>0` + recordWhere
	// recordSentSQL is recordRunsSQL for a batch in which some runs were
	// sent at another time than their claim said, each with a seventh
	// value, when it was sent. It is a statement of its own because
	// setting triggered_at moves the row in the runs_active index: the
	// dispatches of a batch sent on time, almost all of them, leave it be.
	recordSentSQL = `UPDATE runs SET executor_address = d.value->>1, shard_index = d.value->>2, shard_total = d.value->>3,
		trigger_message = d.value->>4, timeout_seconds = d.value->>5, triggered_at = coalesce(d.value->>6, triggered_at)
		FROM json_each($1) AS d WHERE runs.id = d.value->>0` + recordWhere
	// recordWhere keeps a dispatch record from replacing another: it
	// records a run with no dispatch recorded, or a running one again on
	// the same executor (a run sent ahead, sent again on its instant), and
	// returns the runs it recorded.
	recordWhere = ` AND (runs.executor_address = '' OR (runs.status = ` + sqlRunning + ` AND runs.executor_address = d.value->>1))
		RETURNING runs.id`
	shardTotalsSQL = `UPDATE runs SET shard_total = t.value->>1 FROM json_each($1) AS t WHERE runs.id = t.value->>0`
	// advanceJobsSQL applies claims, an object of [due, next or null,
	// fired instant or null] by job (jsonRows.key).
	advanceJobsSQL = `UPDATE jobs SET next_fire_at = c.value->>1, last_fire_at = coalesce(c.value->>2, last_fire_at)
		FROM json_each($1) AS c WHERE jobs.id = CAST(c.key AS INTEGER) AND jobs.enabled = 1 AND jobs.next_fire_at = c.value->>0` + jobsNotPaused + `
		RETURNING jobs.id`
	// finishedAtSQL is a result's finished at, but the instant its run was
	// sent (the dispatch's, recorded with it, else the run's) when it is
	// earlier: a run does not end before it starts, whatever a clock said.
	finishedAtSQL = `CASE WHEN r.r_finished < coalesce(r.r_sent, runs.triggered_at) THEN coalesce(r.r_sent, runs.triggered_at) ELSE r.r_finished END`
	jobsByIDSQL   = `SELECT ` + jobColumns + ` FROM jobs WHERE id IN (SELECT value FROM json_each($1))`
	// pgJobsByIDSQL is jobsByIDSQL over PostgreSQL.
	pgJobsByIDSQL = `SELECT ` + jobColumns + ` FROM jobs WHERE id IN (SELECT value::bigint FROM jsonb_array_elements_text($1::jsonb) AS value)`
)

// settleColumns are the values of a result that settleRunsSQL applies,
// one row of r each: the run, its status, message and finished at; for a
// dispatch recorded with its result, the executor, trigger message,
// timeout, and the time it was really sent (else null); 1 for a
// settlement by the admin itself (else null); the outputs as a JSON
// object (text, else null); when the handler started (else null).
const settleColumns = `r_id, r_status, r_msg, r_finished, r_addr, r_tmsg, r_timeout, r_sent, r_by, r_outputs, r_started`

// settleValues is how many values settleColumns has.
var settleValues = strings.Count(settleColumns, ",") + 1

// settleRunsSQL applies results (settleColumns, one for each row of
// values, bound in order: anonymousRows'). It settles a running run, or replaces the admin's own
// settlement of a run (LOST, TIMED_OUT) with a result from its executor. A
// run settled SKIPPED (not sent: DO_NOTHING after a restart, its job
// stopped) is the record of its one missed instant (missed_count 1,
// missed_until its instant), as FireStore.Skip's are. A result's finished at is
// never before the run was sent (finishedAtSQL). Settling takes the row
// out of runs_active, so setting triggered_at here costs nothing more.
// Values rather than a JSON list (as the other hot statements take): a
// result has eleven, and SQLite would parse its JSON for each use of one.
// PostgreSQL's statement (pgSettleRunsSQL) takes the JSON list.
func settleRunsSQL(values string) string {
	return `WITH r(` + settleColumns + `) AS (VALUES ` + values + `)
		UPDATE runs SET status = r.r_status,
		message = CASE WHEN runs.status = ` + sqlRunning + ` THEN r.r_msg
			ELSE r.r_msg || ' (reported after the admin had settled the run ' ||
				CASE runs.status WHEN 3 THEN 'FAILED' WHEN 4 THEN 'TIMED_OUT' WHEN 6 THEN 'LOST' ELSE 'without it' END ||
				': ' || runs.message || ')' END,
		finished_at = ` + finishedAtSQL + `,
		executor_address = coalesce(r.r_addr, executor_address), trigger_message = coalesce(r.r_tmsg, trigger_message),
		timeout_seconds = coalesce(r.r_timeout, timeout_seconds), triggered_at = coalesce(r.r_sent, triggered_at),
		admin_settled = CASE WHEN runs.status = ` + sqlRunning + ` THEN coalesce(r.r_by, 0) ELSE 2 END,
		outputs = coalesce(r.r_outputs, outputs), started_at = coalesce(r.r_started, started_at),
		missed_count = CASE WHEN r.r_status = ` + sqlSkipped + ` AND runs.missed_count = 0 THEN 1 ELSE runs.missed_count END,
		missed_until = CASE WHEN r.r_status = ` + sqlSkipped + ` AND runs.missed_count = 0 THEN runs.scheduled_at ELSE runs.missed_until END
		FROM r WHERE runs.id = r.r_id
		AND (runs.status = ` + sqlRunning + ` OR (runs.admin_settled = 1 AND r.r_by IS NULL)) RETURNING ` + settledColumns
}

// settledColumns are the columns of a run that a settle returns
// (scanSettled): what follows a settle reads (followUp, the caps' freed
// slots, workflow nodes, the Completer's metrics and log). The others,
// the run's handler, params, inputs and outputs, trigger and alarm
// messages, are left zero: reading thirty columns back for every run was
// two fifths of a settle. A retry, the one follow-up that copies a run
// whole, reads its run again (settler.retryOf).
const settledColumns = `id, job_id, group_id, executor_address, shard_index, shard_total, trigger_type,
	scheduled_at, triggered_at, status, message, finished_at, attempt, due_at, alarm_status, admin_settled,
	workflow_run_id, workflow_node, slot, started_at`

// prepare prepares the hot statements on the writer and the readers.
func (s *db) prepare(ctx context.Context) error {
	var errs []error
	prep := func(db *sql.DB, q string) *sql.Stmt {
		st, err := db.PrepareContext(ctx, q)
		errs = append(errs, err)
		return st
	}
	h := s.d.hot()
	s.q = stmts{
		claimRuns:   prep(s.w, h.claimRuns),
		recordRuns:  prep(s.w, h.recordRuns),
		recordSent:  prep(s.w, h.recordSent),
		routeRuns:   prep(s.w, h.routeRuns),
		shardTotals: prep(s.w, h.shardTotals),
		advanceJobs: prep(s.w, h.advanceJobs),
		txJobs:      prep(s.w, h.jobsByID),
		jobsByID:    prep(s.r, h.jobsByID),
		resultRuns:  prep(s.r, h.resultRuns),
		dueJobs:     prep(s.r, dueJobsSQL),
		nextBoth:    prep(s.r, nextBothSQL),
		countDue:    prep(s.r, countDueSQL),
	}
	for i, n := range insertChunks {
		if h.insertRuns != nil {
			s.q.insertRuns[i] = prep(s.w, h.insertRuns(n))
		}
		if h.settleChunk != nil {
			s.q.settle[i] = prep(s.w, h.settleChunk(n))
		}
		if h.insertPlain != nil {
			s.q.insertPlain[i] = prep(s.w, h.insertPlain(n))
		}
	}
	if h.settleRuns != "" {
		s.q.settleRuns = prep(s.w, h.settleRuns)
	}
	if h.insertRunList != "" {
		s.q.insertList = prep(s.w, h.insertRunList)
	}
	return errors.Join(errs...)
}

// close closes the prepared statements.
func (q *stmts) close() {
	all := []*sql.Stmt{q.claimRuns, q.recordRuns, q.recordSent, q.routeRuns, q.shardTotals, q.advanceJobs, q.settleRuns, q.insertList, q.txJobs, q.jobsByID, q.resultRuns,
		q.dueJobs, q.nextBoth, q.countDue}
	all = append(append(append(all, q.insertRuns[:]...), q.insertPlain[:]...), q.settle[:]...)
	for _, st := range all {
		if st != nil {
			_ = st.Close()
		}
	}
}

// jsonRows builds a JSON array of arrays, the list parameter of the hot
// statements, without reflection.
type jsonRows struct {
	b   []byte
	row bool // inside a row
}

// next starts a new row.
func (j *jsonRows) next() *jsonRows {
	if j.b == nil {
		j.b = append(j.b, '[')
	} else {
		j.b = append(j.b, "],"...)
	}
	j.b = append(j.b, '[')
	j.row = false
	return j
}

func (j *jsonRows) sep() {
	if j.row {
		j.b = append(j.b, ',')
	}
	j.row = true
}

// int appends an integer to the row.
func (j *jsonRows) int(v int64) *jsonRows {
	j.sep()
	j.b = strconv.AppendInt(j.b, v, 10)
	return j
}

// null appends a JSON null, or v when valid.
func (j *jsonRows) nullInt(v sql.NullInt64) *jsonRows {
	if !v.Valid {
		j.sep()
		j.b = append(j.b, "null"...)
		return j
	}
	return j.int(v.Int64)
}

// str appends a string to the row.
func (j *jsonRows) str(s string) *jsonRows {
	j.sep()
	j.b = appendJSONString(j.b, s)
	return j
}

// appendJSONString appends s to b as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	if plainJSON(s) {
		return append(append(append(b, '"'), s...), '"')
	}
	q, _ := json.Marshal(s) // a string always marshals; invalid UTF-8 becomes U+FFFD
	return append(b, q...)
}

// plainJSON says s needs no escaping inside JSON quotes: printable ASCII
// without quotes or backslashes, as most messages and addresses are.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// value appends v, a value database/sql would bind (an integer of any
// kind, a string, a sql.Null*, nil), as a JSON number, string or null.
func (j *jsonRows) value(v any) error {
	dv, err := driver.DefaultParameterConverter.ConvertValue(v)
	if err != nil {
		return err
	}
	switch dv := dv.(type) {
	case nil:
		j.sep()
		j.b = append(j.b, "null"...)
	case int64:
		j.int(dv)
	case string:
		j.str(dv)
	default:
		return fmt.Errorf("no JSON list value for %T", v)
	}
	return nil
}

// key starts a new row of a JSON object of rows by ID, {"17":[…],…}: a
// list that PostgreSQL reads by key (see pgAdvanceJobsSQL). Object
// returns it; a list is made of keyed rows or of plain ones, not both.
func (j *jsonRows) key(id int64) *jsonRows {
	if j.b == nil {
		j.b = append(j.b, '{')
	} else {
		j.b = append(j.b, "],"...)
	}
	j.b = append(j.b, '"')
	j.b = strconv.AppendInt(j.b, id, 10)
	j.b = append(j.b, '"', ':', '[')
	j.row = false
	return j
}

// Object returns the object of keyed rows; "{}" when it has none.
func (j *jsonRows) Object() string {
	if j.b == nil {
		return "{}"
	}
	return string(j.b) + "]}"
}

// String returns the array; "[]" when it has no rows.
func (j *jsonRows) String() string {
	if j.b == nil {
		return "[]"
	}
	return string(j.b) + "]]"
}

// jsonIDs returns ids as a JSON array.
func jsonIDs(ids []int64) string {
	b := make([]byte, 0, 2+len(ids)*8)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}
