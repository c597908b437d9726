package server

import (
	"context"
	"sync"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
)

// instanceTTL is how long the executor processes registered at an
// address, once read, answer for it (instanceCache), as the router keeps
// a group's executors (trigger's sourceTTL).
const instanceTTL = time.Second

// instanceCache keeps the executor processes registered at each address
// (store.RegistryStore.RegisteredAt) that ReportResults checks a result's
// caller against: every call of every executor asked the database, most
// about the same few addresses (over PostgreSQL a round trip a call, a
// sixth of an admin's at 1,000 runs a second). What it holds was read at
// one routing version (store.Store.RoutingVersion: a registration written
// through this admin, or followed from another, changes it) and for at
// most instanceTTL. A caller that what it holds would refuse is checked
// against a fresh read (fresh): a stale entry may only take a result a
// fresh one would, within instanceTTL of a restart.
type instanceCache struct {
	mu      sync.Mutex
	version int64
	at      time.Time
	byAddr  map[string][]store.Instance
}

// registeredAt returns the instances registered at each of addrs, from
// the cache while the routing version is version and for instanceTTL
// after the cache was emptied at now; the addresses it does not hold are
// read with read and kept. With fresh, every address is read again.
func (c *instanceCache) registeredAt(ctx context.Context, addrs []string, version int64, now time.Time, fresh bool,
	read func(context.Context, []string) (map[string][]store.Instance, error)) (map[string][]store.Instance, error) {
	out := make(map[string][]store.Instance, len(addrs))
	c.mu.Lock()
	if c.byAddr == nil || c.version != version || now.Sub(c.at) >= instanceTTL || now.Before(c.at) {
		c.byAddr, c.version, c.at = map[string][]store.Instance{}, version, now
	}
	var missing []string
	for _, a := range addrs {
		if in, ok := c.byAddr[a]; ok && !fresh {
			if len(in) > 0 {
				out[a] = in
			}
			continue
		}
		missing = append(missing, a)
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	got, err := read(ctx, missing)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range missing {
		if in := got[a]; len(in) > 0 {
			out[a] = in
		}
		if c.version == version { // not emptied for a newer version meanwhile
			c.byAddr[a] = got[a] // nil: nothing registered there, kept too
		}
	}
	return out, nil
}
