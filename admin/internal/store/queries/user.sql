-- name: CreateUser :one
INSERT INTO users (username, password_hash, role, disabled, created_at, updated_at)
VALUES (sqlc.arg(username), sqlc.arg(password_hash), sqlc.arg(role), sqlc.arg(disabled), sqlc.arg(created_at), sqlc.arg(updated_at))
RETURNING id;

-- name: UserByID :one
SELECT id, username, password_hash, role, disabled != 0 AS disabled, created_at, updated_at, last_login_at,
    oidc_issuer, oidc_subject
FROM users WHERE id = sqlc.arg(id);

-- name: Users :many
SELECT id, username, password_hash, role, disabled != 0 AS disabled, created_at, updated_at, last_login_at,
    oidc_issuer, oidc_subject
FROM users ORDER BY username;

-- name: UserCount :one
SELECT count(*) FROM users;

-- name: EnabledUserCount :one
-- The enabled users of a role (keepAnAdmin).
SELECT count(*) FROM users WHERE role = sqlc.arg(role) AND disabled = 0;

-- name: UpdateUser :exec
UPDATE users SET role = sqlc.arg(role), disabled = sqlc.arg(disabled), updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id);

-- name: SetUserPassword :execresult
UPDATE users SET password_hash = sqlc.arg(password_hash), updated_at = sqlc.arg(updated_at) WHERE id = sqlc.arg(id);

-- name: ResetAdmin :exec
-- Makes a user an enabled ADMIN (role) with a new password (ResetAdmin).
UPDATE users SET password_hash = sqlc.arg(password_hash), role = sqlc.arg(role), disabled = 0, updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id);

-- name: DeleteUser :exec
DELETE FROM users WHERE id = sqlc.arg(id);

-- name: DeleteUserGroups :exec
DELETE FROM user_groups WHERE user_id = sqlc.arg(user_id);

-- name: InsertUserGroup :exec
INSERT INTO user_groups (user_id, group_id) VALUES (sqlc.arg(user_id), sqlc.arg(group_id)) ON CONFLICT DO NOTHING;

-- name: EndUserSessions :exec
-- Ends a user's sessions but keep_session (0 for none).
DELETE FROM sessions WHERE user_id = sqlc.arg(user_id) AND id != sqlc.arg(keep_session);

-- name: DeleteUserTokens :exec
DELETE FROM api_tokens WHERE user_id = sqlc.arg(user_id);
