package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// RegistryStore keeps the executors' registrations and heartbeats
// (Store.Registry).
type RegistryStore struct{ *db }

// Capabilities is what an executor declared it can do at its latest
// heartbeat (RegisterRequest.capabilities): bit n stands for the
// carillonv1.Capability numbered n.
type Capabilities uint64

// CapabilitiesOf returns the set of cs. Values past 63 are left out: no
// Capability has one.
func CapabilitiesOf(cs []carillonv1.Capability) Capabilities {
	var c Capabilities
	for _, x := range cs {
		if x > 0 && x < 64 {
			c |= 1 << x
		}
	}
	return c
}

// Has reports whether c holds x.
func (c Capabilities) Has(x carillonv1.Capability) bool {
	return x > 0 && x < 64 && c&(1<<x) != 0
}

// Register records a heartbeat of the executor process instance at
// address for app, with what it declared it can do (caps, which replace
// what it declared before), and returns the instance that registered there
// before ("" if none, or if it did not say). A different previous instance
// means the executor restarted on the same address.
func (s RegistryStore) Register(ctx context.Context, app, address, instance string, caps Capabilities, now time.Time) (previous string, err error) {
	defer s.routing.Add(1)
	err = s.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT instance_id FROM registry WHERE app_name = $1 AND address = $2`, app, address).Scan(&previous)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO registry (app_name, address, updated_at, instance_id, capabilities) VALUES ($1, $2, $3, $4, $5)
			 ON CONFLICT (app_name, address) DO UPDATE SET updated_at = excluded.updated_at, instance_id = excluded.instance_id,
			 capabilities = excluded.capabilities`,
			app, address, now.UnixMilli(), instance, int64(caps)) //nolint:gosec // a bit set of at most 63 bits
		return err
	})
	if err != nil {
		return "", fmt.Errorf("store: register %s %s: %w", app, address, err)
	}
	return previous, nil
}

// LastBeat returns the newest heartbeat in the registry: when an admin
// starts, about when the previous one stopped hearing executors. Zero when
// the registry is empty.
func (s RegistryStore) LastBeat(ctx context.Context) (time.Time, error) {
	var at sql.NullInt64
	if err := s.r.QueryRowContext(ctx, `SELECT max(updated_at) FROM registry`).Scan(&at); err != nil {
		return time.Time{}, fmt.Errorf("store: last beat: %w", err)
	}
	return fromMillis(at), nil
}

// Deregister removes the executor at address from app at once.
func (s RegistryStore) Deregister(ctx context.Context, app, address string) error {
	defer s.routing.Add(1)
	if _, err := s.exec(ctx, `DELETE FROM registry WHERE app_name = $1 AND address = $2`, app, address); err != nil {
		return fmt.Errorf("store: deregister %s %s: %w", app, address, err)
	}
	return nil
}

// Registration is an executor's latest heartbeat under an app name.
type Registration struct {
	// Address is the executor's.
	Address string
	// Capabilities is what it declared at that heartbeat.
	Capabilities Capabilities
}

// List returns, sorted by address, app's executors that
// registered at or after since, each with what it declared it can do.
func (s RegistryStore) List(ctx context.Context, app string, since time.Time) ([]Registration, error) {
	rows, err := s.reader(ctx).QueryContext(ctx,
		`SELECT address, capabilities FROM registry WHERE app_name = $1 AND updated_at >= $2 ORDER BY address`, app, since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("store: executors of %s: %w", app, err)
	}
	defer rows.Close()
	var regs []Registration
	for rows.Next() {
		var r Registration
		var caps int64
		if err := rows.Scan(&r.Address, &caps); err != nil {
			return nil, fmt.Errorf("store: executors of %s: %w", app, err)
		}
		r.Capabilities = Capabilities(caps) //nolint:gosec // stored from a Capabilities
		regs = append(regs, r)
	}
	return regs, rows.Err()
}

// Executors returns, sorted, the addresses of app's executors that
// registered at or after since.
func (s RegistryStore) Executors(ctx context.Context, app string, since time.Time) ([]string, error) {
	regs, err := s.List(ctx, app, since)
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, r := range regs {
		addrs = append(addrs, r.Address)
	}
	return addrs, nil
}

// CapabilitiesAt returns what the executor at each of addresses declared
// it can do at its newest heartbeat at or after since, under whatever app
// name: the executors of a MANUAL group, which come from its addresses,
// may register too. Addresses with no such heartbeat are left out.
func (s RegistryStore) CapabilitiesAt(ctx context.Context, addresses []string, since time.Time) (map[string]Capabilities, error) {
	caps := make(map[string]Capabilities, len(addresses))
	if len(addresses) == 0 {
		return caps, nil
	}
	var a args
	in := addList(&a, addresses)
	rows, err := s.reader(ctx).QueryContext(ctx, `SELECT address, capabilities FROM registry WHERE address IN (`+in+`) AND updated_at >= `+a.add(since.UnixMilli())+` ORDER BY updated_at`, a...) //nolint:gosec // placeholders only
	if err != nil {
		return nil, fmt.Errorf("store: capabilities of executors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a string
		var c int64
		if err := rows.Scan(&a, &c); err != nil {
			return nil, fmt.Errorf("store: capabilities of executors: %w", err)
		}
		caps[a] = Capabilities(c) //nolint:gosec // stored from a Capabilities; the newest heartbeat comes last
	}
	return caps, rows.Err()
}

// Beats returns the last heartbeat of each of app's executors that
// registered at or after since, by address.
func (s RegistryStore) Beats(ctx context.Context, app string, since time.Time) (map[string]time.Time, error) {
	rows, err := s.reader(ctx).QueryContext(ctx,
		`SELECT address, updated_at FROM registry WHERE app_name = $1 AND updated_at >= $2`, app, since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("store: beats of %s: %w", app, err)
	}
	defer rows.Close()
	beats := map[string]time.Time{}
	for rows.Next() {
		var a string
		var at int64
		if err := rows.Scan(&a, &at); err != nil {
			return nil, fmt.Errorf("store: beats of %s: %w", app, err)
		}
		beats[a] = time.UnixMilli(at)
	}
	return beats, rows.Err()
}

// Prune deletes registrations last seen before since and returns
// how many it deleted.
func (s RegistryStore) Prune(ctx context.Context, since time.Time) (int64, error) {
	defer s.routing.Add(1)
	res, err := s.exec(ctx, `DELETE FROM registry WHERE updated_at < $1`, since.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("store: prune registry: %w", err)
	}
	return res.RowsAffected()
}

// Online returns, for the app name of every AUTO group, how many
// executors registered under it at or after since (0 for none). Apps
// without a group are left out, so the answer has one entry per group at
// most.
func (s RegistryStore) Online(ctx context.Context, since time.Time) (map[string]int, error) {
	rows, err := s.reader(ctx).QueryContext(ctx, `SELECT g.app_name, COUNT(r.address) FROM groups g
		LEFT JOIN registry r ON r.app_name = g.app_name AND r.updated_at >= $1
		WHERE g.address_mode != $2 GROUP BY g.app_name`, since.UnixMilli(), int32(carillonv1.AddressMode_ADDRESS_MODE_MANUAL))
	if err != nil {
		return nil, fmt.Errorf("store: executors online: %w", err)
	}
	defer rows.Close()
	online := map[string]int{}
	for rows.Next() {
		var app string
		var n int
		if err := rows.Scan(&app, &n); err != nil {
			return nil, fmt.Errorf("store: executors online: %w", err)
		}
		online[app] = n
	}
	return online, rows.Err()
}

// UnclaimedApps returns, sorted, the app names of executors that
// registered at or after since and that no group has.
func (s RegistryStore) UnclaimedApps(ctx context.Context, since time.Time) ([]string, error) {
	apps, err := collectColumn[string](s.reader(ctx).QueryContext(ctx,
		`SELECT DISTINCT app_name FROM registry WHERE updated_at >= $1 AND app_name NOT IN (SELECT app_name FROM groups) ORDER BY app_name`,
		since.UnixMilli()))
	if err != nil {
		return nil, fmt.Errorf("store: unclaimed apps: %w", err)
	}
	return apps, nil
}

// AppClaimed tells whether a group has the app name app.
func (s RegistryStore) AppClaimed(ctx context.Context, app string) (bool, error) {
	var n int
	if err := s.reader(ctx).QueryRowContext(ctx, `SELECT count(*) FROM groups WHERE app_name = $1`, app).Scan(&n); err != nil {
		return false, fmt.Errorf("store: group of app %s: %w", app, err)
	}
	return n > 0, nil
}

// Instance is one executor process registered at an address, under
// some app name.
type Instance struct {
	InstanceID   string
	Capabilities Capabilities
}

// RegisteredAt returns the instances registered at each of addresses, of any age
// and app name; addresses nothing registered at are left out.
func (s RegistryStore) RegisteredAt(ctx context.Context, addresses []string) (map[string][]Instance, error) {
	out := make(map[string][]Instance, len(addresses))
	if len(addresses) == 0 {
		return out, nil
	}
	var a args
	rows, err := s.reader(ctx).QueryContext(ctx, `SELECT address, instance_id, capabilities FROM registry WHERE address IN (`+addList(&a, addresses)+`)`, a...) //nolint:gosec // placeholders only
	if err != nil {
		return nil, fmt.Errorf("store: registrations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a string
		var r Instance
		var c int64
		if err := rows.Scan(&a, &r.InstanceID, &c); err != nil {
			return nil, fmt.Errorf("store: registrations: %w", err)
		}
		r.Capabilities = Capabilities(c) //nolint:gosec // stored from a Capabilities
		out[a] = append(out[a], r)
	}
	return out, rows.Err()
}
