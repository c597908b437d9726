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
