package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// RunStore keeps runs: their routes, dispatches, results, and the
// reads of the monitor, the API and the reports (Store.Runs).
type RunStore struct{ *db }

// Run is one execution of a job on one executor (one shard of a fire).
type Run struct {
	ID              int64
	JobID           int64
	GroupID         int64
	ExecutorAddress string
	Handler         string
	Param           string
	ShardIndex      int32
	ShardTotal      int32
	TriggerType     carillonv1.TriggerType
	ScheduledAt     time.Time
	TriggeredAt     time.Time
	TriggerMessage  string
	Status          carillonv1.RunStatus
	Message         string
	FinishedAt      time.Time
	Attempt         int32
	// DueAt is when a pending run is dispatched: ScheduledAt, or for a retry
	// the end of its delay.
	DueAt time.Time
	// TimeoutSeconds is the job's timeout when the run was dispatched.
	TimeoutSeconds int32
	AlarmStatus    carillonv1.AlarmStatus
	AlarmMessage   string
	// MissedCount and MissedUntil describe the record of a misfire: the
	// scheduled instants from ScheduledAt through MissedUntil, MissedCount
	// of them, that it stands for. Zero for other runs.
	MissedCount int64
	MissedUntil time.Time
	// AdminSettled says the admin settled the run without a result from its
	// executor (LOST, TIMED_OUT, or unknown after a restart): a result that
	// comes later replaces the admin's guess.
	AdminSettled bool
	// LateResult says a result from the executor replaced the admin's guess.
	LateResult bool
	// RoutedTo is the executor the run was routed to before its call
	// (RunStore.Route): "" if never routed, so never sent; RouteAnyExecutor if
	// unknown. Read by RunStore.Unsent and RunStore.Adopted only.
	RoutedTo string
	// WorkflowRunID and WorkflowNode name the workflow run and node the
	// run is of (TRIGGER_TYPE_WORKFLOW, and its retries and shards); 0 and
	// "" outside workflows.
	WorkflowRunID int64
	WorkflowNode  string
	// Outputs are what the run's handler published with its result
	// (Result.Outputs); Inputs what the run was given when it was made:
	// the merged outputs of its workflow node's dependencies. Nil when
	// none.
	Outputs map[string]string
	Inputs  map[string]string
	// RenderedParam is the param rendered from Param, the template, for a
	// job whose param is a template (Job.ParamTemplate): what its executor
	// got. Nil until rendered (RenderParams), and for other runs.
	RenderedParam *string
	// Slot says how the run stands with its job's or group's concurrency
	// cap (caps.go): SlotNone for a job with no cap.
	Slot Slot
	// StartedAt is when the handler began on the executor, as it reported
	// with the result; zero when it did not.
	StartedAt time.Time
}

// SentParam is the param r's executor got, or gets when sent: the
// rendered one if r's was rendered.
func (r *Run) SentParam() string {
	if r.RenderedParam != nil {
		return *r.RenderedParam
	}
	return r.Param
}

// Values of runs.admin_settled.
const (
	settledByResult = 0 // the executor's result, or never settled
	settledByAdmin  = 1 // the admin's guess: Run.AdminSettled
	settledLate     = 2 // the admin's guess, replaced by a result: Run.LateResult
)

// runColumns are the columns scanRun reads: dbsqlc's RunByID reads the
// same, in the same order, for Get; the other reads of runs are built at
// run time or on the fire path, with this list.
const runColumns = `id, job_id, group_id, executor_address, handler, param, shard_index, shard_total, trigger_type,
	scheduled_at, triggered_at, trigger_message, status, message, finished_at, attempt, due_at, timeout_seconds,
	alarm_status, alarm_message, missed_count, missed_until, admin_settled, workflow_run_id, workflow_node,
	outputs, inputs, rendered_param, slot, started_at`

// scanRun reads a row of runColumns.
func scanRun(row interface{ Scan(...any) error }) (Run, error) {
	var r dbsqlc.RunByIDRow
	err := row.Scan(&r.ID, &r.JobID, &r.GroupID, &r.ExecutorAddress, &r.Handler, &r.Param, &r.ShardIndex, &r.ShardTotal,
		&r.TriggerType, &r.ScheduledAt, &r.TriggeredAt, &r.TriggerMessage, &r.Status, &r.Message, &r.FinishedAt, &r.Attempt, &r.DueAt,
		&r.TimeoutSeconds, &r.AlarmStatus, &r.AlarmMessage, &r.MissedCount, &r.MissedUntil, &r.AdminSettled, &r.WorkflowRunID, &r.WorkflowNode,
		&r.Outputs, &r.Inputs, &r.RenderedParam, &r.Slot, &r.StartedAt)
	if err != nil {
		return Run{}, err
	}
	return runOf(r)
}

// runOf is the run of a row of runColumns (dbsqlc.RunByID's, or scanRun's).
func runOf(row dbsqlc.RunByIDRow) (Run, error) {
	r := Run{ID: row.ID, JobID: row.JobID, GroupID: row.GroupID, ExecutorAddress: row.ExecutorAddress, Handler: row.Handler,
		Param: row.Param, ShardIndex: row.ShardIndex, ShardTotal: row.ShardTotal, TriggerType: row.TriggerType,
		ScheduledAt: time.UnixMilli(row.ScheduledAt), TriggeredAt: fromMillis(row.TriggeredAt), TriggerMessage: row.TriggerMessage,
		Status: row.Status, Message: row.Message, FinishedAt: fromMillis(row.FinishedAt), Attempt: row.Attempt,
		DueAt: time.UnixMilli(row.DueAt), TimeoutSeconds: row.TimeoutSeconds, AlarmStatus: row.AlarmStatus, AlarmMessage: row.AlarmMessage,
		MissedCount: row.MissedCount, MissedUntil: fromMillis(row.MissedUntil), WorkflowRunID: row.WorkflowRunID,
		WorkflowNode: row.WorkflowNode, RenderedParam: stringOf(row.RenderedParam), Slot: Slot(row.Slot), StartedAt: fromMillis(row.StartedAt)}
	var err error
	if r.Outputs, err = decodeContext(row.Outputs); err != nil {
		return Run{}, fmt.Errorf("run %d: outputs: %w", r.ID, err)
	}
	if r.Inputs, err = decodeContext(row.Inputs); err != nil {
		return Run{}, fmt.Errorf("run %d: inputs: %w", r.ID, err)
	}
	r.AdminSettled, r.LateResult = row.AdminSettled == settledByAdmin, row.AdminSettled == settledLate
	return r, nil
}

// runRows are the row types of dbsqlc's reads of runColumns: RunByID's
// fields, in its order.
type runRows interface {
	dbsqlc.RunByIDRow | dbsqlc.RunsWaitingForSlotRow | dbsqlc.DuePendingRunsOfGroupRow
}

// runsOf are the runs of rows of a dbsqlc read of runColumns; nil for
// none, as collectRuns.
func runsOf[R runRows](rows []R) ([]Run, error) {
	var runs []Run
	for _, row := range rows {
		r, err := runOf(dbsqlc.RunByIDRow(row))
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// runInsertColumns are the columns a new run is stored with: all but id.
var runInsertColumns = strings.TrimPrefix(runColumns, "id, ")

// runInsertArgs is how many values a run is stored with (appendInsertArgs).
const runInsertArgs = 29

// insertRunSQL inserts a run; its arguments are appendInsertArgs'.
var insertRunSQL = insertRunsSQL(rowsOf(1, runInsertArgs))

// insertChunks are the row counts of the prepared multi-row inserts
// (stmts.insertRuns), largest first: insertRuns stores a list of runs in
// chunks of these sizes, one statement each, rather than one statement a
// run (each statement costs its call, binding and step as much as the
// row's own insert).
var insertChunks = [...]int{64, 16, 4, 1}

// insertChunk returns the index in insertChunks of the largest chunk that
// n rows (n > 0) fill.
func insertChunk(n int) int {
	k := 0
	for insertChunks[k] > n {
		k++
	}
	return k
}

// insertRunsSQL inserts runs, one for each row of values (rowsOf's, or
// anonymousRows' on SQLite: hotSQL.insertRuns), of runInsertArgs each,
// RETURNING their IDs.
func insertRunsSQL(values string) string {
	return `INSERT INTO runs (` + runInsertColumns + `) VALUES ` + values + ` RETURNING id` //nolint:gosec // concatenates constant SQL fragments; values are placeholders
}

// appendInsertArgs appends r's values for insertRunsSQL to args. A zero
// DueAt becomes ScheduledAt. The values are driver values (int64, string,
// nil), which database/sql binds as they are: an enum, an int32 or a
// sql.Null* would go through its conversions by reflection, once for each
// of the 29 values of each run a claim stores.
func appendInsertArgs(args []any, r *Run) []any {
	if r.DueAt.IsZero() {
		r.DueAt = r.ScheduledAt
	}
	return append(args, r.JobID, r.GroupID, r.ExecutorAddress, r.Handler, r.Param, int64(r.ShardIndex), int64(r.ShardTotal), int64(r.TriggerType),
		nullable(millis(r.ScheduledAt)), nullable(millis(r.TriggeredAt)), r.TriggerMessage, int64(r.Status), r.Message, nullable(millis(r.FinishedAt)), int64(r.Attempt),
		nullable(millis(r.DueAt)), int64(r.TimeoutSeconds), int64(r.AlarmStatus), r.AlarmMessage, r.MissedCount, nullable(millis(r.MissedUntil)), settledCode(*r), r.WorkflowRunID, r.WorkflowNode,
		nullableString(encodeContext(r.Outputs)), nullableString(encodeContext(r.Inputs)), nullableString(nullString(r.RenderedParam)), int64(r.Slot), nullable(millis(r.StartedAt)))
}

// plainInsertColumns are the columns a plain run (plainRun) is stored
// with, by insertPlainSQL: the others keep their defaults, which are a
// plain run's values. Most runs a scan claims are plain: binding 13
// values each rather than 29 saved about 6 % of the admin's CPU at 5,000
// FIX_RATE fires a second (BENCHMARKS.md, issue 36's eighteenth steps).
const plainInsertColumns = `job_id, group_id, handler, param, shard_index, shard_total, trigger_type,
	scheduled_at, triggered_at, status, attempt, due_at, timeout_seconds`

// plainInsertArgs is how many values a plain run is stored with
// (appendPlainArgs).
var plainInsertArgs = strings.Count(plainInsertColumns, ",") + 1

// insertPlainSQL inserts plain runs (plainRun), one for each row of
// values, of plainInsertArgs each, RETURNING their IDs.
func insertPlainSQL(values string) string {
	return `INSERT INTO runs (` + plainInsertColumns + `) VALUES ` + values + ` RETURNING id` //nolint:gosec // concatenates constant SQL fragments; values are placeholders
}

// plainRun says r is stored whole by insertPlainSQL: every field outside
// plainInsertColumns (but its ID, and RoutedTo, which an insert does not
// store) holds the column's default.
func plainRun(r *Run) bool {
	return r.ExecutorAddress == "" && r.TriggerMessage == "" && r.Message == "" && r.FinishedAt.IsZero() &&
		r.AlarmStatus == 0 && r.AlarmMessage == "" && r.MissedCount == 0 && r.MissedUntil.IsZero() &&
		!r.AdminSettled && !r.LateResult && r.WorkflowRunID == 0 && r.WorkflowNode == "" &&
		len(r.Outputs) == 0 && len(r.Inputs) == 0 && r.RenderedParam == nil && r.Slot == 0 && r.StartedAt.IsZero()
}

// appendPlainArgs appends a plain run's values for insertPlainSQL to
// args, as appendInsertArgs does.
func appendPlainArgs(args []any, r *Run) []any {
	if r.DueAt.IsZero() {
		r.DueAt = r.ScheduledAt
	}
	return append(args, r.JobID, r.GroupID, r.Handler, r.Param, int64(r.ShardIndex), int64(r.ShardTotal), int64(r.TriggerType),
		nullable(millis(r.ScheduledAt)), nullable(millis(r.TriggeredAt)), int64(r.Status), int64(r.Attempt), nullable(millis(r.DueAt)), int64(r.TimeoutSeconds))
}

// settledCode is r's runs.admin_settled value.
func settledCode(r Run) int64 {
	switch {
	case r.LateResult:
		return settledLate
	case r.AdminSettled:
		return settledByAdmin
	}
	return settledByResult
}

// insertRun stores r and sets its ID.
func insertRun(ctx context.Context, tx *sql.Tx, r *Run) error {
	return tx.QueryRowContext(ctx, insertRunSQL, appendInsertArgs(nil, r)...).Scan(&r.ID)
}

// insertRuns stores runs in tx with the prepared multi-row inserts (one
// JSON list statement where the dialect has it: insertRunList; those of
// plain runs, insertPlainSQL, for a chunk of plain runs where it has
// them) and sets their IDs. The rows of one INSERT are numbered in the
// order of its VALUES or list (SQLite's AUTOINCREMENT, PostgreSQL's
// identity sequence, each counting up as it stores them), which is how the
// IDs it returns, in no promised order, are matched to the runs: sorted
// (setIDs).
func (s *db) insertRuns(ctx context.Context, tx *sql.Tx, runs []Run) error {
	if s.q.insertList != nil {
		return s.insertRunList(ctx, tx, runs)
	}
	args := make([]any, 0, min(len(runs), insertChunks[0])*runInsertArgs)
	for len(runs) > 0 {
		k := insertChunk(len(runs))
		chunk := runs[:insertChunks[k]]
		runs = runs[len(chunk):]
		args = args[:0]
		stmt := s.q.insertPlain[k]
		for i := range chunk {
			if stmt != nil && !plainRun(&chunk[i]) {
				stmt = nil
			}
		}
		for i := range chunk {
			if stmt != nil {
				args = appendPlainArgs(args, &chunk[i])
			} else {
				args = appendInsertArgs(args, &chunk[i])
			}
		}
		if stmt == nil {
			stmt = s.q.insertRuns[k]
		}
		ids, err := collectColumn[int64](tx.StmtContext(ctx, stmt).QueryContext(ctx, args...)) //nolint:sqlclosecheck // a transaction's statement closes with the transaction
		if err != nil {
			return err
		}
		if err := setIDs(chunk, ids); err != nil {
			return err
		}
	}
	return nil
}

// setIDs gives runs the IDs an insert of them returned, in no promised
// order: sorted, as the rows were numbered in order.
func setIDs(runs []Run, ids []int64) error {
	if len(ids) != len(runs) {
		return fmt.Errorf("stored %d runs, want %d", len(ids), len(runs))
	}
	slices.Sort(ids)
	for i := range runs {
		runs[i].ID = ids[i]
	}
	return nil
}

// insertRunList is insertRuns in one statement taking the runs as a JSON
// list (hotSQL.insertRunList).
func (s *db) insertRunList(ctx context.Context, tx *sql.Tx, runs []Run) error {
	if len(runs) == 0 {
		return nil
	}
	var list jsonRows
	args := make([]any, 0, runInsertArgs)
	for i := range runs {
		list.next()
		for _, v := range appendInsertArgs(args[:0], &runs[i]) {
			if err := list.value(v); err != nil {
				return err
			}
		}
	}
	ids, err := collectColumn[int64](tx.StmtContext(ctx, s.q.insertList).QueryContext(ctx, list.String())) //nolint:sqlclosecheck // a transaction's statement closes with the transaction
	if err != nil {
		return err
	}
	return setIDs(runs, ids)
}

// Insert stores new runs and returns them with their IDs.
func (s RunStore) Insert(ctx context.Context, runs []Run) ([]Run, error) {
	err := s.writeLeased(ctx, func(tx *sql.Tx) error { return s.insertRuns(ctx, tx, runs) })
	if err != nil {
		return nil, fmt.Errorf("store: insert runs: %w", err)
	}
	return runs, nil
}

// Get returns the run with the given ID.
func (s RunStore) Get(ctx context.Context, id int64) (Run, error) {
	row, err := dbsqlc.New(s.reader(ctx)).RunByID(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("%w: run %d", ErrNotFound, id)
	}
	if err != nil {
		return Run{}, fmt.Errorf("store: run %d: %w", id, err)
	}
	r, err := runOf(row)
	if err != nil {
		return Run{}, fmt.Errorf("store: run %d: %w", id, err)
	}
	return r, nil
}

// RunFilter selects runs for Runs. Zero fields select everything.
type RunFilter struct {
	JobID   int64
	GroupID int64
	Status  carillonv1.RunStatus
	// From and To bound the scheduled instant: From <= scheduled_at < To.
	From, To time.Time
	// BeforeID pages: only runs with a smaller ID.
	BeforeID int64
	Limit    int
	// Now, when set, makes Status mean what the API shows (Waiting): a
	// run claimed for an instant after Now and not recorded as sent is
	// PENDING, not RUNNING.
	Now time.Time
}

// Waiting says whether r, as stored at now, is a run claimed for a later
// instant and not recorded as sent: RUNNING in the table (claimed, so no
// other scan claims it), but not running, nor sent as far as anyone can
// tell. The API shows it PENDING, due at its instant.
func (r *Run) Waiting(now time.Time) bool {
	return r.Status == carillonv1.RunStatus_RUN_STATUS_RUNNING && r.ExecutorAddress == "" && r.TriggeredAt.After(now)
}

// List returns the runs f selects, newest (largest ID) first.
func (s RunStore) List(ctx context.Context, f RunFilter) ([]Run, error) {
	var where []string
	var a args
	if f.BeforeID > 0 {
		where = append(where, "id < "+a.add(f.BeforeID))
	}
	if f.JobID != 0 {
		where = append(where, "job_id = "+a.add(f.JobID))
	}
	if f.GroupID != 0 {
		where = append(where, "group_id = "+a.add(f.GroupID))
	}
	switch {
	case f.Status == carillonv1.RunStatus_RUN_STATUS_UNSPECIFIED:
	case f.Now.IsZero():
		where = append(where, "status = "+a.add(f.Status))
	case f.Status == carillonv1.RunStatus_RUN_STATUS_RUNNING:
		where = append(where, "status = "+a.add(f.Status)+" AND NOT (executor_address = '' AND triggered_at > "+a.add(f.Now.UnixMilli())+")")
	case f.Status == carillonv1.RunStatus_RUN_STATUS_PENDING:
		where = append(where, "(status = "+a.add(f.Status)+" OR (status = "+sqlRunning+" AND executor_address = '' AND triggered_at > "+a.add(f.Now.UnixMilli())+"))")
	default:
		where = append(where, "status = "+a.add(f.Status))
	}
	if !f.From.IsZero() {
		where = append(where, "scheduled_at >= "+a.add(f.From.UnixMilli()))
	}
	if !f.To.IsZero() {
		where = append(where, "scheduled_at < "+a.add(f.To.UnixMilli()))
	}
	q := `SELECT ` + runColumns + ` FROM runs`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	return s.queryRuns(ctx, q+` ORDER BY id DESC LIMIT `+a.add(cmpLimit(f.Limit)), a...)
}

// Last returns the newest run of each of jobIDs that has one, by job
// id; of groupID's runs only, unless it is 0 (a job may have moved between
// groups).
func (s RunStore) Last(ctx context.Context, jobIDs []int64, groupID int64) (map[int64]Run, error) {
	out := make(map[int64]Run, len(jobIDs))
	if len(jobIDs) == 0 {
		return out, nil
	}
	var a args
	q := `SELECT ` + runColumns + ` FROM runs WHERE id IN (SELECT max(id) FROM runs WHERE job_id IN (` + addList(&a, jobIDs) + `)` //nolint:gosec // constant SQL fragments; values are placeholders
	if groupID != 0 {
		q += ` AND group_id = ` + a.add(groupID)
	}
	rs, err := s.queryRuns(ctx, q+` GROUP BY job_id)`, a...)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		out[r.JobID] = r
	}
	return out, nil
}

func (s *db) queryRuns(ctx context.Context, q string, args ...any) ([]Run, error) {
	rs, err := collectRuns(s.reader(ctx).QueryContext(ctx, q, args...))
	if err != nil {
		return nil, fmt.Errorf("store: runs: %w", err)
	}
	return rs, nil
}

// SetShardTotals sets the shard total of runs that became shard 0 of a
// broadcast, before any of its shards is sent: a result can arrive before
// the dispatch is recorded, and settling it must know how many shards the
// fire has (children fire once all of them succeeded).
func (s RunStore) SetShardTotals(ctx context.Context, totals map[int64]int32) error {
	var list jsonRows
	for id, n := range totals {
		list.next().int(id).int(int64(n))
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.StmtContext(ctx, s.q.shardTotals).ExecContext(ctx, list.String()) //nolint:sqlclosecheck // a transaction's statement closes with the transaction
		return err
	})
	if err != nil {
		return fmt.Errorf("store: set shard totals: %w", err)
	}
	return nil
}
