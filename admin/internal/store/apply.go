package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
)

// ErrDryRun ends an Apply whose plan was made only to be shown: every
// write of it is rolled back. Apply returns nil for it.
var ErrDryRun = errors.New("store: dry run")

// ApplyTx is the write transaction of one Apply (`carillon apply`): its
// reads see its own writes, and its writes commit together or not at
// all. Its times are truncated to the millisecond the database keeps.
type ApplyTx struct {
	s   *Store
	ctx context.Context
	tx  *sql.Tx
	now time.Time
	// after runs once the transaction committed: the marks and cache
	// notices of the writes (UpdateJob's, DeleteJob's).
	after []func()
}

// Apply runs fn in one write transaction made at now and commits what it
// wrote if it returns nil; any error rolls everything back. fn returning
// ErrDryRun rolls back too, and Apply returns nil. Store errors keep their
// kinds (ErrAlreadyExists, ErrNotFound, ErrInUse, ...).
func (s *Store) Apply(ctx context.Context, now time.Time, fn func(*ApplyTx) error) error {
	a := &ApplyTx{s: s, ctx: ctx, now: now.Truncate(time.Millisecond)}
	err := s.write(ctx, func(tx *sql.Tx) error {
		a.tx = tx
		return fn(a)
	})
	if errors.Is(err, ErrDryRun) {
		return nil
	}
	if err != nil {
		return err
	}
	s.routing.Add(1) // groups may have changed
	s.jobs.changed()
	for _, f := range a.after {
		f()
	}
	return nil
}

// Now is the transaction's time, to the millisecond.
func (a *ApplyTx) Now() time.Time { return a.now }

// Groups returns every group, ordered by app name.
func (a *ApplyTx) Groups() ([]Group, error) {
	rows, err := dbsqlc.New(a.tx).Groups(a.ctx)
	if err != nil {
		return nil, err
	}
	return groupsOf(rows), nil
}

// Calendars returns every calendar, ordered by ID.
func (a *ApplyTx) Calendars() ([]Calendar, error) {
	rows, err := dbsqlc.New(a.tx).AllCalendars(a.ctx)
	if err != nil {
		return nil, err
	}
	var cs []Calendar
	for _, r := range rows {
		c, err := calendarOf(r)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// JobsOf returns the jobs of group groupID, ordered by ID. Its statement
// and Job's stay by hand: they read jobColumns, whose children's
// string_agg(... ORDER BY) is beyond sqlc's SQLite parser.
func (a *ApplyTx) JobsOf(groupID int64) ([]Job, error) {
	rows, err := a.tx.QueryContext(a.ctx, `SELECT `+jobColumns+` FROM jobs WHERE group_id = $1 ORDER BY id`, groupID)
	return collect(rows, err, scanJob)
}

// Job returns the job with the given ID; ErrNotFound if there is none.
func (a *ApplyTx) Job(id int64) (Job, error) {
	j, err := scanJob(a.tx.QueryRowContext(a.ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, fmt.Errorf("%w: job %d", ErrNotFound, id)
	}
	return j, err
}

// CreateGroup stores g and returns it with its ID.
func (a *ApplyTx) CreateGroup(g Group) (Group, error) {
	g.CreatedAt, g.UpdatedAt = a.now, a.now
	var err error
	g.ID, err = insertGroup(a.ctx, a.tx, g)
	return g, err
}

// UpdateGroup replaces the stored group with ID g.ID, as
// GroupStore.Update does.
func (a *ApplyTx) UpdateGroup(g Group) (Group, error) {
	g.UpdatedAt = a.now
	return g, updateGroup(a.ctx, a.tx, g)
}

// CreateCalendar stores c and returns it with its ID.
func (a *ApplyTx) CreateCalendar(c Calendar) (Calendar, error) {
	c.CreatedAt, c.UpdatedAt = a.now, a.now
	return c, calendarErr("create", c, insertCalendar(a.ctx, a.tx, &c))
}

// UpdateCalendar replaces the calendar with ID c.ID, as
// CalendarStore.Update does: next gives each started job using it its
// next fire.
func (a *ApplyTx) UpdateCalendar(c Calendar, next func(Job) (time.Time, error)) (Calendar, error) {
	_, err := updateCalendar(a.ctx, a.tx, &c, a.now, next)
	return c, calendarErr("update", c, err)
}

// CreateJob stores j (the caller sets NextFireAt for an enabled job) and
// returns it with its ID.
func (a *ApplyTx) CreateJob(j Job) (Job, error) {
	j.CreatedAt, j.UpdatedAt = a.now, a.now
	return j, insertJob(a.ctx, a.tx, &j)
}

// UpdateJob replaces the stored job with ID j.ID, as JobStore.Update
// does (Enabled is kept: see SetJobEnabled).
func (a *ApplyTx) UpdateJob(j Job, scheduleChanged bool) (Job, error) {
	replace, err := updateJob(a.ctx, a.tx, &j, scheduleChanged, a.now)
	if err == nil && replace {
		a.after = append(a.after, func() { a.s.stops.markUpdate(j.ID) })
	}
	return j, err
}

// SetJobEnabled starts job id with next as its first fire, or stops it,
// as StartJob and StopJob do.
func (a *ApplyTx) SetJobEnabled(id int64, enabled bool, next time.Time) error {
	if enabled {
		return startJob(a.ctx, a.tx, id, next, a.now)
	}
	a.after = append(a.after, func() { a.s.stops.mark(id) })
	return stopJob(a.ctx, a.tx, id, a.now)
}

// DeleteJob removes job id as JobStore.Delete does. Jobs deleted together
// should first drop each other from their child lists (SetChildJobs).
func (a *ApplyTx) DeleteJob(id int64) error {
	a.after = append(a.after, func() { a.s.stops.mark(id) })
	return deleteJob(a.ctx, a.tx, id)
}

// SetChildJobs sets the child jobs of job id alone, leaving updated_at:
// for a job created or deleted in the same transaction.
func (a *ApplyTx) SetChildJobs(id int64, children []int64) error {
	return setChildren(a.ctx, a.tx, id, children)
}

// WorkflowsOf returns the workflows of group groupID with their nodes,
// ordered by ID.
func (a *ApplyTx) WorkflowsOf(groupID int64) ([]Workflow, error) {
	rows, err := dbsqlc.New(a.tx).WorkflowsOfGroup(a.ctx, groupID)
	if err != nil {
		return nil, err
	}
	var ws []Workflow
	for _, r := range rows {
		w := workflowOf(dbsqlc.WorkflowByIDRow(r))
		if w.Nodes, err = workflowNodes(a.ctx, a.tx, w.ID); err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// CreateWorkflow stores w and its nodes (the caller sets NextFireAt for
// an enabled workflow) and returns it with its ID.
func (a *ApplyTx) CreateWorkflow(w Workflow) (Workflow, error) {
	w.CreatedAt, w.UpdatedAt = a.now, a.now
	return w, workflowErr("create workflow", w, insertWorkflow(a.ctx, a.tx, &w))
}

// UpdateWorkflow replaces workflow w.ID's definition and nodes, as
// WorkflowStore.Update does (Enabled is kept: see SetWorkflowEnabled).
func (a *ApplyTx) UpdateWorkflow(w Workflow, scheduleChanged bool) (Workflow, error) {
	return w, workflowErr("update workflow", w, updateWorkflow(a.ctx, a.tx, &w, scheduleChanged, a.now, a.s.d.forUpdate()))
}

// SetWorkflowEnabled starts workflow id with next as its first instant,
// or stops it, as StartWorkflow and StopWorkflow do.
func (a *ApplyTx) SetWorkflowEnabled(id int64, enabled bool, next time.Time) error {
	q := dbsqlc.New(a.tx)
	if enabled {
		return q.StartWorkflow(a.ctx, dbsqlc.StartWorkflowParams{NextFireAt: millis(next), UpdatedAt: a.now.UnixMilli(), ID: id})
	}
	return q.StopWorkflow(a.ctx, dbsqlc.StopWorkflowParams{UpdatedAt: a.now.UnixMilli(), ID: id})
}

// DeleteWorkflow removes workflow id as WorkflowStore.Delete does.
func (a *ApplyTx) DeleteWorkflow(id int64) error {
	return deleteWorkflow(a.ctx, a.tx, id)
}

// Audit appends e to the audit log in the transaction: it commits with
// the change it records.
func (a *ApplyTx) Audit(e AuditEntry) error {
	_, err := insertAudit(a.ctx, a.tx, e)
	return err
}
