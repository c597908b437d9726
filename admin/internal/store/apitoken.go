package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
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

const apiTokenColumns = `t.id, t.user_id, u.username, t.name, t.token_hash, t.created_at, t.expires_at, t.last_used_at` //nolint:gosec // column names, not a credential

func scanAPIToken(row interface{ Scan(...any) error }) (APIToken, error) {
	var t APIToken
	var created, expires, used sql.NullInt64
	if err := row.Scan(&t.ID, &t.UserID, &t.Username, &t.Name, &t.TokenHash, &created, &expires, &used); err != nil {
		return APIToken{}, err
	}
	t.CreatedAt, t.ExpiresAt, t.LastUsedAt = fromMillis(created), fromMillis(expires), fromMillis(used)
	return t, nil
}

// CreateToken stores t and returns it with its ID. A name the user
// already has is ErrAlreadyExists.
func (s AuthStore) CreateToken(ctx context.Context, t APIToken, now time.Time) (APIToken, error) {
	t.CreatedAt = now.Truncate(time.Millisecond)
	err := s.write(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `INSERT INTO api_tokens (user_id, name, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
			t.UserID, t.Name, t.TokenHash, millis(t.CreatedAt), millis(t.ExpiresAt)).Scan(&t.ID)
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
	t, err := scanAPIToken(s.reader(ctx).QueryRowContext(ctx,
		`SELECT `+apiTokenColumns+` FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return APIToken{}, fmt.Errorf("%w: API token %d", ErrNotFound, id)
	}
	if err != nil {
		return APIToken{}, fmt.Errorf("store: API token %d: %w", id, err)
	}
	return t, nil
}

// Tokens returns the API tokens of a user (every user's for 0),
// ordered by ID.
func (s AuthStore) Tokens(ctx context.Context, userID int64) ([]APIToken, error) {
	rows, err := s.reader(ctx).QueryContext(ctx,
		`SELECT `+apiTokenColumns+` FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE $1 = 0 OR t.user_id = $2 ORDER BY t.id`,
		userID, userID)
	if err != nil {
		return nil, fmt.Errorf("store: API tokens: %w", err)
	}
	defer rows.Close()
	var ts []APIToken
	for rows.Next() {
		t, err := scanAPIToken(rows)
		if err != nil {
			return nil, fmt.Errorf("store: API tokens: %w", err)
		}
		ts = append(ts, t)
	}
	return ts, rows.Err()
}

// DeleteToken revokes an API token.
func (s AuthStore) DeleteToken(ctx context.Context, id int64) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM api_tokens WHERE id = $1`, id)
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
