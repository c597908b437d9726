-- name: InsertGroup :one
INSERT INTO groups (app_name, title, address_mode, addresses, executor_protocol, allow_scripts, created_at, updated_at, max_concurrency)
VALUES (sqlc.arg(app_name), sqlc.arg(title), sqlc.arg(address_mode), sqlc.arg(addresses), sqlc.arg(executor_protocol),
    sqlc.arg(allow_scripts), sqlc.arg(created_at), sqlc.arg(updated_at), sqlc.arg(max_concurrency))
RETURNING id;

-- name: GroupByApp :one
SELECT id, app_name, title, address_mode, addresses, executor_token != '' AS has_own_token, executor_protocol,
    allow_scripts != 0 AS allow_scripts, paused_at, created_at, updated_at, max_concurrency
FROM groups WHERE app_name = sqlc.arg(app_name);

-- name: GroupByID :one
SELECT id, app_name, title, address_mode, addresses, executor_token != '' AS has_own_token, executor_protocol,
    allow_scripts != 0 AS allow_scripts, paused_at, created_at, updated_at, max_concurrency
FROM groups WHERE id = sqlc.arg(id);

-- name: Groups :many
SELECT id, app_name, title, address_mode, addresses, executor_token != '' AS has_own_token, executor_protocol,
    allow_scripts != 0 AS allow_scripts, paused_at, created_at, updated_at, max_concurrency
FROM groups ORDER BY app_name;

-- name: UpdateGroup :execresult
UPDATE groups SET app_name = sqlc.arg(app_name), title = sqlc.arg(title), address_mode = sqlc.arg(address_mode),
    addresses = sqlc.arg(addresses), executor_protocol = sqlc.arg(executor_protocol), allow_scripts = sqlc.arg(allow_scripts),
    updated_at = sqlc.arg(updated_at), max_concurrency = sqlc.arg(max_concurrency)
WHERE id = sqlc.arg(id);

-- name: CapGroupJobs :exec
-- A job is capped when it or its group has a concurrency cap (Job.Capped).
UPDATE jobs SET capped = CASE WHEN max_concurrency > 0 OR CAST(sqlc.arg(group_cap) AS BIGINT) > 0 THEN 1 ELSE 0 END
WHERE group_id = sqlc.arg(group_id)
    AND capped <> CASE WHEN max_concurrency > 0 OR CAST(sqlc.arg(group_cap) AS BIGINT) > 0 THEN 1 ELSE 0 END;

-- name: GroupJobCount :one
SELECT count(*) FROM jobs WHERE group_id = sqlc.arg(group_id);

-- name: GroupWorkflowCount :one
SELECT count(*) FROM workflows WHERE group_id = sqlc.arg(group_id);

-- name: DeleteGroup :execresult
DELETE FROM groups WHERE id = sqlc.arg(id);

-- name: SetGroupToken :execresult
UPDATE groups SET executor_token = sqlc.arg(executor_token), updated_at = sqlc.arg(updated_at) WHERE id = sqlc.arg(id);

-- name: GroupTokens :many
SELECT id, app_name, executor_token FROM groups WHERE executor_token != '';
