package store

import (
	"context"
	"fmt"
	"time"
)

// Register records a heartbeat of the executor at address for app.
func (s *Store) Register(ctx context.Context, app, address string, now time.Time) error {
	defer s.routing.Add(1)
	_, err := s.w.ExecContext(ctx,
		`INSERT INTO registry (app_name, address, updated_at) VALUES (?, ?, ?)
		 ON CONFLICT (app_name, address) DO UPDATE SET updated_at = excluded.updated_at`,
		app, address, now.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: register %s %s: %w", app, address, err)
	}
	return nil
}

// Deregister removes the executor at address from app at once.
func (s *Store) Deregister(ctx context.Context, app, address string) error {
	defer s.routing.Add(1)
	if _, err := s.w.ExecContext(ctx, `DELETE FROM registry WHERE app_name = ? AND address = ?`, app, address); err != nil {
		return fmt.Errorf("store: deregister %s %s: %w", app, address, err)
	}
	return nil
}

// Executors returns, sorted, the addresses of app's executors that
// registered at or after since.
func (s *Store) Executors(ctx context.Context, app string, since time.Time) ([]string, error) {
	rows, err := s.r.QueryContext(ctx,
		`SELECT address FROM registry WHERE app_name = ? AND updated_at >= ? ORDER BY address`, app, since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("store: executors of %s: %w", app, err)
	}
	defer rows.Close()
	var addrs []string
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return nil, fmt.Errorf("store: executors of %s: %w", app, err)
		}
		addrs = append(addrs, a)
	}
	return addrs, rows.Err()
}

// PruneRegistry deletes registrations last seen before since and returns
// how many it deleted.
func (s *Store) PruneRegistry(ctx context.Context, since time.Time) (int64, error) {
	defer s.routing.Add(1)
	res, err := s.w.ExecContext(ctx, `DELETE FROM registry WHERE updated_at < ?`, since.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("store: prune registry: %w", err)
	}
	return res.RowsAffected()
}
