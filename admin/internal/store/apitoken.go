package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
)

// APIToken describes an API token; the token itself is not kept.
type APIToken struct {
	ID         int64
	UserID     int64
	Username   string
	Name       string
	TokenHash  string
	CreatedAt  time.Time
	ExpiresAt  time.Time // zero: never
	LastUsedAt time.Time
}

// apiToken is the API token of a row of dbsqlc.Token (or Tokens: the
// same columns).
func apiToken(r dbsqlc.TokenRow) APIToken {
	return APIToken{ID: r.ID, UserID: r.UserID, Username: r.Username, Name: r.Name, TokenHash: r.TokenHash,
		CreatedAt: time.UnixMilli(r.CreatedAt), ExpiresAt: fromMillis(r.ExpiresAt), LastUsedAt: fromMillis(r.LastUsedAt)}
}

// CreateToken stores t and returns it with its ID. A name the user
// already has is ErrAlreadyExists.
func (s AuthStore) CreateToken(ctx context.Context, t APIToken, now time.Time) (APIToken, error) {
	t.CreatedAt = now.Truncate(time.Millisecond)
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		t.ID, err = dbsqlc.New(tx).CreateToken(ctx, dbsqlc.CreateTokenParams{UserID: t.UserID, Name: t.Name, TokenHash: t.TokenHash,
			CreatedAt: t.CreatedAt.UnixMilli(), ExpiresAt: millis(t.ExpiresAt)})
		return err
	})
	if isUniqueViolation(err) {
		return APIToken{}, fmt.Errorf("%w: an API token named %q", ErrAlreadyExists, t.Name)
	}
	if err != nil {
		return APIToken{}, fmt.Errorf("store: create API token: %w", err)
	}
	return s.Token(ctx, t.ID)
}

// Token returns the API token with the given ID.
func (s AuthStore) Token(ctx context.Context, id int64) (APIToken, error) {
	r, err := dbsqlc.New(s.reader(ctx)).Token(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return APIToken{}, fmt.Errorf("%w: API token %d", ErrNotFound, id)
	}
	if err != nil {
		return APIToken{}, fmt.Errorf("store: API token %d: %w", id, err)
	}
	return apiToken(r), nil
}

// Tokens returns the API tokens of a user (every user's for 0),
// ordered by ID.
func (s AuthStore) Tokens(ctx context.Context, userID int64) ([]APIToken, error) {
	rows, err := dbsqlc.New(s.reader(ctx)).Tokens(ctx, userID)
	if err != nil {
		return nil, fmt.Errorf("store: API tokens: %w", err)
	}
	ts := make([]APIToken, len(rows))
	for i, r := range rows {
		ts[i] = apiToken(dbsqlc.TokenRow(r))
	}
	return ts, nil
}

// DeleteToken revokes an API token.
func (s AuthStore) DeleteToken(ctx context.Context, id int64) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := dbsqlc.New(tx).DeleteToken(ctx, id)
		if err != nil {
			return err
		}
		return mustAffect(res, "API token", id)
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("store: delete API token %d: %w", id, err)
	}
	return err
}
