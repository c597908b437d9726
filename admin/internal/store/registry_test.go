package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestRegistryCapabilities: each heartbeat stores what the executor
// declared, replacing what it declared before; the registrations of an
// app and the newest at each address (a MANUAL group's executors) read it
// back; and an admin that starts over the database (SQLite), or another
// admin sharing it (PostgreSQL), reads what this one stored, the latter
// seeing a change at once in its RoutingVersion even when only the
// capabilities changed.
func TestRegistryCapabilities(t *testing.T) {
	t.Parallel()
	dueAt := store.CapabilitiesOf([]carillonv1.Capability{carillonv1.Capability_CAPABILITY_DUE_AT})
	if !dueAt.Has(carillonv1.Capability_CAPABILITY_DUE_AT) || store.Capabilities(0).Has(carillonv1.Capability_CAPABILITY_DUE_AT) {
		t.Fatalf("CapabilitiesOf(DUE_AT) = %b: Has does not tell", dueAt)
	}
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := be.DB(t)
			s, _ := setup(t, db)
			since := t0.Add(-90 * time.Second)
			register := func(s *store.Store, app, address string, caps store.Capabilities, at time.Time) {
				t.Helper()
				if _, err := s.Registry.Register(ctx, app, address, "i", caps, at); err != nil {
					t.Fatal(err)
				}
			}
			register(s, "app", "http://a:1", dueAt, t0)
			register(s, "app", "http://b:1", dueAt, t0)
			register(s, "app", "http://b:1", 0, t0) // an older SDK at the same address
			register(s, "app", "http://c:1", dueAt, t0.Add(-2*time.Minute))
			register(s, "manual", "http://m:1", 0, t0.Add(-time.Second))
			register(s, "other", "http://m:1", dueAt, t0) // the newest heartbeat at the address

			want := []store.Registration{{Address: "http://a:1", Capabilities: dueAt}, {Address: "http://b:1"}}
			wantAt := map[string]store.Capabilities{"http://a:1": dueAt, "http://b:1": 0, "http://m:1": dueAt}
			check := func(s *store.Store, who string) {
				t.Helper()
				got, err := s.Registry.List(ctx, "app", since)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: registrations of app (-want +got):\n%s", who, diff)
				}
				at, err := s.Registry.CapabilitiesAt(ctx, []string{"http://a:1", "http://b:1", "http://c:1", "http://m:1", "http://x:1"}, since)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(wantAt, at); diff != "" {
					t.Errorf("%s: capabilities by address, of live registrations only (-want +got):\n%s", who, diff)
				}
			}
			check(s, "the admin that stored them")

			if be.Name == "sqlite" {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				next, err := store.Open(ctx, db)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { next.Close() })
				check(next, "the next admin")
				return
			}
			other, err := store.Open(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { other.Close() })
			start(t, other.FollowLoop())
			check(other, "another admin")
			// Only the capabilities change (the same heartbeat time): the
			// other admin's routing caches are told within its follow
			// interval.
			v := other.RoutingVersion()
			register(s, "app", "http://b:1", dueAt, t0)
			wait, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if !other.Followed().Await(wait, func() bool { return other.RoutingVersion() != v }) {
				t.Fatal("another admin's RoutingVersion did not change within 10 s of a change of capabilities")
			}
			want[1].Capabilities, wantAt["http://b:1"] = dueAt, dueAt
			check(other, "another admin, after the change")
		})
	}
}

// TestRegistryBeatsAndApps: Beats gives the last heartbeat of each of an
// app's executors since a time; UnclaimedApps the app names heard since a
// time that no group has; AppClaimed whether a group has one; Prune
// deletes the registrations last seen before a time, counting them, and
// LastBeat is zero once none is left. Over both backends.
func TestRegistryBeatsAndApps(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, _ := setup(t, be.DB(t)) // group "app"
			for _, reg := range []struct {
				app, addr string
				at        time.Time
			}{
				{"app", "http://a:1", t0},
				{"app", "http://b:1", t0.Add(-2 * time.Minute)},
				{"stray", "http://a:1", t0.Add(time.Second)},
				{"old", "http://o:1", t0.Add(-3 * time.Minute)},
			} {
				if _, err := s.Registry.Register(ctx, reg.app, reg.addr, "", 0, reg.at); err != nil {
					t.Fatal(err)
				}
			}
			since := t0.Add(-90 * time.Second)
			beats := func(what string, since time.Time, want map[string]time.Time) {
				t.Helper()
				got, err := s.Registry.Beats(ctx, "app", since)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: beats of app (-want +got):\n%s", what, diff)
				}
			}
			unclaimed := func(what string, since time.Time, want []string) {
				t.Helper()
				got, err := s.Registry.UnclaimedApps(ctx, since)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: unclaimed apps (-want +got):\n%s", what, diff)
				}
			}
			beats("live", since, map[string]time.Time{"http://a:1": t0})
			beats("all", time.Time{}, map[string]time.Time{"http://a:1": t0, "http://b:1": t0.Add(-2 * time.Minute)})
			unclaimed("live", since, []string{"stray"})
			unclaimed("all", time.Time{}, []string{"old", "stray"})
			for app, want := range map[string]bool{"app": true, "stray": false} {
				if got, err := s.Registry.AppClaimed(ctx, app); err != nil || got != want {
					t.Errorf("AppClaimed(%s) = %v, %v; want %v", app, got, err, want)
				}
			}

			if n, err := s.Registry.Prune(ctx, since); err != nil || n != 2 {
				t.Errorf("Prune: %d, %v; want 2 (app at http://b:1, old)", n, err)
			}
			beats("pruned", time.Time{}, map[string]time.Time{"http://a:1": t0})
			unclaimed("pruned", time.Time{}, []string{"stray"})
			if last, err := s.Registry.LastBeat(ctx); err != nil || !last.Equal(t0.Add(time.Second)) {
				t.Errorf("LastBeat = %v, %v; want %v", last, err, t0.Add(time.Second))
			}
			if n, err := s.Registry.Prune(ctx, t0.Add(time.Hour)); err != nil || n != 2 {
				t.Errorf("Prune of the rest: %d, %v; want 2", n, err)
			}
			if last, err := s.Registry.LastBeat(ctx); err != nil || !last.IsZero() {
				t.Errorf("LastBeat of an empty registry = %v, %v; want zero", last, err)
			}
		})
	}
}
