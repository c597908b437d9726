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
