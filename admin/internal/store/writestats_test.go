package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func TestObserveWrites(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, sqliteDB(t)) // the wait for SQLite's one writer connection
	var mu sync.Mutex
	var held []time.Duration
	s.ObserveWrites(func(d time.Duration) {
		mu.Lock()
		held = append(held, d)
		mu.Unlock()
	})
	if _, err := s.Groups.Create(context.Background(), store.Group{AppName: "other", Title: "Other"}, t0); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	n := len(held)
	mu.Unlock()
	if n != 1 || held[0] <= 0 {
		t.Errorf("after one write transaction the observer saw %v, want one positive duration", held)
	}
	if w := s.WritesWaiting(); w != 0 {
		t.Errorf("WritesWaiting() = %d with no write under way, want 0", w)
	}
	s.ObserveWrites(nil)
	if _, err := s.Groups.Create(context.Background(), store.Group{AppName: "third", Title: "Third"}, t0); err != nil {
		t.Fatal(err)
	}
	if len(held) != 1 {
		t.Errorf("the observer was removed but saw %d writes", len(held))
	}
	size, err := s.Size()
	if err != nil || size <= 0 {
		t.Errorf("Size() = %d, %v; want a positive size", size, err)
	}
}

// TestSize: the database's size, on either backend.
func TestSize(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			s, _ := setup(t, be.DB(t))
			if size, err := s.Size(); err != nil || size <= 0 {
				t.Errorf("Size() = %d, %v; want a positive size", size, err)
			}
		})
	}
}

func TestExecutorsOnline(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			testExecutorsOnline(t, be.DB(t))
		})
	}
}

func testExecutorsOnline(t *testing.T, db string) {
	t.Helper()
	s, _ := setup(t, db) // group "app", AUTO
	ctx := context.Background()
	if _, err := s.Groups.Create(ctx, store.Group{AppName: "manual", Title: "Manual",
		AddressMode: carillonv1.AddressMode_ADDRESS_MODE_MANUAL, Addresses: []string{"http://127.0.0.1:1"}}, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Groups.Create(ctx, store.Group{AppName: "idle", Title: "Idle"}, t0); err != nil {
		t.Fatal(err)
	}
	for _, reg := range []struct {
		app, addr string
		at        time.Time
	}{
		{"app", "http://127.0.0.1:9001", t0},
		{"app", "http://127.0.0.1:9002", t0.Add(-time.Hour)}, // expired
		{"app", "http://127.0.0.1:9003", t0.Add(time.Second)},
		{"nogroup", "http://127.0.0.1:9004", t0}, // no group: left out
	} {
		if _, err := s.Registry.Register(ctx, reg.app, reg.addr, "", 0, reg.at); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Registry.Online(ctx, t0.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"app": 2, "idle": 0}, got); diff != "" {
		t.Errorf("ExecutorsOnline (-want +got):\n%s", diff)
	}
}
