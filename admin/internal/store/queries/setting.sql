-- name: Setting :one
SELECT value FROM settings WHERE name = sqlc.arg(name);

-- name: InitSetting :exec
INSERT INTO settings (name, value, updated_at) VALUES (sqlc.arg(name), sqlc.arg(value), sqlc.arg(updated_at));
