package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/carillonhq/carillon/admin/internal/followup"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Policy decides what follows a settled run (followup.Policy); the store
// carries out its decisions in the transaction that settles the run.
type Policy interface {
	Decide(job followup.Job, r followup.Run) followup.Decision
}

// Dispatch is how a running run was routed: its executor and shard, and,
// for a run that could not be dispatched, its failure.
type Dispatch struct {
	RunID           int64
	ExecutorAddress string
	ShardIndex      int32
	ShardTotal      int32
	TriggerMessage  string
	TimeoutSeconds  int32
	// TriggeredAt, if not zero, is when the run was really sent, stored as
	// its triggered_at: set it only when that differs from the instant its
	// claim stored (a late send), as storing it costs a write.
	TriggeredAt time.Time
	// Failed settles the run as FAILED with Message at FinishedAt.
	Failed     bool
	Message    string
	FinishedAt time.Time
}

// Result is the outcome of a run.
type Result struct {
	RunID      int64
	Status     carillonv1.RunStatus
	Message    string
	FinishedAt time.Time
	// StartedAt is when the handler started on the executor, as it
	// reported it; zero when it did not. Stored as Run.StartedAt; the
	// admin's metrics read it too.
	StartedAt time.Time
	// Dispatch, if not nil, is the run's dispatch, not recorded yet: its
	// executor, trigger message and timeout are stored with the result,
	// which saves the separate write of RecordDispatches.
	Dispatch *Dispatch
	// ByAdmin says the admin settles the run itself, without a result from
	// its executor (LOST, TIMED_OUT, unknown after a restart). A result
	// from the executor that comes later replaces it (Run.LateResult).
	ByAdmin bool
	// Outputs are what the handler published (Run.Outputs), at most
	// MaxOutputsSize: the caller checks.
	Outputs map[string]string
}

// Settled is what settling runs did: the runs it settled, and the pending
// runs it created in the same transaction (retries, and child jobs of a
// fire that succeeded), which the caller hands to the scheduler.
type Settled struct {
	// Runs are the runs settled, as they are now, with the fields of
	// settledColumns only: the others (Handler, Param, TriggerMessage,
	// Inputs, Outputs...) are zero.
	Runs      []Run
	FollowUps []Run
	// Freed are runs waiting for a concurrency slot that settled runs may
	// have freed (caps.go): the caller hands them to the scheduler, whose
	// claim takes the slots they find free.
	Freed []Run
	// Rescheduled says a FIX_DELAY job got its next fire: the scheduler
	// should scan now rather than at its next tick.
	Rescheduled bool
	// WorkflowRunsEnded are the workflow runs the write ended (or made
	// ended, SKIPPED), as they ended: for metrics, and for the alarm
	// sender when one ended FAILED (AlarmStatus PENDING).
	WorkflowRunsEnded []WorkflowRun
	// kill are running runs of the workflow runs a write cancelled
	// (WorkflowChange.Kill).
	kill []Run
}

// RecordDispatches stores how runs were dispatched and settles those that
// failed, following policy p (see RunStore.Settle). A result that arrived
// before its dispatch was recorded is kept.
func (s RunStore) RecordDispatches(ctx context.Context, p Policy, ds []Dispatch) (Settled, error) {
	var list jsonRows
	var failures []Result
	record := s.q.recordRuns
	for _, d := range ds {
		list.next().int(d.RunID).str(d.ExecutorAddress).int(int64(d.ShardIndex)).int(int64(d.ShardTotal)).
			str(d.TriggerMessage).int(int64(d.TimeoutSeconds))
		if !d.TriggeredAt.IsZero() {
			list.int(d.TriggeredAt.UnixMilli())
			record = s.q.recordSent
		}
		if d.Failed {
			failures = append(failures, Result{RunID: d.RunID, Status: carillonv1.RunStatus_RUN_STATUS_FAILED, Message: d.Message, FinishedAt: d.FinishedAt})
		}
	}
	out, err := s.settleTx(ctx, p, func(st *settler) error {
		recorded, err := recordedIDs(st.tx.StmtContext(ctx, record).QueryContext(ctx, list.String())) //nolint:sqlclosecheck // a transaction's statement closes with the transaction
		if err != nil {
			return err
		}
		// A failure settles its run only where it was recorded: not a run
		// another admin adopted, nor one recorded on another executor.
		return st.settle(slices.DeleteFunc(failures, func(r Result) bool { return !recorded[r.RunID] }))
	})
	if err != nil {
		return Settled{}, fmt.Errorf("store: record dispatch: %w", err)
	}
	return out, nil
}

// recordedIDs reads the IDs a statement RETURNING runs.id returned.
func recordedIDs(rows *sql.Rows, err error) (map[int64]bool, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids[id] = true
	}
	return ids, rows.Err()
}

// Settle records results of running runs. A result for a run that is
// not running (already settled, or unknown) does not change its status, so
// repeating a result is harmless; one from an executor that says something
// else than the run does is noted in the run's message (noteLater). Of two
// results for one run in results, the first counts. A result's finished at
// is taken as the instant its run was sent when it is earlier. In the same transaction, for each run settled, it carries out
// what policy p decides follows it (followup.Policy.Decide):
//   - a retry is a pending run due at Decision.RetryAt;
//   - an alarm marks the run's alarm_status PENDING;
//   - children fire once every shard of the fire has succeeded: each child
//     job gets a pending PARENT run, once per fire;
//   - a FIX_DELAY job's next fire is set once nothing of its fire is left
//     running or pending.
func (s RunStore) Settle(ctx context.Context, p Policy, results []Result) (Settled, error) {
	out, err := s.settleTx(ctx, p, func(st *settler) error { return st.settle(results) })
	if err != nil {
		return Settled{}, fmt.Errorf("store: settle runs: %w", err)
	}
	return out, nil
}

// settleTx runs fn with a settler in one write transaction inside the
// admins' fence (writeLeased: the follow-ups it makes wait in this admin's
// queue) and returns what it settled.
func (s *db) settleTx(ctx context.Context, p Policy, fn func(st *settler) error) (Settled, error) {
	var out Settled
	err := s.writeLeased(ctx, func(tx *sql.Tx) error {
		st := &settler{ctx: ctx, tx: tx, q: &s.q, d: s.d, insert: s.insertRuns, policy: p, cache: &s.jobs, jobs: map[int64]*JobDefinition{},
			parents: map[fireKey]bool{}, delayed: map[int64]bool{}}
		if err := fn(st); err != nil {
			return err
		}
		out = st.out
		return nil
	})
	return out, err
}

// settler settles runs inside one write transaction, with the jobs it
// reads cached.
type settler struct {
	ctx    context.Context
	tx     *sql.Tx
	q      *stmts
	d      dialect
	insert func(ctx context.Context, tx *sql.Tx, runs []Run) error // db.insertRuns
	policy Policy
	cache  *jobCache
	jobs   map[int64]*JobDefinition // nil: the job was deleted
	// parents are the fires whose children this transaction fired: when
	// several shards of a fire settle in one statement, each sees all of
	// them succeeded, and only the first may fire the children.
	parents map[fireKey]bool
	// workflowRuns are the workflow runs this transaction read and locked
	// (lockWorkflowRun), kept as it changes them: the results of a
	// fan-in's many nodes, settled together, read each once.
	workflowRuns map[int64]*WorkflowRun
	// alarms are the runs whose alarms followUp found due, to be marked
	// PENDING together (markAlarms); unalarmed those it found with no one
	// to alarm, to be recorded so together.
	alarms, unalarmed []int64
	// retries are the retries followUp found due that storeFollowUps
	// stores together: the runs they retry, and when each is due;
	// children the runs of child jobs it stores with them.
	retries  []retryDue
	children []Run
	// delays are the FIX_DELAY jobs whose next fires scheduleDelays sets
	// together (fixDelayNextSQL's object); delayed their IDs.
	delays  jsonRows
	delayed map[int64]bool
	out     Settled
}

// fireKey names a scheduled fire: a job and its scheduled instant.
type fireKey struct {
	job int64
	at  int64
}

// loadJobs reads the definitions of the jobs with the given IDs that this
// transaction has not read yet, through the store's job cache.
func (st *settler) loadJobs(ids []int64) error {
	var missing []int64
	for _, id := range ids {
		if _, ok := st.jobs[id]; !ok {
			missing = append(missing, id)
			st.jobs[id] = nil // deleted, unless read below
		}
	}
	if len(missing) == 0 {
		return nil
	}
	jobs, err := st.cache.definitions(missing, func(ids []int64) (map[int64]*Job, error) {
		return collectJobs(st.tx.StmtContext(st.ctx, st.q.txJobs).QueryContext(st.ctx, jsonIDs(ids))) //nolint:sqlclosecheck // a transaction's statement closes with the transaction
	})
	if err != nil {
		return err
	}
	for id, j := range jobs {
		st.jobs[id] = j
	}
	return nil
}

// settleRuns applies results (each run once) in as few statements as it
// can and returns the runs they settled: one statement with the results
// as a JSON list where the dialect has it (hotSQL.settleRuns: PostgreSQL),
// else the prepared statements of settleRunsSQL, in chunks of
// insertChunks (SQLite).
func (st *settler) settleRuns(results []Result) ([]Run, error) {
	if st.q.settleRuns != nil {
		var list jsonRows
		var args []any
		for _, res := range results {
			list.next()
			args = settleArgs(args[:0], res)
			for _, v := range args {
				if err := list.value(v); err != nil {
					return nil, err
				}
			}
		}
		rows, err := st.tx.StmtContext(st.ctx, st.q.settleRuns).QueryContext(st.ctx, list.String()) //nolint:sqlclosecheck // a transaction's statement closes with the transaction
		return appendSettled(nil, rows, err)
	}
	runs := make([]Run, 0, len(results)) // a run is 500 bytes: grown by appends, the settle's largest allocation
	args := make([]any, 0, min(len(results), insertChunks[0])*settleValues)
	for len(results) > 0 {
		k := insertChunk(len(results))
		chunk := results[:insertChunks[k]]
		results = results[len(chunk):]
		args = args[:0]
		for _, res := range chunk {
			args = settleArgs(args, res)
		}
		rows, err := st.tx.StmtContext(st.ctx, st.q.settle[k]).QueryContext(st.ctx, args...) //nolint:sqlclosecheck // a transaction's statement closes with the transaction
		if runs, err = appendSettled(runs, rows, err); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// settleArgs appends res's values for settleColumns to args, nil for a
// null.
func settleArgs(args []any, res Result) []any {
	args = append(args, res.RunID, int64(res.Status), res.Message, nullable(millis(res.FinishedAt)))
	if d := res.Dispatch; d != nil {
		args = append(args, d.ExecutorAddress, d.TriggerMessage, int64(d.TimeoutSeconds), nullable(millis(d.TriggeredAt)))
	} else {
		args = append(args, nil, nil, nil, nil)
	}
	var by, outputs, started any
	if res.ByAdmin {
		by = int64(settledByAdmin)
	}
	outputs = nullableString(encodeContext(res.Outputs))
	if !res.StartedAt.IsZero() {
		started = res.StartedAt.UnixMilli()
	}
	return append(args, by, outputs, started)
}

// appendSettled appends the runs of rows returning settledColumns to runs.
func appendSettled(runs []Run, rows *sql.Rows, err error) ([]Run, error) {
	if err != nil {
		return runs, err
	}
	defer rows.Close()
	for rows.Next() {
		runs = append(runs, Run{})
		if err := scanSettled(rows, &runs[len(runs)-1]); err != nil {
			return nil, err
		}
	}
	return runs, rows.Err()
}

// scanSettled reads a row of settledColumns into r, which is zero, with
// the scanners of scan.go.
func scanSettled(row interface{ Scan(...any) error }, r *Run) error {
	var settled int64
	err := row.Scan(intCol(&r.ID), intCol(&r.JobID), intCol(&r.GroupID), &r.ExecutorAddress, intCol(&r.ShardIndex),
		intCol(&r.ShardTotal), intCol(&r.TriggerType), millisInto{&r.ScheduledAt}, millisInto{&r.TriggeredAt},
		intCol(&r.Status), &r.Message, millisInto{&r.FinishedAt}, intCol(&r.Attempt), millisInto{&r.DueAt},
		intCol(&r.AlarmStatus), intCol(&settled), intCol(&r.WorkflowRunID), &r.WorkflowNode, intCol(&r.Slot),
		millisInto{&r.StartedAt})
	if err != nil {
		return err
	}
	r.AdminSettled, r.LateResult = settled == settledByAdmin, settled == settledLate
	return nil
}

// scheduleDelays sets the next fires of the FIX_DELAY jobs whose fires of
// one shard this batch settled (st.delays), in one statement: each once
// nothing of its fire is left.
func (st *settler) scheduleDelays() error {
	if len(st.delayed) == 0 {
		return nil
	}
	rows, err := st.tx.QueryContext(st.ctx, st.d.hot().fixDelayNext, st.delays.Object(), carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY)
	if err != nil {
		return err
	}
	defer rows.Close()
	if rows.Next() {
		st.out.Rescheduled = true
	}
	clear(st.delayed)
	st.delays = jsonRows{}
	return rows.Err()
}

// retryDue is a retry that followUp found due: of run, due at at.
type retryDue struct {
	run int64
	at  time.Time
}

// retryOf returns the run settled as r, read whole (a settle returns
// settledColumns only), as the retry that follows it starts (retryFrom).
func (st *settler) retryOf(r Run) (Run, error) {
	run, err := scanRun(st.tx.QueryRowContext(st.ctx, `SELECT `+runColumns+` FROM runs WHERE id = $1`, r.ID))
	if err != nil {
		return Run{}, err
	}
	return retryFrom(run), nil
}

// storeFollowUps stores the runs that followUp found follow the batch:
// the retries it found due (st.retries), their runs read whole in one
// statement, and the runs of child jobs (st.children), all by the batched
// insert. A burst of failures with retries left retries thousands of runs
// at once, and a read and an insert each (the statements prepared anew
// each time) were most of a settle.
func (st *settler) storeFollowUps() error {
	runs, err := st.retryRuns()
	if err != nil {
		return err
	}
	runs = append(runs, st.children...)
	st.children = st.children[:0]
	if len(runs) == 0 {
		return nil
	}
	if err := st.insert(st.ctx, st.tx, runs); err != nil {
		return err
	}
	st.out.FollowUps = append(st.out.FollowUps, runs...)
	return nil
}

// retryRuns returns the retries of st.retries, each a copy of its run
// read whole (retryFrom), due when followUp found.
func (st *settler) retryRuns() ([]Run, error) {
	if len(st.retries) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(st.retries))
	for i, rd := range st.retries {
		ids[i] = rd.run
	}
	rows, err := st.tx.QueryContext(st.ctx, `SELECT `+runColumns+` FROM runs WHERE id IN (`+st.d.idRows("$1")+`)`, jsonIDs(ids)) //nolint:gosec // a constant SQL fragment
	runs, err := collect(rows, err, scanRun)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]Run, len(runs))
	for _, r := range runs {
		byID[r.ID] = r
	}
	retries := make([]Run, 0, len(st.retries)+len(st.children))
	for _, rd := range st.retries {
		run, ok := byID[rd.run]
		if !ok {
			return nil, fmt.Errorf("store: run %d to retry not found", rd.run)
		}
		retry := retryFrom(run)
		retry.DueAt = rd.at
		retries = append(retries, retry)
	}
	st.retries = st.retries[:0]
	return retries, nil
}

// retryFrom returns the retry that follows run, read whole: a pending
// RETRY run of the next attempt, with the run's handler, params and
// inputs, and nothing of how it ran.
func retryFrom(retry Run) Run {
	retry.ID, retry.Attempt, retry.TriggerType = 0, retry.Attempt+1, carillonv1.TriggerType_TRIGGER_TYPE_RETRY
	retry.Status, retry.Message, retry.ExecutorAddress, retry.TriggerMessage = carillonv1.RunStatus_RUN_STATUS_PENDING, "", "", ""
	retry.TriggeredAt, retry.FinishedAt, retry.StartedAt, retry.AlarmStatus, retry.AlarmMessage = time.Time{}, time.Time{}, time.Time{}, 0, ""
	retry.LateResult, retry.AdminSettled = false, false
	retry.MissedCount, retry.MissedUntil = 0, time.Time{}
	retry.Outputs = nil       // its inputs stay: the same node's
	retry.RenderedParam = nil // a template param renders again, for its attempt
	return retry
}

// nullable is v's value, or nil for null.
func nullable(v sql.NullInt64) any {
	if !v.Valid {
		return nil
	}
	return v.Int64
}

// nullableString is v's value, or nil for null.
func nullableString(v sql.NullString) any {
	if !v.Valid {
		return nil
	}
	return v.String
}

// settle moves running runs to their final status in one statement and
// does what follows each. A run that is not running is left alone.
func (st *settler) settle(results []Result) error {
	if len(results) == 0 {
		return nil
	}
	seen := make(map[int64]bool, len(results))
	unique := make([]Result, 0, len(results))
	for _, res := range results {
		if !seen[res.RunID] {
			seen[res.RunID] = true
			unique = append(unique, res)
		}
	}
	runs, err := st.settleRuns(unique)
	if err != nil {
		return err
	}
	if err := st.noteLater(results, runs); err != nil {
		return err
	}
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.JobID
	}
	if err := st.loadJobs(ids); err != nil {
		return err
	}
	st.out.Runs = slices.Grow(st.out.Runs, len(runs))
	for _, r := range runs {
		if err := st.followUp(r); err != nil {
			return err
		}
	}
	if err := st.storeFollowUps(); err != nil {
		return err
	}
	if err := st.scheduleDelays(); err != nil {
		return err
	}
	if err := st.markAlarms(); err != nil {
		return err
	}
	return st.freeSlots(runs)
}

// NoAlarmMessage is the alarm message of a run that failed for good with
// no one to alarm: its job names no recipient, and the admin none.
const NoAlarmMessage = "no alarm: the job has no alarm e-mail or webhook, and the admin none"

// markAlarms marks the alarms of the runs followUp found alarming
// (st.alarms) PENDING, and records those with no one to alarm
// (st.unalarmed) so, a statement each: a burst of failed dispatches
// alarms thousands of runs at once.
func (st *settler) markAlarms() error {
	if len(st.alarms) > 0 {
		_, err := st.tx.ExecContext(st.ctx, `UPDATE runs SET alarm_status = $1 WHERE id IN (`+st.d.idRows("$2")+`)`, //nolint:gosec // a constant SQL fragment
			carillonv1.AlarmStatus_ALARM_STATUS_PENDING, jsonIDs(st.alarms))
		if err != nil {
			return err
		}
		st.alarms = st.alarms[:0]
	}
	if len(st.unalarmed) > 0 {
		_, err := st.tx.ExecContext(st.ctx, `UPDATE runs SET alarm_message = $1 WHERE id IN (`+st.d.idRows("$2")+`)`, //nolint:gosec // a constant SQL fragment
			NoAlarmMessage, jsonIDs(st.unalarmed))
		if err != nil {
			return err
		}
		st.unalarmed = st.unalarmed[:0]
	}
	return nil
}

// Notes of later results. A result from an executor for a run that an
// earlier result already settled does not change the run's status, but it
// is not dropped either: unless it repeats what the run says (the same
// status, and a message that starts with its own), the run's message gets
// a note of it, once, while the message stays within sqlMaxNoted
// characters. So when two results differ (a forged one came first, or
// the executor changed its mind), the run shows both.
const (
	sqlMaxNoted    = "16384" // characters of a message that takes no more notes
	maxNoteMessage = 200     // characters of the later result's message kept in its note
	// laterNoteSQL appends notes, [run, note, status, message], to the
	// settled runs whose status or message the later result does not
	// repeat.
	laterNoteSQL = `UPDATE runs SET message = runs.message || (n.value->>1) FROM json_each($1) AS n
		WHERE runs.id = n.value->>0 AND runs.status NOT IN (` + sqlRunning + `, ` + sqlPending + `)
		AND (runs.status <> n.value->>2 OR substr(runs.message, 1, length(n.value->>3)) <> n.value->>3)
		AND instr(runs.message, n.value->>1) = 0 AND length(runs.message) + length(n.value->>1) <= ` + sqlMaxNoted
	pgLaterNoteSQL = `WITH n AS (SELECT (e->>0)::bigint AS n_id, e->>1 AS n_note, (e->>2)::bigint AS n_status, e->>3 AS n_msg
			FROM jsonb_array_elements($1::jsonb) AS e)
		UPDATE runs SET message = runs.message || n_note FROM n
		WHERE runs.id = n_id AND runs.status NOT IN (` + sqlRunning + `, ` + sqlPending + `)
		AND (runs.status <> n_status OR left(runs.message, length(n_msg)) <> n_msg)
		AND strpos(runs.message, n_note) = 0 AND length(runs.message) + length(n_note) <= ` + sqlMaxNoted
)

// noteLater notes, in their runs' messages, the results from executors
// among results that settled none of runs (see laterNoteSQL).
func (st *settler) noteLater(results []Result, runs []Run) error {
	if len(runs) == len(results) {
		return nil // every result settled its run
	}
	settled := make(map[int64]bool, len(runs))
	for _, r := range runs {
		settled[r.ID] = true
	}
	var list jsonRows
	n := 0
	for _, res := range results {
		if settled[res.RunID] || res.ByAdmin {
			continue
		}
		settled[res.RunID] = true // of two results for one run, the first counts
		msg := []rune(res.Message)
		if len(msg) > maxNoteMessage {
			msg = append(msg[:maxNoteMessage], '…')
		}
		note := fmt.Sprintf(" [a later result was not applied: %s", strings.TrimPrefix(res.Status.String(), "RUN_STATUS_"))
		if !res.FinishedAt.IsZero() {
			note += " at " + res.FinishedAt.UTC().Format(time.RFC3339Nano)
		}
		if len(msg) > 0 {
			note += ": " + string(msg)
		}
		note += "]"
		list.next().int(res.RunID).str(note).int(int64(res.Status)).str(res.Message)
		n++
	}
	if n == 0 {
		return nil
	}
	_, err := st.tx.ExecContext(st.ctx, st.d.hot().laterNote, list.String())
	return err
}

// fixDelayNextSQL sets the next fires of FIX_DELAY jobs whose fires of
// one shard settled, [next, scheduled at, run] by job ID (jsonRows.key),
// each once nothing of its fire is left running or pending, and returns
// their IDs: of the fire's runs, only its retries, stored after the run
// (id > run), can be; found through runs_job from it on, not through
// runs_scheduled, which the runs of every job created with it share (their
// first fires fall on one instant). $2 is FIX_DELAY. pgFixDelayNextSQL is
// it over PostgreSQL, reading the object by key. fixDelayNextShardsSQL is
// that of one sharded fire, whose other shards were stored with it, before
// or after. TestQueryPlans checks the first's plan.
const (
	fixDelayNextSQL = `UPDATE jobs SET next_fire_at = c.value->>0 FROM json_each($1) AS c
		WHERE jobs.id = CAST(c.key AS INTEGER) AND jobs.enabled = 1 AND jobs.schedule_type = $2 AND jobs.next_fire_at IS NULL
		AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.job_id = jobs.id AND +runs.scheduled_at = c.value->>1
			AND runs.status IN (` + sqlRunning + `, ` + sqlPending + `) AND runs.id > c.value->>2)
		RETURNING jobs.id`
	pgFixDelayNextSQL = `UPDATE jobs SET next_fire_at = ($1::jsonb -> jobs.id::text ->> 0)::bigint
		WHERE jobs.id = ANY(ARRAY(SELECT k::bigint FROM jsonb_object_keys($1::jsonb) AS k))
		AND jobs.enabled = 1 AND jobs.schedule_type = $2 AND jobs.next_fire_at IS NULL
		AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.job_id = jobs.id AND runs.scheduled_at = ($1::jsonb -> jobs.id::text ->> 1)::bigint
			AND runs.status IN (` + sqlRunning + `, ` + sqlPending + `) AND runs.id > ($1::jsonb -> jobs.id::text ->> 2)::bigint)
		RETURNING jobs.id`
	fixDelayNextShardsSQL = `UPDATE jobs SET next_fire_at = $1
		WHERE id = $2 AND enabled = 1 AND schedule_type = $3 AND next_fire_at IS NULL
		AND NOT EXISTS (SELECT 1 FROM runs WHERE job_id = $4 AND scheduled_at = $5 AND status IN ($6, $7))`
)

// dropRetrySQL skips the pending retry of a run whose late result says it
// did not fail. The retry was stored after the run: it is found through
// runs_job from the run on (id > $12), not through runs_scheduled, which
// SQLite picks otherwise and which a minute mark's million runs share
// (the + keeps scheduled_at from its index; runs_fire holds no retries).
// TestQueryPlans checks the plan.
const dropRetrySQL = `UPDATE runs SET status = $1, message = $2, finished_at = $3
	WHERE job_id = $4 AND +scheduled_at = $5 AND shard_index = $6 AND attempt = $7 AND trigger_type = $8 AND status = $9
	AND workflow_run_id = $10 AND workflow_node = $11 AND id > $12`

// followUp carries out what the policy decides follows settling run r.
// A run of a workflow node (r.WorkflowRunID) is the only kind that reads
// more: its workflow run, to hand its final outcome on (nodeSettled).
func (st *settler) followUp(r Run) error {
	ctx, tx, out := st.ctx, st.tx, &st.out
	var node *workflowNode
	if r.WorkflowRunID != 0 {
		var err error
		if node, err = st.workflowNodeOf(r); err != nil {
			return err
		}
	}
	job := st.jobs[r.JobID]
	if job == nil {
		out.Runs = append(out.Runs, r)
		if node != nil { // removed from the workflow, then deleted: its outcome is final
			return st.nodeSettled(node, r, nil)
		}
		return nil // the job was deleted: nothing follows
	}
	d := st.policy.Decide(job.policyJob(), followup.Run{
		Status: r.Status, TriggerType: r.TriggerType, Attempt: r.Attempt, FinishedAt: r.FinishedAt, LateResult: r.LateResult,
		Workflow: r.WorkflowRunID != 0,
	})
	if r.WorkflowRunID != 0 && node == nil {
		d.RetryAt = time.Time{} // its workflow run ended, or the node did (another shard failed)
	}
	var retried *Run
	switch {
	case d.RetryAt.IsZero():
	case node == nil && job.ScheduleType != carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY:
		// Stored with the batch's others (storeFollowUps). A workflow node
		// hands its retry on, and a FIX_DELAY fire's next fire waits for
		// it: theirs are stored at once.
		st.retries = append(st.retries, retryDue{r.ID, d.RetryAt})
	default:
		retry, err := st.retryOf(r)
		if err != nil {
			return err
		}
		retry.DueAt = d.RetryAt
		if err := insertRun(ctx, tx, &retry); err != nil {
			return err
		}
		out.FollowUps = append(out.FollowUps, retry)
		retried = &retry
	}
	if node != nil {
		if err := st.nodeSettled(node, r, retried); err != nil {
			return err
		}
	}
	switch {
	case d.Alarm:
		r.AlarmStatus = carillonv1.AlarmStatus_ALARM_STATUS_PENDING
		st.alarms = append(st.alarms, r.ID) // marked together (markAlarms)
	case d.Unalarmed:
		r.AlarmMessage = NoAlarmMessage
		st.unalarmed = append(st.unalarmed, r.ID) // recorded together (markAlarms)
	}
	if d.DropRetry {
		_, err := tx.ExecContext(ctx, dropRetrySQL,
			carillonv1.RunStatus_RUN_STATUS_SKIPPED, fmt.Sprintf("not retried: run %d reported its result after all", r.ID),
			r.FinishedAt.UnixMilli(), r.JobID, r.ScheduledAt.UnixMilli(), r.ShardIndex, r.Attempt+1,
			carillonv1.TriggerType_TRIGGER_TYPE_RETRY, carillonv1.RunStatus_RUN_STATUS_PENDING, r.WorkflowRunID, r.WorkflowNode, r.ID)
		if err != nil {
			return err
		}
	}
	if d.CancelAlarm {
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET alarm_status = $1 WHERE id = $2 AND alarm_status = $3`,
			carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED, r.ID, carillonv1.AlarmStatus_ALARM_STATUS_PENDING); err != nil {
			return err
		}
	}
	if d.FireChildren {
		if err := st.fireChildren(job, r); err != nil {
			return err
		}
	}
	out.Runs = append(out.Runs, r)
	if d.NextFireAt.IsZero() {
		return nil
	}
	// FIX_DELAY: schedule the next fire once nothing of this fire is left:
	// a fire of one shard with the batch's others (scheduleDelays), the
	// first of the batch for its job, as one at a time would.
	if r.ShardTotal == 1 {
		if !st.delayed[r.JobID] {
			st.delayed[r.JobID] = true
			st.delays.key(r.JobID).int(d.NextFireAt.UnixMilli()).int(r.ScheduledAt.UnixMilli()).int(r.ID)
		}
		return nil
	}
	res, err := tx.ExecContext(ctx, fixDelayNextShardsSQL, d.NextFireAt.UnixMilli(), r.JobID, carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY,
		r.JobID, r.ScheduledAt.UnixMilli(), carillonv1.RunStatus_RUN_STATUS_RUNNING, carillonv1.RunStatus_RUN_STATUS_PENDING) // its other shards may have come before it
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		out.Rescheduled = true
		return err
	}
	return nil
}

// policyJob is what the follow-up policy reads of j.
func (j *JobDefinition) policyJob() followup.Job {
	return followup.Job{
		RetryCount: j.RetryCount, RetryDelaySeconds: j.RetryDelaySeconds, RetryBackoff: j.RetryBackoff,
		AlarmEveryFailure: j.AlarmEveryFailure, Alarmed: j.Alarmed, HasChildren: len(j.ChildJobIDs) > 0,
		ScheduleType: j.ScheduleType, IntervalSeconds: j.IntervalSeconds,
	}
}

// fireChildren makes a pending PARENT run for each child of job once
// every shard of run r's fire has succeeded (any attempt), stored with the
// batch's other follow-ups (storeFollowUps).
func (st *settler) fireChildren(job *JobDefinition, r Run) error {
	ctx, tx := st.ctx, st.tx
	if r.ShardTotal > 1 {
		// Retries keep their fire's scheduled instant, so this counts the
		// shards that succeeded at any attempt. A fire of one shard is
		// done: r succeeded.
		var shardsDone int32
		err := tx.QueryRowContext(ctx, `SELECT count(DISTINCT shard_index) FROM runs
			WHERE job_id = $1 AND scheduled_at = $2 AND status = $3`,
			r.JobID, r.ScheduledAt.UnixMilli(), carillonv1.RunStatus_RUN_STATUS_SUCCEEDED).Scan(&shardsDone)
		if err != nil || shardsDone < r.ShardTotal {
			return err
		}
	}
	key := fireKey{r.JobID, r.ScheduledAt.UnixMilli()}
	if st.parents[key] {
		return nil
	}
	st.parents[key] = true
	if err := st.loadJobs(job.ChildJobIDs); err != nil {
		return err
	}
	for _, id := range job.ChildJobIDs {
		child := st.jobs[id]
		if child == nil {
			continue // deleted since the parent was saved
		}
		st.children = append(st.children, Run{ // stored with the batch's retries (storeFollowUps)
			JobID: child.ID, GroupID: child.GroupID, Handler: child.Handler, Param: child.Param, ShardTotal: 1,
			TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_PARENT, ScheduledAt: r.FinishedAt, DueAt: r.FinishedAt,
			Status:         carillonv1.RunStatus_RUN_STATUS_PENDING,
			TriggerMessage: fmt.Sprintf("child of job %d, run %d", r.JobID, r.ID),
		})
	}
	return nil
}
