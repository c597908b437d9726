-- name: RecordRenderedParam :exec
-- The param rendered from its job's template for run id (RunStore.RenderParams).
UPDATE runs SET rendered_param = CAST(sqlc.arg(rendered_param) AS TEXT) WHERE id = sqlc.arg(id);

-- name: RunByID :one
-- Run id, every column of runColumns, in its order (RunStore.Get).
SELECT id, job_id, group_id, executor_address, handler, param, shard_index, shard_total, trigger_type,
    scheduled_at, triggered_at, trigger_message, status, message, finished_at, attempt, due_at, timeout_seconds,
    alarm_status, alarm_message, missed_count, missed_until, admin_settled, workflow_run_id, workflow_node,
    outputs, inputs, rendered_param, slot, started_at
FROM runs WHERE id = sqlc.arg(id);

-- name: RedefineRun :exec
-- The handler and param run id is sent again with, and the param rendered
-- from a template one (NULL for another param) (RunStore.Redefine).
UPDATE runs SET handler = sqlc.arg(handler), param = sqlc.arg(param), rendered_param = sqlc.narg(rendered_param)
WHERE id = sqlc.arg(id);

-- name: MaxRunID :one
-- The largest run ID so far; 0 with no run (RunStore.MaxID).
SELECT CAST(coalesce(max(id), 0) AS BIGINT) AS max_id FROM runs;
