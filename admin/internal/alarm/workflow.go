package alarm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// sendWorkflowRuns delivers the due alarms of workflow runs that ended
// FAILED, on the same channels as runs' alarms, to the workflow's own
// e-mail addresses and webhook besides the admin's.
func (s *Sender) sendWorkflowRuns(ctx context.Context) error {
	return sendAll(ctx, s.cfg.NowFunc, s.cfg.Store.Alarms.PendingWorkflows, func(ctx context.Context, pa store.PendingWorkflowAlarm) error {
		o := s.sendWorkflowRun(ctx, pa)
		return s.settle(o, pa.Try, func(try store.AlarmTry, at time.Time, msg string) error {
			return s.cfg.Store.Alarms.RetryWorkflow(ctx, pa.ID, try, at, msg)
		}, func(status carillonv1.AlarmStatus, msg string) error {
			return s.cfg.Store.Alarms.RecordWorkflow(ctx, pa.ID, status, msg)
		})
	})
}

// sendWorkflowRun delivers the alarm of workflow run pa on every channel
// that has not taken it yet.
func (s *Sender) sendWorkflowRun(ctx context.Context, pa store.PendingWorkflowAlarm) outcome {
	wr := pa.WorkflowRun
	w, err := s.cfg.Store.Workflows.Get(ctx, wr.WorkflowID)
	if errors.Is(err, store.ErrNotFound) {
		return outcome{status: carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED, msg: "no alarm: the workflow was deleted"}
	}
	if err != nil {
		return outcome{status: carillonv1.AlarmStatus_ALARM_STATUS_FAILED, msg: err.Error(), sent: pa.Try.Sent}
	}
	e := workflowEvent(w, wr)
	e.RunURL = WorkflowRunURL(s.cfg.PublicURL, w.ID, wr.ID)
	o := s.deliver(ctx, e, fmt.Sprintf("workflow run %d", wr.ID), pa.Try.Sent)
	if o.status == carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED {
		o.msg = "no alarm: the workflow has no alarm e-mail or webhook, and the admin none"
	}
	return o
}

// workflowEvent is the alarm of workflow run wr of workflow w (without
// its link): the failed nodes are those whose final status is not
// SUCCEEDED, PENDING or SKIPPED.
func workflowEvent(w store.Workflow, wr store.WorkflowRun) Event {
	e := Event{
		WorkflowID: w.ID, WorkflowName: w.Name, WorkflowRunID: wr.ID, GroupID: w.GroupID,
		Status: strings.TrimPrefix(wr.Status.String(), "WORKFLOW_RUN_STATUS_"), Message: wr.Message,
		Attempt: wr.Attempt, TriggerType: strings.TrimPrefix(wr.TriggerType.String(), "TRIGGER_TYPE_"),
		ScheduledAt: wr.ScheduledAt, FinishedAt: wr.FinishedAt, Final: true,
		Emails: w.AlarmEmails, WebhookURL: w.AlarmWebhookURL,
	}
	for _, n := range wr.Nodes {
		switch n.Status {
		case carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, carillonv1.RunStatus_RUN_STATUS_PENDING, carillonv1.RunStatus_RUN_STATUS_SKIPPED,
			carillonv1.RunStatus_RUN_STATUS_RUNNING:
		default:
			e.FailedNodes = append(e.FailedNodes, n.Key)
		}
	}
	return e
}
