package trigger

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/internal/clock"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestSourceCache: a group's executors are read once and cached; a
// registration, or an expiry that only time brings, is seen at once or
// within sourceTTL.
// nopQueue is a Queue that drops what it is given.
type nopQueue struct{}

func (nopQueue) Enqueue(...store.Run) {}
func (nopQueue) Wake()                {}

func TestSourceCache(t *testing.T) {
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		st := be.Open(t)
		now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
		clk := clock.NewFake(now)
		tr, err := New(Config{Store: st, Clock: clk, Queue: nopQueue{}})
		if err != nil {
			t.Fatal(err)
		}
		g, err := st.Groups.Create(ctx, store.Group{AppName: "app", Title: "app", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, now)
		if err != nil {
			t.Fatal(err)
		}
		addrs := func() []string {
			t.Helper()
			src := tr.router.source(ctx, g.ID)
			if src.err != nil {
				t.Fatal(src.err)
			}
			return src.addrs
		}
		if _, err := st.Registry.Register(ctx, "app", "http://a", "", 0, now); err != nil {
			t.Fatal(err)
		}
		if got := addrs(); !slices.Equal(got, []string{"http://a"}) {
			t.Fatalf("executors = %v, want [http://a]", got)
		}
		if _, err := st.Registry.Register(ctx, "app", "http://b", "", 0, now); err != nil { // a change: seen at once
			t.Fatal(err)
		}
		if got := addrs(); !slices.Equal(got, []string{"http://a", "http://b"}) {
			t.Fatalf("after a registration: %v, want both", got)
		}
		if cached := addrs(); &cached[0] != &tr.router.sources[g.ID].src.addrs[0] {
			t.Errorf("a second read with nothing changed did not come from the cache")
		}
		// Both expire with time alone (no write): seen once the cache entry is
		// older than sourceTTL.
		clk.Add(ExecutorTTLDefault - sourceTTL/4) // still live; the cache entry is refreshed
		if got := addrs(); len(got) != 2 {
			t.Fatalf("just before expiry: %v, want both", got)
		}
		clk.Add(sourceTTL / 2) // expired, but the cache entry is younger than sourceTTL
		if got := addrs(); len(got) != 2 {
			t.Fatalf("within sourceTTL: %v, want the cached two", got)
		}
		clk.Add(sourceTTL)
		if got := addrs(); len(got) != 0 {
			t.Fatalf("after sourceTTL: %v, want none (expired)", got)
		}
	})
}
