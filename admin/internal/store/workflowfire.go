package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Due returns the enabled workflows that this admin's scan
// claims, as DueJobs does for jobs: those of its own buckets whose next
// instant is at or before before, and the other admins' at or before
// takeover; earliest first, at most limit of them, without their nodes
// (the claim reads them); none of a paused group.
func (s WorkflowStore) Due(ctx context.Context, before, takeover time.Time, limit int) ([]Workflow, error) {
	var rows *sql.Rows
	var err error
	if p := s.partition(); p.All() {
		rows, err = s.r.QueryContext(ctx, dueWorkflowsSQL, before.UnixMilli(), limit)
	} else {
		rows, err = s.r.QueryContext(ctx, dueWorkflowsSharedSQL, before.UnixMilli(), takeover.UnixMilli(), p.Lo, p.Hi, limit)
	}
	ws, err := collect(rows, err, scanWorkflow)
	if err != nil {
		return nil, fmt.Errorf("store: due workflows: %w", err)
	}
	return ws, nil
}

// dueWorkflows is the condition of the partial index workflows_due and
// the workflows of groups not paused.
const dueWorkflows = `FROM workflows WHERE enabled = 1 AND next_fire_at IS NOT NULL` + workflowsNotPaused

var (
	dueWorkflowsSQL       = `SELECT ` + workflowColumns + ` ` + dueWorkflows + ` AND next_fire_at <= $1 ORDER BY next_fire_at LIMIT $2`
	dueWorkflowsSharedSQL = shared(`SELECT `+workflowColumns+` `+dueWorkflows, `$1`, `$2`, `$3`, `$4`, `ORDER BY next_fire_at LIMIT $5`)

	nextWorkflowSQL       = `SELECT next_fire_at ` + dueWorkflows + ` ORDER BY next_fire_at LIMIT 1`
	nextWorkflowSharedSQL = nextShared(`SELECT next_fire_at `+dueWorkflows, `ORDER BY next_fire_at LIMIT 1`)
)

// NextFireAt returns the earliest next instant of the enabled
// workflows of this admin's buckets (own) and of the other admins'
// (others: zero over SQLite or for an admin alone); zero when none has
// one.
func (s WorkflowStore) NextFireAt(ctx context.Context) (own, others time.Time, err error) {
	own, others, err = s.nextFires(ctx, nextWorkflowSQL, nextWorkflowSharedSQL)
	if err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("store: next workflow instant: %w", err)
	}
	return own, others, nil
}

// WorkflowFire is one workflow run a claim makes.
type WorkflowFire struct {
	// At is its scheduled instant.
	At time.Time
	// TriggerType is SCHEDULE, or MISFIRE for the one run FIRE_ONCE_NOW
	// makes for missed instants.
	TriggerType carillonv1.TriggerType
	// Skipped, if not empty, records missed instants skipped by
	// DO_NOTHING: the workflow run is SKIPPED with this message.
	Skipped string
}

// WorkflowClaim advances one workflow's schedule.
type WorkflowClaim struct {
	WorkflowID int64
	// Due is the workflow's next instant as read; the claim applies only if
	// it is still its next instant.
	Due time.Time
	// Next becomes its next instant; zero when nothing is scheduled.
	Next  time.Time
	Fires []WorkflowFire
}

// ClaimFires applies claims in one transaction: each workflow
// still due as read advances to its next instant and gets its workflow
// runs, started as WorkflowStore.Trigger starts them (block strategy included),
// so that each scheduled instant makes one workflow run across crashes
// and admins. The change's FollowUps are the root nodes' pending runs.
func (s WorkflowStore) ClaimFires(ctx context.Context, claims []WorkflowClaim, now time.Time) (WorkflowChange, error) {
	out, err := s.settleTx(ctx, nil, func(st *settler) error {
		for _, c := range claims {
			var last sql.NullInt64
			for _, f := range c.Fires {
				if f.Skipped == "" && f.At.UnixMilli() > last.Int64 {
					last = millis(f.At)
				}
			}
			res, err := st.tx.ExecContext(st.ctx, `UPDATE workflows SET next_fire_at = $1, last_fire_at = coalesce($2, last_fire_at)
				WHERE id = $3 AND enabled = 1 AND next_fire_at = $4`+workflowsNotPaused, millis(c.Next), last, c.WorkflowID, c.Due.UnixMilli())
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				return err // changed since it was read: the next scan reads it again
			}
			w, err := st.lockWorkflow(c.WorkflowID)
			if err != nil {
				return err
			}
			for _, f := range c.Fires {
				if f.Skipped != "" {
					if err := st.skipWorkflowRun(w, f, now); err != nil {
						return err
					}
					continue
				}
				if _, err := st.makeWorkflowRun(w, f.At, f.TriggerType, nil, now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return WorkflowChange{}, fmt.Errorf("store: claim workflow fires: %w", err)
	}
	return WorkflowChange{FollowUps: out.FollowUps, Kill: out.kill, Rescheduled: out.Rescheduled, Ended: out.WorkflowRunsEnded}, nil
}

// skipWorkflowRun records missed instants of w as a SKIPPED workflow run.
func (st *settler) skipWorkflowRun(w Workflow, f WorkflowFire, now time.Time) error {
	err := dbsqlc.New(st.tx).InsertSkippedWorkflowRun(st.ctx, dbsqlc.InsertSkippedWorkflowRunParams{WorkflowID: w.ID,
		Status: carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SKIPPED, ScheduledAt: f.At.UnixMilli(),
		TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Message: f.Skipped, CreatedAt: now.UnixMilli(), FinishedAt: now.UnixMilli()})
	if err == nil {
		st.out.WorkflowRunsEnded = append(st.out.WorkflowRunsEnded, WorkflowRun{WorkflowID: w.ID,
			Status: carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SKIPPED, ScheduledAt: f.At, FinishedAt: now})
	}
	return err
}
