package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
)

// SettingStore keeps the admin's settings (Store.Settings).
type SettingStore struct{ *db }

// Get returns the value of an admin setting; ErrNotFound when unset.
func (s SettingStore) Get(ctx context.Context, name string) (string, error) {
	v, err := dbsqlc.New(s.reader(ctx)).Setting(ctx, name)
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
		q := dbsqlc.New(tx)
		v, err := q.Setting(ctx, name)
		if !errors.Is(err, sql.ErrNoRows) {
			value = v
			return err
		}
		stored = true
		return q.InitSetting(ctx, dbsqlc.InitSettingParams{Name: name, Value: value, UpdatedAt: now.UnixMilli()})
	})
	if err != nil {
		return "", false, fmt.Errorf("store: init setting %s: %w", name, err)
	}
	return value, stored, nil
}
