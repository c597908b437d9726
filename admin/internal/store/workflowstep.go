package store

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
	"github.com/carillonhq/carillon/admin/internal/workflow"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Statements over the runs of one workflow run. Each says workflow_run_id
// <> 0, so that the database reads them through the partial index
// runs_workflow: a bound "workflow_run_id = $1" alone does not tell it
// that the value is not 0, and it scanned the whole runs table for each
// node started.
func sqlOfWorkflowRun(param string) string {
	return `workflow_run_id = ` + param + ` AND workflow_run_id <> 0`
}

var (
	nodeOutputsSQL = `SELECT workflow_node, id, outputs FROM runs WHERE ` + sqlOfWorkflowRun(`$1`) + //nolint:gosec // concatenates constant SQL fragments; values are placeholders
		` AND status = $2 AND outputs IS NOT NULL ORDER BY shard_index, id`
	nodeShardsSQL = `SELECT count(DISTINCT shard_index) FROM runs WHERE ` + sqlOfWorkflowRun(`$1`) +
		` AND workflow_node = $2 AND id >= $3 AND status = $4`
)

// The workflow engine: what the writes of workflow runs do inside their
// transaction (a settler's), following package workflow's policy. Every
// write of a workflow's runs locks the workflow's row first (PostgreSQL;
// SQLite has one writer), so that two admins settling the last two
// dependencies of a node at once cannot both miss that it may start.

// lockWorkflow reads workflow id with its nodes, locked.
func (st *settler) lockWorkflow(id int64) (Workflow, error) {
	w, err := scanWorkflow(st.tx.QueryRowContext(st.ctx, `SELECT `+workflowColumns+` FROM workflows WHERE id = $1`+st.d.forUpdate(), id))
	if errors.Is(err, sql.ErrNoRows) {
		return Workflow{}, fmt.Errorf("%w: workflow %d", ErrNotFound, id)
	}
	if err != nil {
		return Workflow{}, err
	}
	w.Nodes, err = workflowNodes(st.ctx, st.tx, id)
	return w, err
}

// lockWorkflowRun reads workflow run id with its nodes, its workflow's
// row locked; nil when there is no such workflow run. Read once a
// transaction: what the transaction changes of it is changed in what it
// returns too.
func (st *settler) lockWorkflowRun(id int64) (*WorkflowRun, error) {
	if wr, ok := st.workflowRuns[id]; ok {
		return wr, nil
	}
	wid, err := dbsqlc.New(st.tx).WorkflowOfRun(st.ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if lock := st.d.lockRows("workflows", `$1`); lock != "" {
		if _, err := st.tx.ExecContext(st.ctx, lock, wid); err != nil {
			return nil, err
		}
	}
	// Read after the lock: over PostgreSQL each statement sees what the
	// transactions that held it committed.
	wr, err := workflowRunByID(st.ctx, st.tx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if wr.Nodes, err = workflowNodeRuns(st.ctx, st.tx, id); err != nil {
		return nil, err
	}
	if st.workflowRuns == nil {
		st.workflowRuns = map[int64]*WorkflowRun{}
	}
	st.workflowRuns[id] = &wr
	return &wr, nil
}

// makeWorkflowRun stores a run of workflow w (locked) for instant at, made
// at now by tt, and starts it, unless an earlier workflow run of w is
// still active: then w's block strategy decides (SERIAL: it waits,
// PENDING; DISCARD_LATER: it is SKIPPED; COVER_EARLY: the earlier ones are
// cancelled, their running runs added to st.out.kill). It returns its ID.
func (st *settler) makeWorkflowRun(w Workflow, at time.Time, tt carillonv1.TriggerType, param *string, now time.Time) (int64, error) {
	active, err := st.activeWorkflowRuns(w.ID)
	if err != nil {
		return 0, err
	}
	status, msg := carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING, ""
	if len(active) > 0 {
		switch w.BlockStrategy {
		case carillonv1.BlockStrategy_BLOCK_STRATEGY_DISCARD_LATER:
			status = carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SKIPPED
			msg = fmt.Sprintf("discarded (DISCARD_LATER): workflow run %d was still active", active[0])
		case carillonv1.BlockStrategy_BLOCK_STRATEGY_COVER_EARLY:
			for _, id := range active {
				wr, err := st.lockWorkflowRun(id)
				if err != nil {
					return 0, err
				}
				if err := st.cancelWorkflowRun(wr, "covered by a later workflow run (COVER_EARLY)", now, false); err != nil {
					return 0, err
				}
			}
		default:
			status = carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_PENDING
			msg = fmt.Sprintf("waiting (SERIAL) for workflow run %d to end", active[len(active)-1])
		}
	}
	wr := WorkflowRun{WorkflowID: w.ID, Status: status, ScheduledAt: at, TriggerType: tt, Param: param, Message: msg, CreatedAt: now}
	start := now // an instant claimed ahead starts on the instant
	if at.After(now) {
		start = at
	}
	if status == carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING {
		wr.StartedAt = start
	}
	if status == carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SKIPPED {
		wr.FinishedAt = now
	}
	q := dbsqlc.New(st.tx)
	wr.ID, err = q.InsertWorkflowRun(st.ctx, dbsqlc.InsertWorkflowRunParams{WorkflowID: wr.WorkflowID, Status: wr.Status,
		ScheduledAt: wr.ScheduledAt.UnixMilli(), TriggerType: wr.TriggerType, Param: nullString(wr.Param), Message: wr.Message,
		Attempt: wr.Attempt, CreatedAt: wr.CreatedAt.UnixMilli(), StartedAt: millis(wr.StartedAt), FinishedAt: millis(wr.FinishedAt),
		AlarmStatus: wr.AlarmStatus, AlarmMessage: wr.AlarmMessage})
	if err != nil {
		return 0, err
	}
	wr.Nodes = make([]WorkflowNodeRun, len(w.Nodes))
	for i, n := range w.Nodes {
		node := WorkflowNodeRun{WorkflowNode: n, Status: carillonv1.RunStatus_RUN_STATUS_PENDING}
		if status == carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SKIPPED {
			node.Status, node.Message = carillonv1.RunStatus_RUN_STATUS_SKIPPED, "the workflow run was discarded"
		}
		err := q.InsertWorkflowNodeRun(st.ctx, dbsqlc.InsertWorkflowNodeRunParams{WorkflowRunID: wr.ID, Position: int64(i), NodeKey: n.Key,
			JobID: n.JobID, DependsOn: joinLines(n.DependsOn), Param: nullString(n.Param), Status: node.Status, Message: node.Message})
		if err != nil {
			return 0, err
		}
		wr.Nodes[i] = node
	}
	if status == carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SKIPPED {
		st.out.WorkflowRunsEnded = append(st.out.WorkflowRunsEnded, wr)
	}
	if status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING {
		return wr.ID, nil
	}
	return wr.ID, st.advanceWorkflow(&wr, start)
}

// activeWorkflowRuns returns the IDs of workflow wid's PENDING and RUNNING
// workflow runs, oldest first.
func (st *settler) activeWorkflowRuns(wid int64) ([]int64, error) {
	return dbsqlc.New(st.tx).WorkflowRunsOfStatus(st.ctx, dbsqlc.WorkflowRunsOfStatusParams{WorkflowID: wid,
		Status: carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_PENDING, OrStatus: carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING})
}

// nodeState is what the policy reads of a node's status.
func nodeState(n *WorkflowNodeRun) workflow.State {
	switch n.Status {
	case carillonv1.RunStatus_RUN_STATUS_PENDING:
		return workflow.Waiting
	case carillonv1.RunStatus_RUN_STATUS_RUNNING:
		return workflow.Running
	case carillonv1.RunStatus_RUN_STATUS_SUCCEEDED:
		return workflow.Succeeded
	case carillonv1.RunStatus_RUN_STATUS_SKIPPED:
		if n.RunID == 0 {
			return workflow.Skipped
		}
	}
	return workflow.Failed
}

// advanceWorkflow carries out what follows the state of running workflow
// run wr's nodes (workflow.Next): it starts the nodes whose dependencies
// all succeeded, skips those downstream of a failure, and ends the
// workflow run when nothing more runs.
func (st *settler) advanceWorkflow(wr *WorkflowRun, now time.Time) error {
	for {
		nodes := make([]workflow.Node, len(wr.Nodes))
		states := make([]workflow.State, len(wr.Nodes))
		for i := range wr.Nodes {
			nodes[i] = workflow.Node{Key: wr.Nodes[i].Key, DependsOn: wr.Nodes[i].DependsOn}
			states[i] = nodeState(&wr.Nodes[i])
		}
		step := workflow.Next(nodes, states)
		for i, upstream := range step.Skip {
			n := &wr.Nodes[i]
			n.Status, n.Message, n.FinishedAt = carillonv1.RunStatus_RUN_STATUS_SKIPPED, "upstream failed: "+upstream, now
			if err := st.saveNode(wr.ID, i, n); err != nil {
				return err
			}
		}
		failed := false
		for _, i := range step.Start {
			ok, err := st.startNode(wr, i, now)
			if err != nil {
				return err
			}
			failed = failed || !ok
		}
		if failed {
			continue // a node that could not start failed: its dependents are skipped
		}
		if !step.Done {
			return nil
		}
		status, msg := carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SUCCEEDED, ""
		if !step.Succeeded {
			status, msg = carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_FAILED, failedNodes(wr)
		}
		return st.endWorkflowRun(wr, status, msg, now, true)
	}
}

// failedNodes says which nodes of wr failed.
func failedNodes(wr *WorkflowRun) string {
	var keys []string
	for i := range wr.Nodes {
		if nodeState(&wr.Nodes[i]) == workflow.Failed {
			keys = append(keys, fmt.Sprintf("%s (%s)", wr.Nodes[i].Key, strings.TrimPrefix(wr.Nodes[i].Status.String(), "RUN_STATUS_")))
		}
	}
	return "failed: " + strings.Join(keys, ", ")
}

// startNode stores the pending run of node i of wr, due now, for the
// scheduler (st.out.FollowUps). A node whose job no longer exists fails
// instead (ok false).
func (st *settler) startNode(wr *WorkflowRun, i int, now time.Time) (ok bool, err error) {
	n := &wr.Nodes[i]
	if err := st.loadJobs([]int64{n.JobID}); err != nil {
		return false, err
	}
	job := st.jobs[n.JobID]
	if job == nil {
		n.Status, n.Message, n.StartedAt, n.FinishedAt = carillonv1.RunStatus_RUN_STATUS_FAILED, fmt.Sprintf("job %d no longer exists", n.JobID), now, now
		return false, st.saveNode(wr.ID, i, n)
	}
	param := job.Param
	switch {
	case wr.Param != nil:
		param = *wr.Param
	case n.Param != nil:
		param = *n.Param
	}
	inputs, err := st.nodeInputs(wr, i)
	if err != nil {
		return false, err
	}
	run := Run{
		JobID: job.ID, GroupID: job.GroupID, Handler: job.Handler, Param: param, ShardTotal: 1,
		TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_WORKFLOW, ScheduledAt: wr.ScheduledAt, DueAt: now,
		Status:         carillonv1.RunStatus_RUN_STATUS_PENDING,
		TriggerMessage: fmt.Sprintf("workflow run %d, node %s", wr.ID, n.Key),
		WorkflowRunID:  wr.ID, WorkflowNode: n.Key, Inputs: inputs,
	}
	if err := insertRun(st.ctx, st.tx, &run); err != nil {
		return false, err
	}
	st.out.FollowUps = append(st.out.FollowUps, run)
	n.Status, n.RunID, n.FirstRunID, n.Message, n.StartedAt, n.FinishedAt = carillonv1.RunStatus_RUN_STATUS_RUNNING, run.ID, run.ID, "", now, time.Time{}
	return true, st.saveNode(wr.ID, i, n)
}

// saveNode stores node i of workflow run id as n says.
func (st *settler) saveNode(id int64, i int, n *WorkflowNodeRun) error {
	return dbsqlc.New(st.tx).SaveWorkflowNodeRun(st.ctx, dbsqlc.SaveWorkflowNodeRunParams{Status: n.Status, RunID: n.RunID,
		FirstRunID: n.FirstRunID, Attempt: n.Attempt, Message: n.Message, StartedAt: millis(n.StartedAt), FinishedAt: millis(n.FinishedAt),
		WorkflowRunID: id, Position: int64(i)})
}

// endWorkflowRun ends wr with status. Then a FIX_DELAY workflow gets its
// next instant (after a scheduled workflow run), and, with handOn, the
// oldest workflow run of the workflow waiting behind it (SERIAL) starts.
func (st *settler) endWorkflowRun(wr *WorkflowRun, status carillonv1.WorkflowRunStatus, msg string, now time.Time, handOn bool) error {
	wr.Status, wr.Message, wr.FinishedAt = status, msg, now
	// A failure's alarm is due in the same transaction: durable, as a
	// run's is (the alarm sender delivers it).
	wr.AlarmStatus, wr.AlarmMessage = carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED, ""
	if status == carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_FAILED {
		wr.AlarmStatus = carillonv1.AlarmStatus_ALARM_STATUS_PENDING
	}
	q := dbsqlc.New(st.tx)
	err := q.EndWorkflowRun(st.ctx, dbsqlc.EndWorkflowRunParams{Status: status, Message: msg, FinishedAt: now.UnixMilli(),
		AlarmStatus: wr.AlarmStatus, AlarmMessage: wr.AlarmMessage, ID: wr.ID})
	if err != nil {
		return err
	}
	st.out.WorkflowRunsEnded = append(st.out.WorkflowRunsEnded, *wr)
	if wr.TriggerType == carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE || wr.TriggerType == carillonv1.TriggerType_TRIGGER_TYPE_MISFIRE {
		res, err := q.RescheduleFixDelayWorkflow(st.ctx, dbsqlc.RescheduleFixDelayWorkflowParams{FinishedAt: now.UnixMilli(),
			ID: wr.WorkflowID, ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY})
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n > 0 {
			st.out.Rescheduled = true
		}
	}
	if !handOn {
		return nil
	}
	r, err := q.OldestWorkflowRunOfStatus(st.ctx, dbsqlc.OldestWorkflowRunOfStatusParams{WorkflowID: wr.WorkflowID,
		Status: carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_PENDING})
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	next := workflowRunOf(dbsqlc.WorkflowRunByIDRow(r))
	if next.Nodes, err = workflowNodeRuns(st.ctx, st.tx, next.ID); err != nil {
		return err
	}
	if st.workflowRuns != nil {
		st.workflowRuns[next.ID] = &next // as lockWorkflowRun would have read it, from now on
	}
	// A workflow run that waited behind wr (claimed ahead of its instant
	// while wr ran) starts on its instant, not before it.
	start := now
	if next.ScheduledAt.After(now) {
		start = next.ScheduledAt
	}
	next.Status, next.Message, next.StartedAt = carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING, "", start
	err = q.StartWorkflowRun(st.ctx, dbsqlc.StartWorkflowRunParams{Status: next.Status, StartedAt: start.UnixMilli(), ID: next.ID})
	if err != nil {
		return err
	}
	return st.advanceWorkflow(&next, start)
}

// cancelWorkflowRun ends active workflow run wr CANCELLED with msg: its
// waiting nodes are skipped, the pending runs of its nodes too, and its
// running nodes are marked KILLED, their running runs added to
// st.out.kill for the caller to kill. handOn as for endWorkflowRun.
func (st *settler) cancelWorkflowRun(wr *WorkflowRun, msg string, now time.Time, handOn bool) error {
	if !activeWorkflowRun(wr.Status) {
		return nil
	}
	for i := range wr.Nodes {
		n := &wr.Nodes[i]
		switch n.Status {
		case carillonv1.RunStatus_RUN_STATUS_PENDING:
			n.Status, n.Message = carillonv1.RunStatus_RUN_STATUS_SKIPPED, "the workflow run was cancelled"
		case carillonv1.RunStatus_RUN_STATUS_RUNNING:
			n.Status, n.Message = carillonv1.RunStatus_RUN_STATUS_KILLED, "the workflow run was cancelled"
		default:
			continue
		}
		n.FinishedAt = now
		if err := st.saveNode(wr.ID, i, n); err != nil {
			return err
		}
	}
	_, err := st.tx.ExecContext(st.ctx, `UPDATE runs SET status = $1, message = $2, finished_at = $3 WHERE `+sqlOfWorkflowRun(`$4`)+` AND status = $5`, //nolint:gosec // concatenates constant SQL fragments; values are placeholders
		carillonv1.RunStatus_RUN_STATUS_SKIPPED, "not run: workflow run "+fmt.Sprint(wr.ID)+" was cancelled", now.UnixMilli(), wr.ID,
		carillonv1.RunStatus_RUN_STATUS_PENDING)
	if err != nil {
		return err
	}
	running, err := collectRuns(st.tx.QueryContext(st.ctx, `SELECT `+runColumns+` FROM runs WHERE `+sqlOfWorkflowRun(`$1`)+` AND status = $2`,
		wr.ID, carillonv1.RunStatus_RUN_STATUS_RUNNING))
	if err != nil {
		return err
	}
	st.out.kill = append(st.out.kill, running...)
	return st.endWorkflowRun(wr, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_CANCELLED, msg, now, handOn)
}

// workflowNode is the node of a running workflow run that a settled run
// is of.
type workflowNode struct {
	run *WorkflowRun
	i   int
}

// workflowNodeOf returns the node that run r is of, with its workflow run
// read and locked, while the node is RUNNING in a RUNNING workflow run;
// nil otherwise (the workflow run ended or was deleted, or the node
// already failed by another shard).
func (st *settler) workflowNodeOf(r Run) (*workflowNode, error) {
	wr, err := st.lockWorkflowRun(r.WorkflowRunID)
	if err != nil || wr == nil || wr.Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING {
		return nil, err
	}
	for i := range wr.Nodes {
		n := &wr.Nodes[i]
		if n.Key == r.WorkflowNode && n.Status == carillonv1.RunStatus_RUN_STATUS_RUNNING && r.ID >= n.FirstRunID {
			return &workflowNode{wr, i}, nil
		}
	}
	return nil, nil
}

// nodeSettled carries out what follows settling run r of node wn: with a
// retry, the node's run becomes the retry; without one, r's is the
// node's outcome (a success once every shard of the node's attempt
// succeeded), and the workflow run advances.
func (st *settler) nodeSettled(wn *workflowNode, r Run, retry *Run) error {
	n := &wn.run.Nodes[wn.i]
	if retry != nil {
		if r.ShardIndex != 0 {
			return nil
		}
		n.RunID = retry.ID
		return st.saveNode(wn.run.ID, wn.i, n)
	}
	if r.Status == carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
		var shards int32
		err := st.tx.QueryRowContext(st.ctx, nodeShardsSQL,
			r.WorkflowRunID, r.WorkflowNode, n.FirstRunID, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED).Scan(&shards)
		if err != nil || shards < r.ShardTotal {
			return err
		}
		n.Message = ""
	} else {
		n.Message = r.Message
	}
	n.Status, n.FinishedAt = r.Status, r.FinishedAt
	if r.ShardIndex == 0 {
		n.RunID = r.ID
	}
	if err := st.saveNode(wn.run.ID, wn.i, n); err != nil {
		return err
	}
	return st.advanceWorkflow(wn.run, r.FinishedAt)
}
