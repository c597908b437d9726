package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// WorkflowStore keeps workflows and their runs (Store.Workflows).
type WorkflowStore struct{ *db }

// Workflow is a DAG of jobs (WorkflowService). The store keeps what it is
// given: the server checks that its nodes form a DAG (package workflow).
type Workflow struct {
	ID              int64
	GroupID         int64
	Name            string
	Description     string
	ScheduleType    carillonv1.ScheduleType
	Cron            string
	IntervalSeconds int32
	TimeZone        string
	MisfireStrategy carillonv1.MisfireStrategy
	BlockStrategy   carillonv1.BlockStrategy
	Enabled         bool
	// LastFireAt is the scheduled instant of the latest scheduled workflow
	// run.
	LastFireAt time.Time
	// NextFireAt is the next scheduled instant; zero when nothing is
	// scheduled.
	NextFireAt time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
	Nodes      []WorkflowNode
	// AlarmEmails and AlarmWebhookURL are where the alarm of a workflow
	// run that ends FAILED goes, besides the admin's own channels.
	AlarmEmails     []string
	AlarmWebhookURL string
}

// WorkflowNode is one job of a workflow.
type WorkflowNode struct {
	Key       string
	JobID     int64
	DependsOn []string
	// Param, if not nil, replaces the job's param.
	Param *string
}

const workflowColumns = `id, group_id, name, description, schedule_type, cron, interval_seconds, time_zone,
	misfire_strategy, block_strategy, enabled, last_fire_at, next_fire_at, created_at, updated_at, alarm_emails, alarm_webhook_url`

func scanWorkflow(row interface{ Scan(...any) error }) (Workflow, error) {
	var w Workflow
	var last, next, created, updated sql.NullInt64
	var emails string
	err := row.Scan(&w.ID, &w.GroupID, &w.Name, &w.Description, &w.ScheduleType, &w.Cron, &w.IntervalSeconds, &w.TimeZone,
		&w.MisfireStrategy, &w.BlockStrategy, &w.Enabled, &last, &next, &created, &updated, &emails, &w.AlarmWebhookURL)
	if err != nil {
		return Workflow{}, err
	}
	w.AlarmEmails = splitLines(emails)
	w.LastFireAt, w.NextFireAt, w.CreatedAt, w.UpdatedAt = fromMillis(last), fromMillis(next), fromMillis(created), fromMillis(updated)
	return w, nil
}

// workflowOf is the workflow of a row of dbsqlc.WorkflowByID, without
// its nodes.
func workflowOf(r dbsqlc.WorkflowByIDRow) Workflow {
	return Workflow{ID: r.ID, GroupID: r.GroupID, Name: r.Name, Description: r.Description, ScheduleType: r.ScheduleType, Cron: r.Cron,
		IntervalSeconds: r.IntervalSeconds, TimeZone: r.TimeZone, MisfireStrategy: r.MisfireStrategy, BlockStrategy: r.BlockStrategy,
		Enabled: r.Enabled, LastFireAt: fromMillis(r.LastFireAt), NextFireAt: fromMillis(r.NextFireAt),
		CreatedAt: time.UnixMilli(r.CreatedAt), UpdatedAt: time.UnixMilli(r.UpdatedAt),
		AlarmEmails: splitLines(r.AlarmEmails), AlarmWebhookURL: r.AlarmWebhookUrl}
}

// nullString is p as a nullable column.
func nullString(p *string) sql.NullString {
	if p == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: *p, Valid: true}
}

// stringOf is a nullable column as a pointer.
func stringOf(ns sql.NullString) *string {
	if !ns.Valid {
		return nil
	}
	return &ns.String
}

// Create stores w and its nodes and returns it with its ID. The
// caller sets NextFireAt for an enabled workflow. A missing group is
// ErrGroupNotFound, a missing job ErrNotFound naming it, a name taken in
// the group ErrAlreadyExists.
func (s WorkflowStore) Create(ctx context.Context, w Workflow, now time.Time) (Workflow, error) {
	now = now.Truncate(time.Millisecond)
	w.CreatedAt, w.UpdatedAt = now, now
	err := s.write(ctx, func(tx *sql.Tx) error {
		return insertWorkflow(ctx, tx, &w)
	})
	if err != nil {
		return Workflow{}, workflowErr("create workflow", w, err)
	}
	return w, nil
}

// insertWorkflow is WorkflowStore.Create in tx: it sets w.ID.
func insertWorkflow(ctx context.Context, tx *sql.Tx, w *Workflow) error {
	if err := checkWorkflowRefs(ctx, tx, *w); err != nil {
		return err
	}
	id, err := dbsqlc.New(tx).InsertWorkflow(ctx, dbsqlc.InsertWorkflowParams{GroupID: w.GroupID, Name: w.Name, Description: w.Description,
		ScheduleType: w.ScheduleType, Cron: w.Cron, IntervalSeconds: w.IntervalSeconds, TimeZone: w.TimeZone,
		MisfireStrategy: w.MisfireStrategy, BlockStrategy: w.BlockStrategy, Enabled: boolInt(w.Enabled),
		LastFireAt: millis(w.LastFireAt), NextFireAt: millis(w.NextFireAt), CreatedAt: w.CreatedAt.UnixMilli(), UpdatedAt: w.UpdatedAt.UnixMilli(),
		AlarmEmails: joinLines(w.AlarmEmails), AlarmWebhookUrl: w.AlarmWebhookURL})
	if err != nil {
		return err
	}
	w.ID = id
	return insertNodes(ctx, tx, *w)
}

// checkWorkflowRefs checks that w's group and its nodes' jobs exist.
func checkWorkflowRefs(ctx context.Context, tx *sql.Tx, w Workflow) error {
	if err := groupExists(ctx, tx, w.GroupID); err != nil {
		return err
	}
	for i, n := range w.Nodes {
		if err := jobExists(ctx, tx, n.JobID); err != nil {
			return fmt.Errorf("%w (nodes[%d], %q)", err, i, n.Key)
		}
	}
	return nil
}

// insertNodes stores w's nodes.
func insertNodes(ctx context.Context, tx *sql.Tx, w Workflow) error {
	q := dbsqlc.New(tx)
	for i, n := range w.Nodes {
		err := q.InsertWorkflowNode(ctx, dbsqlc.InsertWorkflowNodeParams{WorkflowID: w.ID, Position: int64(i), NodeKey: n.Key, JobID: n.JobID,
			DependsOn: joinLines(n.DependsOn), Param: nullString(n.Param)})
		if err != nil {
			return err
		}
	}
	return nil
}

// workflowErr wraps err of a write of w, keeping the errors callers
// match.
func workflowErr(verb string, w Workflow, err error) error {
	switch {
	case err == nil:
		return nil
	case isUniqueViolation(err):
		return fmt.Errorf("%w: a workflow named %q in group %d", ErrAlreadyExists, w.Name, w.GroupID)
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrGroupNotFound), errors.Is(err, ErrInUse):
		return err
	}
	return fmt.Errorf("store: %s %d: %w", verb, w.ID, err)
}

// Get returns the workflow with the given ID, with its nodes.
func (s WorkflowStore) Get(ctx context.Context, id int64) (Workflow, error) {
	db := s.reader(ctx)
	r, err := dbsqlc.New(db).WorkflowByID(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Workflow{}, fmt.Errorf("%w: workflow %d", ErrNotFound, id)
	}
	if err != nil {
		return Workflow{}, fmt.Errorf("store: workflows: %w", err)
	}
	w := workflowOf(r)
	if w.Nodes, err = workflowNodes(ctx, db, id); err != nil {
		return Workflow{}, fmt.Errorf("store: workflow %d: %w", id, err)
	}
	return w, nil
}

// WorkflowFilter selects workflows for Workflows. Zero fields select
// everything.
type WorkflowFilter struct {
	ID      int64
	GroupID int64
	// AfterID pages: only workflows with a larger ID.
	AfterID int64
	Limit   int
}

// List returns the workflows f selects, with their nodes, by ID.
func (s WorkflowStore) List(ctx context.Context, f WorkflowFilter) ([]Workflow, error) {
	a := args{f.AfterID}
	q := `SELECT ` + workflowColumns + ` FROM workflows WHERE id > $1`
	if f.ID != 0 {
		q += ` AND id = ` + a.add(f.ID)
	}
	if f.GroupID != 0 {
		q += ` AND group_id = ` + a.add(f.GroupID)
	}
	db := s.reader(ctx)
	rows, err := db.QueryContext(ctx, q+` ORDER BY id LIMIT `+a.add(cmpLimit(f.Limit)), a...)
	ws, err := collect(rows, err, scanWorkflow)
	if err != nil {
		return nil, fmt.Errorf("store: workflows: %w", err)
	}
	for i := range ws {
		if ws[i].Nodes, err = workflowNodes(ctx, db, ws[i].ID); err != nil {
			return nil, fmt.Errorf("store: workflow %d: %w", ws[i].ID, err)
		}
	}
	return ws, nil
}

// workflowNodes reads workflow id's nodes in their order, over a *sql.DB
// or a *sql.Tx.
func workflowNodes(ctx context.Context, db dbsqlc.DBTX, id int64) ([]WorkflowNode, error) {
	rows, err := dbsqlc.New(db).WorkflowNodes(ctx, id)
	if err != nil {
		return nil, err
	}
	var ns []WorkflowNode
	for _, r := range rows {
		ns = append(ns, WorkflowNode{Key: r.NodeKey, JobID: r.JobID, DependsOn: splitLines(r.DependsOn), Param: stringOf(r.Param)})
	}
	return ns, nil
}

// Update replaces workflow w.ID's definition and nodes. Its
// enabled state, times of creation and last fire are kept; its next fire
// is w.NextFireAt when scheduleChanged, else kept (nil when stopped).
// Workflow runs already made keep their nodes.
func (s WorkflowStore) Update(ctx context.Context, w Workflow, scheduleChanged bool, now time.Time) (Workflow, error) {
	now = now.Truncate(time.Millisecond)
	err := s.write(ctx, func(tx *sql.Tx) error {
		return updateWorkflow(ctx, tx, &w, scheduleChanged, now, s.d.forUpdate())
	})
	if err != nil {
		return Workflow{}, workflowErr("update workflow", w, err)
	}
	return w, nil
}

// updateWorkflow is WorkflowStore.Update in tx, now truncated to the
// millisecond, the old row read with lock (forUpdate): it completes w as
// stored.
func updateWorkflow(ctx context.Context, tx *sql.Tx, w *Workflow, scheduleChanged bool, now time.Time, lock string) error {
	old, err := scanWorkflow(tx.QueryRowContext(ctx, `SELECT `+workflowColumns+` FROM workflows WHERE id = $1`+lock, w.ID))
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: workflow %d", ErrNotFound, w.ID)
	}
	if err != nil {
		return err
	}
	if err := checkWorkflowRefs(ctx, tx, *w); err != nil {
		return err
	}
	w.CreatedAt, w.LastFireAt, w.Enabled, w.UpdatedAt = old.CreatedAt, old.LastFireAt, old.Enabled, now
	switch {
	case !w.Enabled:
		w.NextFireAt = time.Time{}
	case !scheduleChanged:
		w.NextFireAt = old.NextFireAt
	}
	q := dbsqlc.New(tx)
	err = q.UpdateWorkflow(ctx, dbsqlc.UpdateWorkflowParams{GroupID: w.GroupID, Name: w.Name, Description: w.Description,
		ScheduleType: w.ScheduleType, Cron: w.Cron, IntervalSeconds: w.IntervalSeconds, TimeZone: w.TimeZone,
		MisfireStrategy: w.MisfireStrategy, BlockStrategy: w.BlockStrategy, Enabled: boolInt(w.Enabled),
		LastFireAt: millis(w.LastFireAt), NextFireAt: millis(w.NextFireAt), CreatedAt: w.CreatedAt.UnixMilli(), UpdatedAt: w.UpdatedAt.UnixMilli(),
		AlarmEmails: joinLines(w.AlarmEmails), AlarmWebhookUrl: w.AlarmWebhookURL, ID: w.ID})
	if err != nil {
		return err
	}
	if err := q.DeleteWorkflowNodes(ctx, w.ID); err != nil {
		return err
	}
	return insertNodes(ctx, tx, *w)
}

// Start turns workflow id's schedule on with next as its first
// instant (zero when the schedule has none). Starting a started workflow
// changes nothing.
func (s WorkflowStore) Start(ctx context.Context, id int64, next, now time.Time) (Workflow, error) {
	return s.switchWorkflow(ctx, id, func(q *dbsqlc.Queries) error {
		return q.StartWorkflow(ctx, dbsqlc.StartWorkflowParams{NextFireAt: millis(next), UpdatedAt: now.UnixMilli(), ID: id})
	})
}

// Stop turns workflow id's schedule off: once it returns, the
// schedule makes no workflow run. Workflow runs made go on.
func (s WorkflowStore) Stop(ctx context.Context, id int64, now time.Time) (Workflow, error) {
	return s.switchWorkflow(ctx, id, func(q *dbsqlc.Queries) error {
		return q.StopWorkflow(ctx, dbsqlc.StopWorkflowParams{UpdatedAt: now.UnixMilli(), ID: id})
	})
}

// switchWorkflow runs sw, which switches workflow id's schedule, in a
// write transaction, and returns the workflow as it then is; a missing
// workflow is ErrNotFound.
func (s *db) switchWorkflow(ctx context.Context, id int64, sw func(q *dbsqlc.Queries) error) (Workflow, error) {
	err := s.write(ctx, func(tx *sql.Tx) error {
		q := dbsqlc.New(tx)
		if err := sw(q); err != nil {
			return err
		}
		if n, err := q.WorkflowCount(ctx, id); err != nil || n > 0 {
			return err
		}
		return fmt.Errorf("%w: workflow %d", ErrNotFound, id)
	})
	if err != nil {
		return Workflow{}, workflowErr("switch workflow", Workflow{ID: id}, err)
	}
	return WorkflowStore{s}.Get(ctx, id)
}

// Delete removes a workflow with its workflow runs. The runs of
// its nodes are kept, as ordinary runs: those still running end as they
// do, with nothing following them.
func (s WorkflowStore) Delete(ctx context.Context, id int64) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		return deleteWorkflow(ctx, tx, id)
	})
	return workflowErr("delete workflow", Workflow{ID: id}, err)
}

// deleteWorkflow is WorkflowStore.Delete in tx.
func deleteWorkflow(ctx context.Context, tx *sql.Tx, id int64) error {
	res, err := dbsqlc.New(tx).DeleteWorkflow(ctx, id)
	if err != nil {
		return err
	}
	return mustAffect(res, "workflow", id)
}

// notInWorkflow refuses (ErrInUse) to delete job id while workflows have
// it as a node, naming them.
func notInWorkflow(ctx context.Context, tx *sql.Tx, id int64) error {
	ws, err := dbsqlc.New(tx).WorkflowsOfJob(ctx, id)
	if err != nil {
		return err
	}
	var names []string
	for _, w := range ws {
		names = append(names, fmt.Sprintf("%d (%q)", w.ID, w.Name))
	}
	if len(names) > 0 {
		return fmt.Errorf("%w: job %d is a node of workflow %s: remove it from their nodes first", ErrInUse, id, strings.Join(names, ", workflow "))
	}
	return nil
}

// collect scans every row of a query with scan, as collectRuns does
// runs.
func collect[T any](rows *sql.Rows, err error, scan func(row interface{ Scan(...any) error }) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
