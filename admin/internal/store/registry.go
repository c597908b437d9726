package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
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
		q := dbsqlc.New(tx)
		var err error
		previous, err = q.RegisteredInstance(ctx, dbsqlc.RegisteredInstanceParams{AppName: app, Address: address})
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return q.Register(ctx, dbsqlc.RegisterParams{AppName: app, Address: address, UpdatedAt: now.UnixMilli(), InstanceID: instance,
			Capabilities: int64(caps)}) //nolint:gosec // a bit set of at most 63 bits
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
	err := s.execQuery(func(q *dbsqlc.Queries) error {
		return q.Deregister(ctx, dbsqlc.DeregisterParams{AppName: app, Address: address})
	})
	if err != nil {
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
	rows, err := dbsqlc.New(s.reader(ctx)).Registrations(ctx, dbsqlc.RegistrationsParams{AppName: app, Since: since.UnixMilli()})
	if err != nil {
		return nil, fmt.Errorf("store: executors of %s: %w", app, err)
	}
	var regs []Registration
	for _, r := range rows {
		regs = append(regs, Registration{Address: r.Address, Capabilities: Capabilities(r.Capabilities)}) //nolint:gosec // stored from a Capabilities
	}
	return regs, nil
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
	rows, err := dbsqlc.New(s.reader(ctx)).Beats(ctx, dbsqlc.BeatsParams{AppName: app, Since: since.UnixMilli()})
	if err != nil {
		return nil, fmt.Errorf("store: beats of %s: %w", app, err)
	}
	beats := make(map[string]time.Time, len(rows))
	for _, r := range rows {
		beats[r.Address] = time.UnixMilli(r.UpdatedAt)
	}
	return beats, nil
}

// Prune deletes registrations last seen before since and returns
// how many it deleted.
func (s RegistryStore) Prune(ctx context.Context, since time.Time) (int64, error) {
	defer s.routing.Add(1)
	var n int64
	err := s.execQuery(func(q *dbsqlc.Queries) (err error) {
		n, err = q.PruneRegistry(ctx, since.UnixMilli())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: prune registry: %w", err)
	}
	return n, nil
}

// Online returns, for the app name of every AUTO group, how many
// executors registered under it at or after since (0 for none). Apps
// without a group are left out, so the answer has one entry per group at
// most.
func (s RegistryStore) Online(ctx context.Context, since time.Time) (map[string]int, error) {
	rows, err := dbsqlc.New(s.reader(ctx)).ExecutorsOnline(ctx, dbsqlc.ExecutorsOnlineParams{Since: since.UnixMilli(),
		AddressMode: carillonv1.AddressMode_ADDRESS_MODE_MANUAL})
	if err != nil {
		return nil, fmt.Errorf("store: executors online: %w", err)
	}
	online := make(map[string]int, len(rows))
	for _, r := range rows {
		online[r.AppName] = int(r.Count)
	}
	return online, nil
}

// UnclaimedApps returns, sorted, the app names of executors that
// registered at or after since and that no group has.
func (s RegistryStore) UnclaimedApps(ctx context.Context, since time.Time) ([]string, error) {
	apps, err := dbsqlc.New(s.reader(ctx)).UnclaimedApps(ctx, since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("store: unclaimed apps: %w", err)
	}
	return apps, nil
}

// AppClaimed tells whether a group has the app name app.
func (s RegistryStore) AppClaimed(ctx context.Context, app string) (bool, error) {
	n, err := dbsqlc.New(s.reader(ctx)).AppGroupCount(ctx, app)
	if err != nil {
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
