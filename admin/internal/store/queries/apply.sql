-- name: AllCalendars :many
-- Every calendar, in ID order (ApplyTx.Calendars).
SELECT id, name, description, definition, created_at, updated_at FROM calendars ORDER BY id;

-- name: WorkflowsOfGroup :many
-- The workflows of group group_id, in ID order, without their nodes
-- (ApplyTx.WorkflowsOf): WorkflowByID's columns.
SELECT id, group_id, name, description, schedule_type, cron, interval_seconds, time_zone,
    misfire_strategy, block_strategy, enabled != 0 AS enabled, last_fire_at, next_fire_at, created_at, updated_at,
    alarm_emails, alarm_webhook_url
FROM workflows WHERE group_id = sqlc.arg(group_id) ORDER BY id;
