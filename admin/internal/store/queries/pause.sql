-- name: PauseGroup :execresult
-- Pauses a group not paused; a paused one is left as it is.
UPDATE groups SET paused_at = CAST(sqlc.arg(paused_at) AS BIGINT), updated_at = sqlc.arg(updated_at) WHERE id = sqlc.arg(id) AND paused_at IS NULL;

-- name: GroupFound :one
-- A row if group id exists (groupFound).
SELECT 1 FROM groups WHERE id = sqlc.arg(id);

-- name: ResumeGroup :exec
UPDATE groups SET paused_at = NULL, updated_at = sqlc.arg(updated_at) WHERE id = sqlc.arg(id);

-- name: MoveJobPastPause :exec
-- A job's next instant after a pause (resumeJobs).
UPDATE jobs SET next_fire_at = sqlc.narg(next_fire_at) WHERE id = sqlc.arg(id);

-- name: DroppedFires :many
-- Job job_id's scheduled fires dropped in a pause from paused_at to now:
-- its runs of status (SKIPPED) and trigger_type (SCHEDULE) with their
-- instants in it, oldest first (droppedFires).
SELECT id, scheduled_at, missed_count FROM runs
WHERE job_id = sqlc.arg(job_id) AND status = sqlc.arg(status)
    AND scheduled_at >= sqlc.arg(paused_at) AND scheduled_at <= sqlc.arg(now)
    AND trigger_type = sqlc.arg(trigger_type) AND workflow_run_id = 0 AND attempt = 0
ORDER BY scheduled_at, id;

-- name: RecordPausedFires :exec
-- Makes a dropped fire the record of what a pause skipped (recordPausedJob):
-- missed_until is kept when until is NULL.
UPDATE runs SET missed_count = missed_count + sqlc.arg(missed), missed_until = coalesce(sqlc.narg(until), missed_until),
    message = sqlc.arg(message)
WHERE id = sqlc.arg(id);

-- name: DeleteDroppedFire :exec
-- A dropped fire that the record of its pause counts (recordPausedJob).
DELETE FROM runs WHERE id = sqlc.arg(id);

-- name: FiresAtInstant :one
-- How many of job job_id's runs hold the key of its fire at scheduled_at
-- (recordPausedJob).
SELECT count(*) FROM runs WHERE job_id = sqlc.arg(job_id) AND scheduled_at = sqlc.arg(scheduled_at) AND shard_index = 0 AND attempt = 0;

-- name: MoveWorkflowPastPause :exec
-- A workflow's next instant after a pause (resumeWorkflows).
UPDATE workflows SET next_fire_at = sqlc.narg(next_fire_at) WHERE id = sqlc.arg(id);

-- name: DuePendingRunsOfGroup :many
-- Group group_id's pending runs due by now, oldest due first, to queue
-- again at its resume (GroupStore.Resume): runColumns, as RunByID reads
-- them. runs.status IN (1, 7) is sqlInFlight, the partial index
-- runs_active's condition word for word.
SELECT id, job_id, group_id, executor_address, handler, param, shard_index, shard_total, trigger_type,
    scheduled_at, triggered_at, trigger_message, status, message, finished_at, attempt, due_at, timeout_seconds,
    alarm_status, alarm_message, missed_count, missed_until, admin_settled, workflow_run_id, workflow_node,
    outputs, inputs, rendered_param, slot, started_at
FROM runs WHERE runs.status IN (1, 7) AND status = 7
    AND group_id = sqlc.arg(group_id) AND due_at <= sqlc.arg(now)
ORDER BY due_at, id;

-- name: DueWorkflowsOfGroup :many
-- Group group_id's enabled workflows due by now (resumeWorkflows):
-- WorkflowByID's columns.
SELECT id, group_id, name, description, schedule_type, cron, interval_seconds, time_zone,
    misfire_strategy, block_strategy, enabled != 0 AS enabled, last_fire_at, next_fire_at, created_at, updated_at,
    alarm_emails, alarm_webhook_url
FROM workflows
WHERE group_id = sqlc.arg(group_id) AND enabled = 1 AND next_fire_at IS NOT NULL AND next_fire_at <= CAST(sqlc.arg(now) AS BIGINT);
