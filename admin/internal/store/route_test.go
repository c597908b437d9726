package store_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the admins table, changed directly

	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/service"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// runningRun claims a run of a new job of b's group and returns its ID.
func runningRun(t *testing.T, s *store.Store, b *bundle) int64 {
	t.Helper()
	j, err := s.Jobs.Create(context.Background(), newJob(b.group.ID, time.Time{}), t0)
	if err != nil {
		t.Fatal(err)
	}
	return running(t, s, j, t0, 0, 1).ID
}

// TestRouteRuns: a route is recorded for a running run with no dispatch
// recorded, and for no other; a dispatch record does not replace one on
// another executor, and a failure it does not record settles nothing.
func TestRouteRuns(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			fresh, recorded, settled := runningRun(t, s, b), runningRun(t, s, b), runningRun(t, s, b)
			if _, err := s.Runs.RecordDispatches(ctx, followup.Policy{}, []store.Dispatch{{RunID: recorded, ExecutorAddress: "http://a:1", ShardTotal: 1}}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: settled, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: t0}}); err != nil {
				t.Fatal(err)
			}
			routed, err := s.Runs.Route(ctx, []store.Route{{RunID: fresh, Address: "http://b:1"}, {RunID: recorded, Address: "http://b:1"},
				{RunID: settled, Address: "http://b:1"}})
			if err != nil {
				t.Fatal(err)
			}
			if !routed[fresh] || routed[recorded] || routed[settled] || len(routed) != 1 {
				t.Errorf("RouteRuns recorded %v, want only run %d (running, no dispatch recorded)", routed, fresh)
			}
			ids, err := s.Runs.UnsentIDs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids, []int64{fresh}) {
				t.Errorf("UnsentRunIDs = %v, want [%d]: the running run with no dispatch recorded", ids, fresh)
			}
			unsent, err := s.Runs.Unsent(ctx, []int64{fresh, recorded, settled})
			if err != nil {
				t.Fatal(err)
			}
			if len(unsent) != 1 || unsent[0].ID != fresh || unsent[0].RoutedTo != "http://b:1" {
				t.Errorf("UnsentRuns = %+v, want run %d routed to http://b:1", unsent, fresh)
			}
			// A failed send to another executor than the one recorded
			// neither replaces the record nor settles the run.
			if _, err := s.Runs.RecordDispatches(ctx, followup.Policy{}, []store.Dispatch{{RunID: recorded, ExecutorAddress: "http://b:1", ShardTotal: 1,
				Failed: true, Message: "refused", FinishedAt: t0}}); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Runs.Get(ctx, recorded); got.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING || got.ExecutorAddress != "http://a:1" {
				t.Errorf("run %d after a failure recorded on another executor: %s at %s, want RUNNING at http://a:1", recorded, got.Status, got.ExecutorAddress)
			}
		})
	}
}

// TestRouteFence: over PostgreSQL, an admin whose lease ran out and that
// another admin adopted routes and records nothing more (ErrLeaseLost);
// the adopter routes the runs it claimed, which become the adopter's, and
// no other admin routes them.
func TestRouteFence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.URL(t)
	stalled, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stalled.Close() })
	renewals := service.NewGroup(stalled.LeaseLoop())
	if err := renewals.Start(ctx); err != nil {
		t.Fatal(err)
	}
	g, err := stalled.Groups.Create(ctx, store.Group{AppName: "app", Title: "App", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, t0)
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{path: db, group: g}
	adopter, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { adopter.Close() })
	leased(t, adopter)
	third, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { third.Close() })
	leased(t, third)
	mine, theirs := runningRun(t, stalled, b), runningRun(t, stalled, b)
	if routed, err := third.Runs.Route(ctx, []store.Route{{RunID: mine, Address: "http://x:1"}}); err != nil || len(routed) != 0 {
		t.Errorf("another admin's RouteRuns of a run it did not claim: %v, %v; want nothing routed", routed, err)
	}
	if routed, err := stalled.Runs.Route(ctx, []store.Route{{RunID: mine, Address: "http://x:1"}}); err != nil || !routed[mine] {
		t.Fatalf("RouteRuns of the admin's own run: %v, %v", routed, err)
	}

	// The stalled admin freezes, its lease runs out, and the adopter
	// adopts it.
	renewals.Stop()
	d, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.ExecContext(ctx, `UPDATE admins SET lease_until = 0 WHERE id = $1`, stalled.AdminID()); err != nil {
		t.Fatal(err)
	}
	ids, err := adopter.AdoptDeadAdmins(ctx)
	if err != nil || len(ids) != 1 || ids[0] != stalled.AdminID() {
		t.Fatalf("AdoptDeadAdmins = %v, %v; want [%s]", ids, err, stalled.AdminID())
	}
	adopted, err := adopter.Runs.Adopted(ctx)
	if err != nil {
		t.Fatal(err)
	}
	routes := map[int64]string{}
	for _, r := range adopted {
		routes[r.ID] = r.RoutedTo
	}
	if len(routes) != 2 || routes[mine] != "http://x:1" || routes[theirs] != "" {
		t.Errorf("AdoptedRuns routes %v, want run %d routed to http://x:1 and %d never routed", routes, mine, theirs)
	}
	// Woken, the stalled admin is fenced off: its renewals fail (it was
	// adopted), and it knows its lease lost; it writes nothing.
	start(t, stalled.LeaseLoop())
	select {
	case <-stalled.LeaseLost():
	case <-time.After(10 * store.LeaseDuration):
		t.Fatal("the adopted admin's lease was never lost")
	}
	if stalled.AwaitLease(ctx) {
		t.Error("AwaitLease of the adopted admin = true, want false")
	}
	if !adopter.AwaitLease(ctx) {
		t.Error("AwaitLease of the adopter = false, want true")
	}
	if _, err := stalled.Runs.Route(ctx, []store.Route{{RunID: theirs, Address: "http://y:1"}}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("RouteRuns of the adopted admin: %v, want ErrLeaseLost", err)
	}
	if _, err := stalled.Runs.RecordDispatches(ctx, followup.Policy{}, []store.Dispatch{{RunID: mine, ExecutorAddress: "http://x:1", ShardTotal: 1,
		Failed: true, Message: "late", FinishedAt: t0}}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("RecordDispatches of the adopted admin: %v, want ErrLeaseLost", err)
	}
	if routed, err := adopter.Runs.Route(ctx, []store.Route{{RunID: theirs, Address: "http://y:1"}, {RunID: mine, Address: "http://x:1"}}); err != nil ||
		!routed[theirs] || !routed[mine] {
		t.Fatalf("the adopter's RouteRuns: %v, %v; want both routed", routed, err)
	}
	if routed, err := third.Runs.Route(ctx, []store.Route{{RunID: theirs, Address: "http://z:1"}}); err != nil || len(routed) != 0 {
		t.Errorf("a third admin's RouteRuns of the adopter's run: %v, %v; want nothing routed", routed, err)
	}
	if left, err := adopter.Runs.Adopted(ctx); err != nil || len(left) != 0 {
		t.Errorf("AdoptedRuns after the adopter routed them = %v, %v; want none: they are its own", left, err)
	}
	for id, want := range map[int64]carillonv1.RunStatus{mine: carillonv1.RunStatus_RUN_STATUS_RUNNING, theirs: carillonv1.RunStatus_RUN_STATUS_RUNNING} {
		if got, _ := adopter.Runs.Get(ctx, id); got.Status != want {
			t.Errorf("run %d: %s, want %s", id, got.Status, want)
		}
	}
}
