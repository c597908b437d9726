-- name: InsertAuditEntry :one
INSERT INTO audit_log (at, user_id, username, action, target, detail, peer)
VALUES (sqlc.arg(at), sqlc.arg(user_id), sqlc.arg(username), sqlc.arg(action), sqlc.arg(target), sqlc.arg(detail), sqlc.arg(peer))
RETURNING id;

-- name: CompleteAuditEntry :exec
-- What only a call's response tells, set on its entry (AuditStore.Complete).
UPDATE audit_log SET target = sqlc.arg(target), user_id = sqlc.arg(user_id), username = sqlc.arg(username) WHERE id = sqlc.arg(id);
