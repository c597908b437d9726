-- name: CreateOIDCUser :one
-- A user made by its first single sign-on (SignInOIDC): no password.
INSERT INTO users (username, password_hash, role, disabled, created_at, updated_at, oidc_issuer, oidc_subject)
VALUES (sqlc.arg(username), '', sqlc.arg(role), 0, sqlc.arg(created_at), sqlc.arg(updated_at), sqlc.arg(oidc_issuer), sqlc.arg(oidc_subject))
RETURNING id;

-- name: UserByOIDC :one
SELECT id, username, password_hash, role, disabled != 0 AS disabled, created_at, updated_at, last_login_at,
    oidc_issuer, oidc_subject
FROM users WHERE oidc_issuer = sqlc.arg(oidc_issuer) AND oidc_subject = sqlc.arg(oidc_subject);

-- name: LinkOIDC :exec
UPDATE users SET oidc_issuer = sqlc.arg(oidc_issuer), oidc_subject = sqlc.arg(oidc_subject) WHERE id = sqlc.arg(id);

-- name: SetUserRole :exec
UPDATE users SET role = sqlc.arg(role), updated_at = sqlc.arg(updated_at) WHERE id = sqlc.arg(id);
