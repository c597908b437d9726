-- name: WorkflowRunByID :one
SELECT id, workflow_id, status, scheduled_at, trigger_type, param, message, attempt, created_at, started_at, finished_at,
    alarm_status, alarm_message
FROM workflow_runs WHERE id = sqlc.arg(id);

-- name: OldestWorkflowRunOfStatus :one
-- The oldest workflow run of workflow workflow_id with status (the next
-- one waiting, SERIAL).
SELECT id, workflow_id, status, scheduled_at, trigger_type, param, message, attempt, created_at, started_at, finished_at,
    alarm_status, alarm_message
FROM workflow_runs WHERE workflow_id = sqlc.arg(workflow_id) AND status = sqlc.arg(status) ORDER BY id LIMIT 1;

-- name: WorkflowOfRun :one
SELECT workflow_id FROM workflow_runs WHERE id = sqlc.arg(id);

-- name: WorkflowRunsOfStatus :many
-- The IDs of workflow workflow_id's runs of either status, oldest first.
SELECT id FROM workflow_runs WHERE workflow_id = sqlc.arg(workflow_id) AND status IN (sqlc.arg(status), sqlc.arg(or_status))
ORDER BY id;

-- name: InsertWorkflowRun :one
INSERT INTO workflow_runs (workflow_id, status, scheduled_at, trigger_type, param, message, attempt, created_at, started_at,
    finished_at, alarm_status, alarm_message)
VALUES (sqlc.arg(workflow_id), sqlc.arg(status), sqlc.arg(scheduled_at), sqlc.arg(trigger_type), sqlc.arg(param), sqlc.arg(message),
    sqlc.arg(attempt), sqlc.arg(created_at), sqlc.arg(started_at), sqlc.arg(finished_at), sqlc.arg(alarm_status), sqlc.arg(alarm_message))
RETURNING id;

-- name: InsertSkippedWorkflowRun :exec
-- A workflow run that records instants skipped: missed (DO_NOTHING), or
-- passed while its group was paused (resumeWorkflows).
INSERT INTO workflow_runs (workflow_id, status, scheduled_at, trigger_type, message, created_at, finished_at)
VALUES (sqlc.arg(workflow_id), sqlc.arg(status), sqlc.arg(scheduled_at), sqlc.arg(trigger_type), sqlc.arg(message),
    sqlc.arg(created_at), CAST(sqlc.arg(finished_at) AS BIGINT));

-- name: RetryWorkflowRun :exec
-- A workflow run running again (RetryRun): its first start is kept.
UPDATE workflow_runs SET status = sqlc.arg(status), message = '', attempt = sqlc.arg(attempt), finished_at = NULL,
    started_at = coalesce(started_at, CAST(sqlc.arg(started_at) AS BIGINT))
WHERE id = sqlc.arg(id);

-- name: StartWorkflowRun :exec
-- A waiting workflow run starting (SERIAL).
UPDATE workflow_runs SET status = sqlc.arg(status), message = '', started_at = CAST(sqlc.arg(started_at) AS BIGINT) WHERE id = sqlc.arg(id);

-- name: EndWorkflowRun :exec
UPDATE workflow_runs SET status = sqlc.arg(status), message = sqlc.arg(message), finished_at = CAST(sqlc.arg(finished_at) AS BIGINT),
    alarm_status = sqlc.arg(alarm_status), alarm_message = sqlc.arg(alarm_message)
WHERE id = sqlc.arg(id);

-- name: DeleteEndedWorkflowRuns :execresult
-- Up to max_rows workflow runs that ended before before, oldest first,
-- except those of either status (the active ones).
DELETE FROM workflow_runs WHERE id IN (SELECT e.id FROM workflow_runs e
    WHERE e.finished_at IS NOT NULL AND e.finished_at < CAST(sqlc.arg(before) AS BIGINT) AND e.status NOT IN (sqlc.arg(status), sqlc.arg(or_status))
    ORDER BY e.finished_at LIMIT CAST(sqlc.arg(max_rows) AS BIGINT));

-- name: WorkflowNodeRuns :many
SELECT node_key, job_id, depends_on, param, status, run_id, first_run_id, attempt, message, started_at, finished_at
FROM workflow_node_runs WHERE workflow_run_id = sqlc.arg(workflow_run_id) ORDER BY position;

-- name: InsertWorkflowNodeRun :exec
INSERT INTO workflow_node_runs (workflow_run_id, position, node_key, job_id, depends_on, param, status, message)
VALUES (sqlc.arg(workflow_run_id), sqlc.arg(position), sqlc.arg(node_key), sqlc.arg(job_id), sqlc.arg(depends_on), sqlc.arg(param),
    sqlc.arg(status), sqlc.arg(message));

-- name: SaveWorkflowNodeRun :exec
UPDATE workflow_node_runs SET status = sqlc.arg(status), run_id = sqlc.arg(run_id), first_run_id = sqlc.arg(first_run_id),
    attempt = sqlc.arg(attempt), message = sqlc.arg(message), started_at = sqlc.arg(started_at), finished_at = sqlc.arg(finished_at)
WHERE workflow_run_id = sqlc.arg(workflow_run_id) AND position = sqlc.arg(position);
