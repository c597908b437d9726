package trigger

import (
	"context"
	"fmt"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// KillRuns kills running runs of a cancelled workflow run (the store's
// WorkflowChange.Kill), each as KillRun does: asked of its executor
// (Kill), then settled KILLED with message. A run whose executor cannot be
// reached is settled KILLED all the same (its workflow run has ended), its
// message saying so: a result the executor reports later is noted on it.
func (t *Trigger) KillRuns(ctx context.Context, runs []store.Run, message string) error {
	results := make([]store.Result, 0, len(runs))
	for _, r := range runs {
		msg := message
		if err := t.Kill(ctx, r); err != nil {
			msg = fmt.Sprintf("%s (its executor could not be asked to kill it: %v)", message, err)
		}
		results = append(results, store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_KILLED, Message: msg,
			FinishedAt: t.Completer.cfg.Clock.Now()})
	}
	if len(results) == 0 {
		return nil
	}
	return t.Completer.Settle(ctx, results)
}

// Carry hands on what a write of workflow runs outside settling made
// (TriggerWorkflow, RetryWorkflowRun, CancelWorkflowRun: the store's
// WorkflowChange): the runs of cancelled workflow runs are killed
// (KillRuns) first, so that a workflow run that covers an earlier one
// (COVER_EARLY) starts after the earlier one's runs were stopped; then
// the nodes' pending runs go to the scheduler's queue, as settling's
// follow-ups do. The pending runs are queued even if a kill fails.
func (t *Trigger) Carry(ctx context.Context, ch store.WorkflowChange, killMessage string) error {
	t.Completer.WorkflowRunsEnded(ch.Ended)
	err := t.KillRuns(ctx, ch.Kill, killMessage)
	q := t.Completer.cfg.Queue
	if len(ch.FollowUps) > 0 {
		q.Enqueue(ch.FollowUps...)
	}
	if ch.Rescheduled {
		q.Wake()
	}
	return err
}

// WorkflowRunsEnded hands on workflow runs a write ended
// (store.Settled.WorkflowRunsEnded): each is counted by status, and the
// alarm sender is woken when one ended FAILED (its alarm due).
func (c *Completer) WorkflowRunsEnded(ended []store.WorkflowRun) {
	alarms := false
	for _, wr := range ended {
		c.cfg.Metrics.WorkflowRunEnded(wr.Status)
		alarms = alarms || wr.AlarmStatus == carillonv1.AlarmStatus_ALARM_STATUS_PENDING
	}
	if alarms && c.cfg.Alarms != nil {
		c.cfg.Alarms.Wake()
	}
}
