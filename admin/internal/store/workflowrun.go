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

// ErrWorkflowRunState is returned when a workflow run is not in a state
// that allows the change asked (a retry of a running workflow run, a
// cancel of one that ended).
var ErrWorkflowRunState = errors.New("store: the workflow run's status does not allow it")

// WorkflowRun is one run of a workflow: its nodes as they were when it was
// made, each with its state. Each node's runs are ordinary runs
// (Run.WorkflowRunID).
type WorkflowRun struct {
	ID          int64
	WorkflowID  int64
	Status      carillonv1.WorkflowRunStatus
	ScheduledAt time.Time
	TriggerType carillonv1.TriggerType
	// Param, if not nil, replaces every node's param.
	Param      *string
	Message    string
	Attempt    int32
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	// AlarmStatus is PENDING once the workflow run ended FAILED, until the
	// alarm sender records its delivery (AlarmMessage says how it went).
	AlarmStatus  carillonv1.AlarmStatus
	AlarmMessage string
	// Nodes are read by WorkflowRun, not by WorkflowRuns.
	Nodes []WorkflowNodeRun
}

// WorkflowNodeRun is the state of one node in a workflow run.
type WorkflowNodeRun struct {
	WorkflowNode
	// Status is PENDING while the node waits for its dependencies (RunID
	// 0), RUNNING once started (its run pending, running or retried), then
	// its final run's status, or SKIPPED (Message says why).
	Status carillonv1.RunStatus
	// RunID is the node's latest run (shard 0); FirstRunID its first run
	// of this attempt, before its shards and retries.
	RunID      int64
	FirstRunID int64
	Attempt    int32
	Message    string
	StartedAt  time.Time
	FinishedAt time.Time
}

const workflowRunColumns = `id, workflow_id, status, scheduled_at, trigger_type, param, message, attempt, created_at, started_at, finished_at,
	alarm_status, alarm_message`

func scanWorkflowRun(row interface{ Scan(...any) error }) (WorkflowRun, error) {
	var wr WorkflowRun
	var param sql.NullString
	var scheduled, created, started, finished sql.NullInt64
	err := row.Scan(&wr.ID, &wr.WorkflowID, &wr.Status, &scheduled, &wr.TriggerType, &param, &wr.Message, &wr.Attempt,
		&created, &started, &finished, &wr.AlarmStatus, &wr.AlarmMessage)
	if err != nil {
		return WorkflowRun{}, err
	}
	wr.Param, wr.ScheduledAt, wr.CreatedAt = stringOf(param), fromMillis(scheduled), fromMillis(created)
	wr.StartedAt, wr.FinishedAt = fromMillis(started), fromMillis(finished)
	return wr, nil
}

// workflowRunOf is the workflow run of a row of dbsqlc.WorkflowRunByID
// (or OldestWorkflowRunOfStatus: the same columns), without its nodes.
func workflowRunOf(r dbsqlc.WorkflowRunByIDRow) WorkflowRun {
	return WorkflowRun{ID: r.ID, WorkflowID: r.WorkflowID, Status: r.Status, ScheduledAt: time.UnixMilli(r.ScheduledAt),
		TriggerType: r.TriggerType, Param: stringOf(r.Param), Message: r.Message, Attempt: r.Attempt, CreatedAt: time.UnixMilli(r.CreatedAt),
		StartedAt: fromMillis(r.StartedAt), FinishedAt: fromMillis(r.FinishedAt), AlarmStatus: r.AlarmStatus, AlarmMessage: r.AlarmMessage}
}

// workflowRunByID reads workflow run id, without its nodes, over a
// *sql.DB or a *sql.Tx; sql.ErrNoRows when there is none.
func workflowRunByID(ctx context.Context, db dbsqlc.DBTX, id int64) (WorkflowRun, error) {
	r, err := dbsqlc.New(db).WorkflowRunByID(ctx, id)
	if err != nil {
		return WorkflowRun{}, err
	}
	return workflowRunOf(r), nil
}

// workflowNodeRuns reads workflow run id's nodes in their order, over a
// *sql.DB or a *sql.Tx.
func workflowNodeRuns(ctx context.Context, db dbsqlc.DBTX, id int64) ([]WorkflowNodeRun, error) {
	rows, err := dbsqlc.New(db).WorkflowNodeRuns(ctx, id)
	if err != nil {
		return nil, err
	}
	var ns []WorkflowNodeRun
	for _, r := range rows {
		ns = append(ns, WorkflowNodeRun{
			WorkflowNode: WorkflowNode{Key: r.NodeKey, JobID: r.JobID, DependsOn: splitLines(r.DependsOn), Param: stringOf(r.Param)},
			Status:       r.Status, RunID: r.RunID, FirstRunID: r.FirstRunID, Attempt: r.Attempt, Message: r.Message,
			StartedAt: fromMillis(r.StartedAt), FinishedAt: fromMillis(r.FinishedAt),
		})
	}
	return ns, nil
}

// Run returns the workflow run with the given ID, with its nodes.
func (s WorkflowStore) Run(ctx context.Context, id int64) (WorkflowRun, error) {
	db := s.reader(ctx)
	wr, err := workflowRunByID(ctx, db, id)
	if errors.Is(err, sql.ErrNoRows) {
		return WorkflowRun{}, fmt.Errorf("%w: workflow run %d", ErrNotFound, id)
	}
	if err == nil {
		wr.Nodes, err = workflowNodeRuns(ctx, db, id)
	}
	if err != nil {
		return WorkflowRun{}, fmt.Errorf("store: workflow run %d: %w", id, err)
	}
	return wr, nil
}

// WorkflowRunFilter selects workflow runs for WorkflowRuns. Zero fields
// select everything.
type WorkflowRunFilter struct {
	WorkflowID int64
	// GroupIDs, if not nil, selects the workflow runs of those groups'
	// workflows only.
	GroupIDs []int64
	Status   carillonv1.WorkflowRunStatus
	// BeforeID pages: only workflow runs with a smaller ID.
	BeforeID int64
	Limit    int
}

// Runs returns the workflow runs f selects, newest first, without
// their nodes.
func (s WorkflowStore) Runs(ctx context.Context, f WorkflowRunFilter) ([]WorkflowRun, error) {
	where := []string{"1 = 1"}
	var a args
	if f.WorkflowID != 0 {
		where = append(where, "workflow_id = "+a.add(f.WorkflowID))
	}
	if f.GroupIDs != nil {
		where = append(where, "workflow_id IN (SELECT id FROM workflows WHERE group_id IN ("+s.d.idRows(a.add(jsonIDs(f.GroupIDs)))+"))")
	}
	if f.Status != 0 {
		where = append(where, "status = "+a.add(f.Status))
	}
	if f.BeforeID > 0 {
		where = append(where, "id < "+a.add(f.BeforeID))
	}
	rows, err := s.reader(ctx).QueryContext(ctx, `SELECT `+workflowRunColumns+` FROM workflow_runs WHERE `+ //nolint:gosec // constant SQL fragments; values are placeholders
		strings.Join(where, " AND ")+` ORDER BY id DESC LIMIT `+a.add(cmpLimit(f.Limit)), a...)
	out, err := collect(rows, err, scanWorkflowRun)
	if err != nil {
		return nil, fmt.Errorf("store: workflow runs: %w", err)
	}
	return out, nil
}

// WorkflowChange is what a write of workflow runs did besides its own
// rows: the pending runs of the nodes it started, which the caller hands
// to the scheduler (as Settled.FollowUps), and the running runs of the
// nodes it cancelled, which the caller kills on their executors and
// settles KILLED (as KillRun does).
type WorkflowChange struct {
	// WorkflowRunID is the workflow run made or changed.
	WorkflowRunID int64
	FollowUps     []Run
	Kill          []Run
	// Rescheduled says a FIX_DELAY workflow got its next instant.
	Rescheduled bool
	// Ended are the workflow runs the write ended (Settled.WorkflowRunsEnded).
	Ended []WorkflowRun
}

// Trigger makes a run of workflow id now, with tt (MANUAL or API)
// and param, under the workflow's block strategy, and starts its root
// nodes unless it waits (SERIAL) or was discarded (DISCARD_LATER).
func (s WorkflowStore) Trigger(ctx context.Context, id int64, tt carillonv1.TriggerType, param *string, now time.Time) (WorkflowChange, error) {
	var ch WorkflowChange
	out, err := s.settleTx(ctx, nil, func(st *settler) error {
		w, err := st.lockWorkflow(id)
		if err != nil {
			return err
		}
		ch.WorkflowRunID, err = st.makeWorkflowRun(w, now, tt, param, now)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return WorkflowChange{}, err
		}
		return WorkflowChange{}, fmt.Errorf("store: trigger workflow %d: %w", id, err)
	}
	ch.FollowUps, ch.Kill, ch.Rescheduled, ch.Ended = out.FollowUps, out.kill, out.Rescheduled, out.WorkflowRunsEnded
	return ch, nil
}

// Backfill makes a BACKFILL run of workflow id for each of
// instants (oldest first), in one transaction, as WorkflowStore.Trigger makes
// one (its block strategy applying), and returns their IDs in the order
// of instants.
func (s WorkflowStore) Backfill(ctx context.Context, id int64, instants []time.Time, now time.Time) (WorkflowChange, []int64, error) {
	var ids []int64
	out, err := s.settleTx(ctx, nil, func(st *settler) error {
		w, err := st.lockWorkflow(id)
		if err != nil {
			return err
		}
		ids = make([]int64, len(instants))
		for i, at := range instants {
			if ids[i], err = st.makeWorkflowRun(w, at, carillonv1.TriggerType_TRIGGER_TYPE_BACKFILL, nil, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return WorkflowChange{}, nil, err
		}
		return WorkflowChange{}, nil, fmt.Errorf("store: backfill workflow %d: %w", id, err)
	}
	return WorkflowChange{FollowUps: out.FollowUps, Kill: out.kill, Rescheduled: out.Rescheduled, Ended: out.WorkflowRunsEnded}, ids, nil
}

// RetryRun runs again the nodes of a FAILED or CANCELLED workflow
// run that did not succeed: each becomes a new attempt, waiting for its
// dependencies, and those whose dependencies all succeeded start now. The
// workflow run is RUNNING again, in the same row.
func (s WorkflowStore) RetryRun(ctx context.Context, id int64, now time.Time) (WorkflowChange, error) {
	return s.changeWorkflowRun(ctx, id, "retry", func(st *settler, wr *WorkflowRun) error {
		if wr.Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_FAILED && wr.Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_CANCELLED {
			return fmt.Errorf("%w: workflow run %d is %s; only a FAILED or CANCELLED one is retried", ErrWorkflowRunState, wr.ID,
				strings.TrimPrefix(wr.Status.String(), "WORKFLOW_RUN_STATUS_"))
		}
		for i := range wr.Nodes {
			n := &wr.Nodes[i]
			if n.Status == carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
				continue
			}
			if n.RunID != 0 {
				n.Attempt++
			}
			n.Status, n.Message, n.StartedAt, n.FinishedAt = carillonv1.RunStatus_RUN_STATUS_PENDING, "", time.Time{}, time.Time{}
			if err := st.saveNode(wr.ID, i, n); err != nil {
				return err
			}
		}
		wr.Attempt++
		err := dbsqlc.New(st.tx).RetryWorkflowRun(st.ctx, dbsqlc.RetryWorkflowRunParams{
			Status: carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING, Attempt: wr.Attempt, StartedAt: now.UnixMilli(), ID: wr.ID})
		if err != nil {
			return err
		}
		wr.Status = carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING
		return st.advanceWorkflow(wr, now)
	})
}

// CancelRun ends a PENDING or RUNNING workflow run CANCELLED: its
// waiting nodes and pending runs are skipped, its running nodes are marked
// KILLED and their running runs returned to kill (WorkflowChange.Kill).
func (s WorkflowStore) CancelRun(ctx context.Context, id int64, now time.Time) (WorkflowChange, error) {
	return s.changeWorkflowRun(ctx, id, "cancel", func(st *settler, wr *WorkflowRun) error {
		if !activeWorkflowRun(wr.Status) {
			return fmt.Errorf("%w: workflow run %d has ended %s", ErrWorkflowRunState, wr.ID,
				strings.TrimPrefix(wr.Status.String(), "WORKFLOW_RUN_STATUS_"))
		}
		return st.cancelWorkflowRun(wr, "cancelled by CancelWorkflowRun", now, true)
	})
}

// changeWorkflowRun runs fn on workflow run id, read with its nodes and
// locked, in one write transaction.
func (s *db) changeWorkflowRun(ctx context.Context, id int64, verb string, fn func(st *settler, wr *WorkflowRun) error) (WorkflowChange, error) {
	out, err := s.settleTx(ctx, nil, func(st *settler) error {
		wr, err := st.lockWorkflowRun(id)
		if err != nil {
			return err
		}
		if wr == nil {
			return fmt.Errorf("%w: workflow run %d", ErrNotFound, id)
		}
		return fn(st, wr)
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrWorkflowRunState) {
			return WorkflowChange{}, err
		}
		return WorkflowChange{}, fmt.Errorf("store: %s workflow run %d: %w", verb, id, err)
	}
	return WorkflowChange{WorkflowRunID: id, FollowUps: out.FollowUps, Kill: out.kill, Rescheduled: out.Rescheduled,
		Ended: out.WorkflowRunsEnded}, nil
}

// activeWorkflowRun says whether a workflow run of status st has not
// ended.
func activeWorkflowRun(st carillonv1.WorkflowRunStatus) bool {
	return st == carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_PENDING || st == carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING
}

// DeleteRuns deletes up to limit workflow runs that ended before
// before, oldest first, with their nodes' rows (the runs of their nodes
// are ordinary runs, deleted as runs are), and returns how many it
// deleted; call it again until it returns fewer than limit. Active
// workflow runs are never deleted.
func (s WorkflowStore) DeleteRuns(ctx context.Context, before time.Time, limit int) (int64, error) {
	var n int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := dbsqlc.New(tx).DeleteEndedWorkflowRuns(ctx, dbsqlc.DeleteEndedWorkflowRunsParams{Before: before.UnixMilli(),
			Status: carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_PENDING, OrStatus: carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING,
			MaxRows: int64(limit)})
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: delete workflow runs: %w", err)
	}
	return n, nil
}
