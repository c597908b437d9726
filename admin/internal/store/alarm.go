package store

import (
	"context"
	"fmt"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// AlarmStore reads and records the alarms of failed runs and workflow runs
// (Store.Alarms).
type AlarmStore struct{ *db }

// AlarmTry is how far the delivery of a due alarm got in the tries that
// failed before: how many there were and the channels that took the alarm
// in them (a retry goes only to the others).
type AlarmTry struct {
	Attempts int32
	Sent     []string
}

// PendingAlarm is a run whose alarm is due, with its tries so far.
type PendingAlarm struct {
	Run
	Try AlarmTry
}

// PendingWorkflowAlarm is a workflow run whose alarm is due, with its
// tries so far.
type PendingWorkflowAlarm struct {
	WorkflowRun
	Try AlarmTry
}

// withTry scans a row of a query's columns followed by alarm_attempts and
// alarm_sent, the latter into try.
type withTry struct {
	row interface{ Scan(...any) error }
	try *AlarmTry
}

// Scan implements the row scanning of scanRun and scanWorkflowRun.
func (w withTry) Scan(dest ...any) error {
	var sent string
	err := w.row.Scan(append(dest, &w.try.Attempts, &sent)...)
	w.try.Sent = splitLines(sent)
	return err
}

// pendingAlarmsSQL names ALARM_STATUS_PENDING (1) literally, the
// condition of the partial index runs_alarm (see sqlInFlight). It reads
// the run's whole row with run.go's runColumns and scanRun, so it stays
// by hand with them.
const pendingAlarmsSQL = `SELECT ` + runColumns + `, alarm_attempts, alarm_sent FROM runs
	WHERE alarm_status = 1 AND alarm_retry_at <= $1 ORDER BY id LIMIT $2`

// Pending returns up to limit runs whose alarm is due at now,
// oldest first: new ones, and those whose retry is due.
func (s AlarmStore) Pending(ctx context.Context, now time.Time, limit int) ([]PendingAlarm, error) {
	rows, err := s.reader(ctx).QueryContext(ctx, pendingAlarmsSQL, millis(now), limit)
	pas, err := collect(rows, err, func(row interface{ Scan(...any) error }) (PendingAlarm, error) {
		var pa PendingAlarm
		var err error
		pa.Run, err = scanRun(withTry{row, &pa.Try})
		return pa, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: pending alarms: %w", err)
	}
	return pas, nil
}

// Record stores the final delivery outcome of a run's alarm.
func (s AlarmStore) Record(ctx context.Context, runID int64, status carillonv1.AlarmStatus, message string) error {
	err := s.execQuery(func(q *dbsqlc.Queries) error {
		return q.RecordRunAlarm(ctx, dbsqlc.RecordRunAlarmParams{AlarmStatus: status, AlarmMessage: message, ID: runID})
	})
	if err != nil {
		return fmt.Errorf("store: record alarm of runs %d: %w", runID, err)
	}
	return nil
}

// RecordAll stores one final outcome of the alarms of runs ids, in one
// statement: the alarms that went nowhere, which a burst of failures has
// thousands of (alarm.Sender).
func (s AlarmStore) RecordAll(ctx context.Context, ids []int64, status carillonv1.AlarmStatus, message string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.exec(ctx, `UPDATE runs SET alarm_status = $1, alarm_message = $2 WHERE id IN (`+s.d.idRows(`$3`)+`)`, //nolint:gosec // concatenates constant SQL fragments; values are placeholders
		int64(status), message, jsonIDs(ids))
	if err != nil {
		return fmt.Errorf("store: record alarms of %d runs: %w", len(ids), err)
	}
	return nil
}

// Retry records a failed try of run runID's alarm, which stays
// PENDING and is due again at at: the tries so far, the channels that took
// it and what went wrong (message).
func (s AlarmStore) Retry(ctx context.Context, runID int64, try AlarmTry, at time.Time, message string) error {
	err := s.execQuery(func(q *dbsqlc.Queries) error {
		return q.RetryRunAlarm(ctx, dbsqlc.RetryRunAlarmParams{AlarmMessage: message, AlarmAttempts: int64(try.Attempts),
			AlarmSent: joinLines(try.Sent), AlarmRetryAt: at.UnixMilli(), ID: runID})
	})
	if err != nil {
		return fmt.Errorf("store: retry alarm of runs %d: %w", runID, err)
	}
	return nil
}

// pendingWorkflowAlarmsSQL names ALARM_STATUS_PENDING (1) literally, the
// condition of the partial index workflow_runs_alarm. It reads the
// workflow run's whole row with workflowrun.go's workflowRunColumns and
// scanWorkflowRun, so it stays by hand with them.
const pendingWorkflowAlarmsSQL = `SELECT ` + workflowRunColumns + `, alarm_attempts, alarm_sent FROM workflow_runs
	WHERE alarm_status = 1 AND alarm_retry_at <= $1 ORDER BY id LIMIT $2`

// PendingWorkflows returns up to limit workflow runs whose alarm is
// due at now (they ended FAILED), oldest first, with their nodes.
func (s AlarmStore) PendingWorkflows(ctx context.Context, now time.Time, limit int) ([]PendingWorkflowAlarm, error) {
	db := s.reader(ctx)
	rows, err := db.QueryContext(ctx, pendingWorkflowAlarmsSQL, millis(now), limit)
	pas, err := collect(rows, err, func(row interface{ Scan(...any) error }) (PendingWorkflowAlarm, error) {
		var pa PendingWorkflowAlarm
		var err error
		pa.WorkflowRun, err = scanWorkflowRun(withTry{row, &pa.Try})
		return pa, err
	})
	for i := 0; err == nil && i < len(pas); i++ {
		pas[i].Nodes, err = workflowNodeRuns(ctx, db, pas[i].ID)
	}
	if err != nil {
		return nil, fmt.Errorf("store: pending workflow alarms: %w", err)
	}
	return pas, nil
}

// RecordWorkflow stores the final delivery outcome of a workflow
// run's alarm.
func (s AlarmStore) RecordWorkflow(ctx context.Context, id int64, status carillonv1.AlarmStatus, message string) error {
	err := s.execQuery(func(q *dbsqlc.Queries) error {
		return q.RecordWorkflowRunAlarm(ctx, dbsqlc.RecordWorkflowRunAlarmParams{AlarmStatus: status, AlarmMessage: message, ID: id})
	})
	if err != nil {
		return fmt.Errorf("store: record alarm of workflow_runs %d: %w", id, err)
	}
	return nil
}

// RetryWorkflow is AlarmStore.Retry for a workflow run's alarm.
func (s AlarmStore) RetryWorkflow(ctx context.Context, id int64, try AlarmTry, at time.Time, message string) error {
	err := s.execQuery(func(q *dbsqlc.Queries) error {
		return q.RetryWorkflowRunAlarm(ctx, dbsqlc.RetryWorkflowRunAlarmParams{AlarmMessage: message, AlarmAttempts: int64(try.Attempts),
			AlarmSent: joinLines(try.Sent), AlarmRetryAt: at.UnixMilli(), ID: id})
	})
	if err != nil {
		return fmt.Errorf("store: retry alarm of workflow_runs %d: %w", id, err)
	}
	return nil
}
