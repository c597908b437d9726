-- name: RegisteredInstance :one
-- The instance that registered last at address for app (Register).
SELECT instance_id FROM registry WHERE app_name = sqlc.arg(app_name) AND address = sqlc.arg(address);

-- name: Register :exec
-- A heartbeat: the registration of the executor at address for app,
-- made or renewed.
INSERT INTO registry (app_name, address, updated_at, instance_id, capabilities)
VALUES (sqlc.arg(app_name), sqlc.arg(address), sqlc.arg(updated_at), sqlc.arg(instance_id), sqlc.arg(capabilities))
ON CONFLICT (app_name, address) DO UPDATE SET updated_at = excluded.updated_at, instance_id = excluded.instance_id,
    capabilities = excluded.capabilities;

-- name: Deregister :exec
DELETE FROM registry WHERE app_name = sqlc.arg(app_name) AND address = sqlc.arg(address);

-- name: Registrations :many
-- App's executors that registered at or after since, by address.
SELECT address, capabilities FROM registry WHERE app_name = sqlc.arg(app_name) AND updated_at >= sqlc.arg(since) ORDER BY address;

-- name: Beats :many
-- The last heartbeat of each of app's executors that registered at or
-- after since.
SELECT address, updated_at FROM registry WHERE app_name = sqlc.arg(app_name) AND updated_at >= sqlc.arg(since);

-- name: PruneRegistry :execrows
DELETE FROM registry WHERE updated_at < sqlc.arg(since);

-- name: ExecutorsOnline :many
-- For each group whose address mode is not address_mode (MANUAL), how
-- many executors registered under its app name at or after since.
SELECT g.app_name, COUNT(r.address) FROM groups g
    LEFT JOIN registry r ON r.app_name = g.app_name AND r.updated_at >= sqlc.arg(since)
WHERE g.address_mode != sqlc.arg(address_mode) GROUP BY g.app_name;

-- name: UnclaimedApps :many
-- The app names registered at or after since that no group has.
SELECT DISTINCT r.app_name FROM registry r
WHERE r.updated_at >= sqlc.arg(since) AND r.app_name NOT IN (SELECT g.app_name FROM groups g) ORDER BY r.app_name;

-- name: AppGroupCount :one
SELECT count(*) FROM groups WHERE app_name = sqlc.arg(app_name);
