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
