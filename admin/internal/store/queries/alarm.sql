-- name: RecordRunAlarm :exec
-- The final delivery outcome of a run's alarm.
UPDATE runs SET alarm_status = sqlc.arg(alarm_status), alarm_message = sqlc.arg(alarm_message) WHERE id = sqlc.arg(id);

-- name: RetryRunAlarm :exec
-- A failed try of a run's alarm, which stays PENDING (1) and is due again
-- at alarm_retry_at; an alarm no longer PENDING is left as it is.
UPDATE runs SET alarm_message = sqlc.arg(alarm_message), alarm_attempts = sqlc.arg(alarm_attempts),
    alarm_sent = sqlc.arg(alarm_sent), alarm_retry_at = sqlc.arg(alarm_retry_at)
WHERE id = sqlc.arg(id) AND alarm_status = 1;

-- name: RecordWorkflowRunAlarm :exec
-- RecordRunAlarm for a workflow run.
UPDATE workflow_runs SET alarm_status = sqlc.arg(alarm_status), alarm_message = sqlc.arg(alarm_message) WHERE id = sqlc.arg(id);

-- name: RetryWorkflowRunAlarm :exec
-- RetryRunAlarm for a workflow run.
UPDATE workflow_runs SET alarm_message = sqlc.arg(alarm_message), alarm_attempts = sqlc.arg(alarm_attempts),
    alarm_sent = sqlc.arg(alarm_sent), alarm_retry_at = sqlc.arg(alarm_retry_at)
WHERE id = sqlc.arg(id) AND alarm_status = 1;
