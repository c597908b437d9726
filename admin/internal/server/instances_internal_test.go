package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/store"
)

// TestInstanceCache: the executor processes read at an address answer for
// it, without a read, while the routing version stays and for
// instanceTTL; a new version, the TTL's end or a fresh look reads again,
// and an address with nothing registered is kept as such.
func TestInstanceCache(t *testing.T) {
	const a, b = "http://10.0.0.1:9999", "http://10.0.0.2:9999"
	registered := map[string][]store.Instance{a: {{InstanceID: "one"}}}
	var reads [][]string
	read := func(_ context.Context, addrs []string) (map[string][]store.Instance, error) {
		reads = append(reads, slices.Clone(addrs))
		out := map[string][]store.Instance{}
		for _, x := range addrs {
			if in, ok := registered[x]; ok {
				out[x] = slices.Clone(in)
			}
		}
		return out, nil
	}
	var c instanceCache
	t0 := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	check := func(name string, version int64, now time.Time, fresh bool, wantRead []string, want string) {
		t.Helper()
		reads = nil
		got, err := c.registeredAt(context.Background(), []string{a, b}, version, now, fresh, read)
		if err != nil {
			t.Fatal(err)
		}
		var wantReads [][]string
		if wantRead != nil {
			wantReads = [][]string{wantRead}
		}
		if diff := cmp.Diff(wantReads, reads); diff != "" {
			t.Errorf("%s: reads (-want +got):\n%s", name, diff)
		}
		if _, ok := got[b]; ok || len(got[a]) != 1 || got[a][0].InstanceID != want {
			t.Errorf("%s: got %v, want %s at %s and nothing at %s", name, got, want, a, b)
		}
	}
	check("first", 1, t0, false, []string{a, b}, "one")
	registered[a] = []store.Instance{{InstanceID: "two"}} // restarted, not yet seen
	check("cached", 1, t0.Add(instanceTTL/2), false, nil, "one")
	check("fresh", 1, t0.Add(instanceTTL/2), true, []string{a, b}, "two")
	registered[a] = []store.Instance{{InstanceID: "three"}}
	check("new version", 2, t0.Add(instanceTTL/2), false, []string{a, b}, "three")
	registered[a] = []store.Instance{{InstanceID: "four"}}
	check("within the TTL", 2, t0.Add(instanceTTL-time.Millisecond), false, nil, "three")
	check("after the TTL", 2, t0.Add(2*instanceTTL), false, []string{a, b}, "four")
}
