package store

import (
	"context"
	"fmt"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// pendingAlarmsSQL names ALARM_STATUS_PENDING (1) literally, the
// condition of the partial index runs_alarm (see sqlInFlight).
const pendingAlarmsSQL = `SELECT ` + runColumns + ` FROM runs WHERE alarm_status = 1 ORDER BY id LIMIT ?`

// PendingAlarms returns up to limit runs whose alarm is due, oldest first.
func (s *Store) PendingAlarms(ctx context.Context, limit int) ([]Run, error) {
	return s.queryRuns(ctx, pendingAlarmsSQL, limit)
}

// RecordAlarm stores the delivery outcome of a run's alarm.
func (s *Store) RecordAlarm(ctx context.Context, runID int64, status carillonv1.AlarmStatus, message string) error {
	_, err := s.exec(ctx, `UPDATE runs SET alarm_status = ?, alarm_message = ? WHERE id = ?`, status, message, runID)
	if err != nil {
		return fmt.Errorf("store: record alarm of run %d: %w", runID, err)
	}
	return nil
}

// pendingWorkflowAlarmsSQL names ALARM_STATUS_PENDING (1) literally, the
// condition of the partial index workflow_runs_alarm.
const pendingWorkflowAlarmsSQL = `SELECT ` + workflowRunColumns + ` FROM workflow_runs WHERE alarm_status = 1 ORDER BY id LIMIT ?`

// PendingWorkflowAlarms returns up to limit workflow runs whose alarm is
// due (they ended FAILED), oldest first, with their nodes.
func (s *Store) PendingWorkflowAlarms(ctx context.Context, limit int) ([]WorkflowRun, error) {
	db := s.reader(ctx)
	rows, err := db.QueryContext(ctx, pendingWorkflowAlarmsSQL, limit)
	wrs, err := collect(rows, err, scanWorkflowRun)
	for i := 0; err == nil && i < len(wrs); i++ {
		wrs[i].Nodes, err = workflowNodeRuns(ctx, db, wrs[i].ID)
	}
	if err != nil {
		return nil, fmt.Errorf("store: pending workflow alarms: %w", err)
	}
	return wrs, nil
}

// RecordWorkflowAlarm stores the delivery outcome of a workflow run's
// alarm.
func (s *Store) RecordWorkflowAlarm(ctx context.Context, id int64, status carillonv1.AlarmStatus, message string) error {
	_, err := s.exec(ctx, `UPDATE workflow_runs SET alarm_status = ?, alarm_message = ? WHERE id = ?`, status, message, id)
	if err != nil {
		return fmt.Errorf("store: record alarm of workflow run %d: %w", id, err)
	}
	return nil
}
