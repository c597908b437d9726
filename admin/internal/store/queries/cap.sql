-- name: RunsWaitingForSlot :many
-- Group group_id's pending runs waiting for a concurrency slot (slot 2,
-- SlotWaiting; status 7, PENDING), oldest due first: runColumns, as
-- RunByID reads them (FireStore.Waiting).
SELECT id, job_id, group_id, executor_address, handler, param, shard_index, shard_total, trigger_type,
    scheduled_at, triggered_at, trigger_message, status, message, finished_at, attempt, due_at, timeout_seconds,
    alarm_status, alarm_message, missed_count, missed_until, admin_settled, workflow_run_id, workflow_node,
    outputs, inputs, rendered_param, slot, started_at
FROM runs WHERE slot = 2 AND status = 7 AND group_id = sqlc.arg(group_id)
ORDER BY due_at, id LIMIT CAST(sqlc.arg(max_rows) AS BIGINT);
