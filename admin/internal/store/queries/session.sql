-- name: DeleteExpiredSessions :exec
DELETE FROM sessions WHERE expires_at <= sqlc.arg(now);

-- name: CreateSession :one
INSERT INTO sessions (user_id, token_hash, created_at, expires_at)
VALUES (sqlc.arg(user_id), sqlc.arg(token_hash), sqlc.arg(created_at), sqlc.arg(expires_at))
RETURNING id;

-- name: TouchLogin :exec
UPDATE users SET last_login_at = sqlc.arg(last_login_at) WHERE id = sqlc.arg(id);

-- name: DeleteSession :execresult
DELETE FROM sessions WHERE id = sqlc.arg(id);

-- name: SessionPrincipal :one
-- Who a session is, by its token hash (Principal); a session is never
-- "used", so its last_used_at is null, as TokenPrincipal's row has one.
SELECT c.id AS credential_id, c.expires_at, CAST(NULL AS BIGINT) AS last_used_at,
    u.id AS user_id, u.username, u.role, u.disabled != 0 AS disabled
FROM sessions c JOIN users u ON u.id = c.user_id
WHERE c.token_hash = sqlc.arg(token_hash);

-- name: TokenPrincipal :one
-- Who an API token is, by its hash (Principal).
SELECT c.id AS credential_id, c.expires_at, c.last_used_at,
    u.id AS user_id, u.username, u.role, u.disabled != 0 AS disabled
FROM api_tokens c JOIN users u ON u.id = c.user_id
WHERE c.token_hash = sqlc.arg(token_hash);

-- name: TouchToken :exec
UPDATE api_tokens SET last_used_at = sqlc.arg(last_used_at) WHERE id = sqlc.arg(id);
