package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// SettingStore keeps the admin's settings (Store.Settings).
type SettingStore struct{ *db }

// Get returns the value of an admin setting; ErrNotFound when unset.
func (s SettingStore) Get(ctx context.Context, name string) (string, error) {
	var v string
	err := s.reader(ctx).QueryRowContext(ctx, `SELECT value FROM settings WHERE name = $1`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("%w: setting %s", ErrNotFound, name)
	}
	if err != nil {
		return "", fmt.Errorf("store: setting %s: %w", name, err)
	}
	return v, nil
}

// Init stores value under name unless the setting exists, and
// returns the value in force and whether it was stored now.
func (s SettingStore) Init(ctx context.Context, name, value string, now time.Time) (string, bool, error) {
	stored := false
	err := s.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = $1`, name).Scan(&value)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		stored = true
		_, err = tx.ExecContext(ctx, `INSERT INTO settings (name, value, updated_at) VALUES ($1, $2, $3)`, name, value, millis(now))
		return err
	})
	if err != nil {
		return "", false, fmt.Errorf("store: init setting %s: %w", name, err)
	}
	return value, stored, nil
}
