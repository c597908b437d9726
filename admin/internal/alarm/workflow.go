package alarm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// sendWorkflowRuns delivers the due alarms of workflow runs that ended
// FAILED, on the same channels as runs' alarms, to the workflow's own
// e-mail addresses and webhook besides the admin's.
func (s *Sender) sendWorkflowRuns(ctx context.Context) error {
	return sendAll(ctx, s.cfg.Store.PendingWorkflowAlarms, s.sendWorkflowRun, func(wr store.WorkflowRun) int64 { return wr.ID },
		s.cfg.Store.RecordWorkflowAlarm)
}

// sendWorkflowRun delivers the alarm of workflow run wr.
func (s *Sender) sendWorkflowRun(ctx context.Context, wr store.WorkflowRun) (carillonv1.AlarmStatus, string) {
	w, err := s.cfg.Store.Workflow(ctx, wr.WorkflowID)
	if errors.Is(err, store.ErrNotFound) {
		return carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED, "no alarm: the workflow was deleted"
	}
	if err != nil {
		return carillonv1.AlarmStatus_ALARM_STATUS_FAILED, err.Error()
	}
	e := workflowEvent(w, wr)
	e.RunURL = WorkflowRunURL(s.cfg.PublicURL, w.ID, wr.ID)
	status, msg := s.deliver(ctx, e, fmt.Sprintf("workflow run %d", wr.ID))
	if status == carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED {
		msg = "no alarm: the workflow has no alarm e-mail or webhook, and the admin none"
	}
	return status, msg
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
