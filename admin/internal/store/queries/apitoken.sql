-- name: CreateToken :one
INSERT INTO api_tokens (user_id, name, token_hash, created_at, expires_at)
VALUES (sqlc.arg(user_id), sqlc.arg(name), sqlc.arg(token_hash), sqlc.arg(created_at), sqlc.narg(expires_at))
RETURNING id;

-- name: Token :one
SELECT t.id, t.user_id, u.username, t.name, t.token_hash, t.created_at, t.expires_at, t.last_used_at
FROM api_tokens t JOIN users u ON u.id = t.user_id
WHERE t.id = sqlc.arg(id);

-- name: Tokens :many
-- A user's tokens; every user's for user_id 0.
SELECT t.id, t.user_id, u.username, t.name, t.token_hash, t.created_at, t.expires_at, t.last_used_at
FROM api_tokens t JOIN users u ON u.id = t.user_id
WHERE t.user_id = sqlc.arg(user_id) OR sqlc.arg(user_id) = 0
ORDER BY t.id;

-- name: DeleteToken :execresult
DELETE FROM api_tokens WHERE id = sqlc.arg(id);
