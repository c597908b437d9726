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
// WorkflowChange): the nodes' pending runs go to the scheduler's queue,
// as settling's follow-ups do, and the runs of cancelled workflow runs
// are killed (KillRuns).
func (t *Trigger) Carry(ctx context.Context, ch store.WorkflowChange, killMessage string) error {
	q := t.Completer.cfg.Queue
	if len(ch.FollowUps) > 0 {
		q.Enqueue(ch.FollowUps...)
	}
	if ch.Rescheduled {
		q.Wake()
	}
	return t.KillRuns(ctx, ch.Kill, killMessage)
}
