package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/carillonhq/carillon/admin/internal/auth"
)

// AuthStore keeps who may call the API: console sessions, API tokens and
// OIDC sign-ins (Store.Auth).
type AuthStore struct{ *db }

// CreateSession stores a session of the user by its token hash, expiring
// at expires, records the login time, and drops expired sessions. It
// returns the session's ID.
func (s AuthStore) CreateSession(ctx context.Context, userID int64, tokenHash string, now, expires time.Time) (int64, error) {
	var id int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= $1`, millis(now)); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `INSERT INTO sessions (user_id, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4) RETURNING id`,
			userID, tokenHash, millis(now), millis(expires)).Scan(&id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE users SET last_login_at = $1 WHERE id = $2`, millis(now), userID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: create session: %w", err)
	}
	return id, nil
}

// DeleteSession ends a session.
func (s AuthStore) DeleteSession(ctx context.Context, id int64) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = $1`, id)
		if err != nil {
			return err
		}
		return mustAffect(res, "session", id)
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("store: delete session %d: %w", id, err)
	}
	return err
}

// apiTokenTouchEvery is how stale an API token's last_used_at may get
// before a use writes it again: a write per request would cost more than
// the answer is worth.
const apiTokenTouchEvery = time.Minute

// Principal returns who a credential belongs to, by its kind and token
// hash. An unknown or expired credential, or one of a disabled user, is
// ErrNotFound.
func (s AuthStore) Principal(ctx context.Context, kind auth.CredentialKind, tokenHash string, now time.Time) (auth.Principal, error) {
	var q string
	switch kind {
	case auth.CredentialSession:
		q = `SELECT c.id, c.expires_at, NULL, ` + qualifyColumns("u.", principalColumns) + ` FROM sessions c JOIN users u ON u.id = c.user_id WHERE c.token_hash = $1`
	case auth.CredentialAPIToken:
		q = `SELECT c.id, c.expires_at, c.last_used_at, ` + qualifyColumns("u.", principalColumns) + ` FROM api_tokens c JOIN users u ON u.id = c.user_id WHERE c.token_hash = $1`
	default:
		return auth.Principal{}, fmt.Errorf("%w: credential", ErrNotFound)
	}
	var credID int64
	var expires, lastUsed, created, updated, login sql.NullInt64
	var u User
	err := s.reader(ctx).QueryRowContext(ctx, q, tokenHash).Scan(&credID, &expires, &lastUsed,
		&u.ID, &u.Username, &u.PasswordHash, &u.Role, &u.Disabled, &created, &updated, &login)
	if errors.Is(err, sql.ErrNoRows) {
		return auth.Principal{}, fmt.Errorf("%w: credential", ErrNotFound)
	}
	if err != nil {
		return auth.Principal{}, fmt.Errorf("store: credential: %w", err)
	}
	if (expires.Valid && expires.Int64 <= now.UnixMilli()) || u.Disabled {
		return auth.Principal{}, fmt.Errorf("%w: credential (expired, or its user is disabled)", ErrNotFound)
	}
	us := []User{u}
	if u.Role == auth.RoleMember {
		if err := userGroups(ctx, s.r, us); err != nil {
			return auth.Principal{}, fmt.Errorf("store: credential: %w", err)
		}
	}
	if kind == auth.CredentialAPIToken && (!lastUsed.Valid || now.Sub(fromMillis(lastUsed)) >= apiTokenTouchEvery) {
		err := s.write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE api_tokens SET last_used_at = $1 WHERE id = $2`, millis(now), credID)
			return err
		})
		if err != nil {
			return auth.Principal{}, fmt.Errorf("store: credential: %w", err)
		}
	}
	return auth.Principal{
		UserID: u.ID, Username: u.Username, Role: u.Role, Groups: us[0].Groups, Credential: kind, CredentialID: credID,
	}, nil
}

func qualifyColumns(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
