package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
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
		var err error
		id, err = startSession(ctx, tx, userID, tokenHash, now, expires)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: create session: %w", err)
	}
	return id, nil
}

// startSession stores a session of the user in tx (CreateSession), and
// returns its ID.
func startSession(ctx context.Context, tx *sql.Tx, userID int64, tokenHash string, now, expires time.Time) (int64, error) {
	q := dbsqlc.New(tx)
	if err := q.DeleteExpiredSessions(ctx, now.UnixMilli()); err != nil {
		return 0, err
	}
	id, err := q.CreateSession(ctx, dbsqlc.CreateSessionParams{UserID: userID, TokenHash: tokenHash,
		CreatedAt: now.UnixMilli(), ExpiresAt: expires.UnixMilli()})
	if err != nil {
		return 0, err
	}
	return id, q.TouchLogin(ctx, dbsqlc.TouchLoginParams{LastLoginAt: millis(now), ID: userID})
}

// DeleteSession ends a session.
func (s AuthStore) DeleteSession(ctx context.Context, id int64) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := dbsqlc.New(tx).DeleteSession(ctx, id)
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
	var credID int64
	var expires, lastUsed sql.NullInt64
	var u User
	q := dbsqlc.New(s.reader(ctx))
	var err error
	switch kind {
	case auth.CredentialSession:
		var r dbsqlc.SessionPrincipalRow
		r, err = q.SessionPrincipal(ctx, tokenHash)
		credID, expires, lastUsed = r.CredentialID, sql.NullInt64{Int64: r.ExpiresAt, Valid: err == nil}, r.LastUsedAt
		u.ID, u.Username, u.Role, u.Disabled = r.UserID, r.Username, r.Role, r.Disabled
	case auth.CredentialAPIToken:
		var r dbsqlc.TokenPrincipalRow
		r, err = q.TokenPrincipal(ctx, tokenHash)
		credID, expires, lastUsed = r.CredentialID, r.ExpiresAt, r.LastUsedAt
		u.ID, u.Username, u.Role, u.Disabled = r.UserID, r.Username, r.Role, r.Disabled
	default:
		return auth.Principal{}, fmt.Errorf("%w: credential", ErrNotFound)
	}
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
			return dbsqlc.New(tx).TouchToken(ctx, dbsqlc.TouchTokenParams{LastUsedAt: millis(now), ID: credID})
		})
		if err != nil {
			return auth.Principal{}, fmt.Errorf("store: credential: %w", err)
		}
	}
	return auth.Principal{
		UserID: u.ID, Username: u.Username, Role: u.Role, Groups: us[0].Groups, Credential: kind, CredentialID: credID,
	}, nil
}
