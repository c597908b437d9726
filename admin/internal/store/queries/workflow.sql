-- name: InsertWorkflow :one
INSERT INTO workflows (group_id, name, description, schedule_type, cron, interval_seconds, time_zone,
    misfire_strategy, block_strategy, enabled, last_fire_at, next_fire_at, created_at, updated_at, alarm_emails, alarm_webhook_url)
VALUES (sqlc.arg(group_id), sqlc.arg(name), sqlc.arg(description), sqlc.arg(schedule_type), sqlc.arg(cron),
    sqlc.arg(interval_seconds), sqlc.arg(time_zone), sqlc.arg(misfire_strategy), sqlc.arg(block_strategy), sqlc.arg(enabled),
    sqlc.arg(last_fire_at), sqlc.arg(next_fire_at), sqlc.arg(created_at), sqlc.arg(updated_at), sqlc.arg(alarm_emails),
    sqlc.arg(alarm_webhook_url))
RETURNING id;

-- name: UpdateWorkflow :exec
UPDATE workflows SET group_id = sqlc.arg(group_id), name = sqlc.arg(name), description = sqlc.arg(description),
    schedule_type = sqlc.arg(schedule_type), cron = sqlc.arg(cron), interval_seconds = sqlc.arg(interval_seconds),
    time_zone = sqlc.arg(time_zone), misfire_strategy = sqlc.arg(misfire_strategy), block_strategy = sqlc.arg(block_strategy),
    enabled = sqlc.arg(enabled), last_fire_at = sqlc.arg(last_fire_at), next_fire_at = sqlc.arg(next_fire_at),
    created_at = sqlc.arg(created_at), updated_at = sqlc.arg(updated_at), alarm_emails = sqlc.arg(alarm_emails),
    alarm_webhook_url = sqlc.arg(alarm_webhook_url)
WHERE id = sqlc.arg(id);

-- name: WorkflowByID :one
SELECT id, group_id, name, description, schedule_type, cron, interval_seconds, time_zone,
    misfire_strategy, block_strategy, enabled != 0 AS enabled, last_fire_at, next_fire_at, created_at, updated_at,
    alarm_emails, alarm_webhook_url
FROM workflows WHERE id = sqlc.arg(id);

-- name: WorkflowCount :one
-- Whether workflow id exists (1) or not (0).
SELECT count(*) FROM workflows WHERE id = sqlc.arg(id);

-- name: DeleteWorkflow :execresult
DELETE FROM workflows WHERE id = sqlc.arg(id);

-- name: WorkflowNodes :many
SELECT node_key, job_id, depends_on, param FROM workflow_nodes
WHERE workflow_id = sqlc.arg(workflow_id) ORDER BY position;

-- name: InsertWorkflowNode :exec
INSERT INTO workflow_nodes (workflow_id, position, node_key, job_id, depends_on, param)
VALUES (sqlc.arg(workflow_id), sqlc.arg(position), sqlc.arg(node_key), sqlc.arg(job_id), sqlc.arg(depends_on), sqlc.arg(param));

-- name: DeleteWorkflowNodes :exec
DELETE FROM workflow_nodes WHERE workflow_id = sqlc.arg(workflow_id);

-- name: WorkflowsOfJob :many
-- The workflows that have job job_id as a node.
SELECT DISTINCT w.id, w.name FROM workflow_nodes n JOIN workflows w ON w.id = n.workflow_id
WHERE n.job_id = sqlc.arg(job_id) ORDER BY w.id;

-- name: RescheduleFixDelayWorkflow :execresult
-- A FIX_DELAY workflow's next instant, once its scheduled workflow run
-- ended at finished_at; none while it is stopped or has one.
UPDATE workflows SET next_fire_at = CAST(sqlc.arg(finished_at) AS BIGINT) + interval_seconds * 1000
WHERE id = sqlc.arg(id) AND enabled = 1 AND schedule_type = sqlc.arg(schedule_type) AND next_fire_at IS NULL;

-- name: StartWorkflow :exec
-- Turns a stopped workflow's schedule on with next_fire_at as its first
-- instant (NULL when its schedule has none); a started one is left as it
-- is (WorkflowStore.Start, ApplyTx.SetWorkflowEnabled).
UPDATE workflows SET enabled = 1, next_fire_at = sqlc.narg(next_fire_at), updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND enabled = 0;

-- name: StopWorkflow :exec
-- Turns a started workflow's schedule off; a stopped one is left as it is
-- (WorkflowStore.Stop, ApplyTx.SetWorkflowEnabled).
UPDATE workflows SET enabled = 0, next_fire_at = NULL, updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND enabled = 1;
