package store_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/service"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// fenceCluster opens an admin, with a job, and its adopter over one new
// PostgreSQL database, and a plain connection to it. The admin renews its
// lease until freeze is called, as a frozen admin stops renewing it.
func fenceCluster(t *testing.T) (admin, adopter *store.Store, j store.Job, d *sql.DB, freeze func()) {
	t.Helper()
	ctx := context.Background()
	db := pgtest.URL(t)
	admin, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	renewals := service.NewGroup(admin.LeaseLoop())
	if err := renewals.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(renewals.Stop)
	if adopter, err = store.Open(ctx, db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { adopter.Close() })
	leased(t, adopter)
	g, err := adopter.Groups.Create(ctx, store.Group{AppName: "app", Title: "App", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if j, err = adopter.Jobs.Create(ctx, newJob(g.ID, t0), t0); err != nil {
		t.Fatal(err)
	}
	if d, err = sql.Open("pgx", db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return admin, adopter, j, d, renewals.Stop
}

// TestClaimFence: over PostgreSQL, an admin that another admin adopted
// claims, inserts and settles nothing (ErrLeaseLost): whatever it would
// make now would be left to an admin that is stopping.
func TestClaimFence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stalled, adopter, j, d, freeze := fenceCluster(t)
	pending, err := stalled.Runs.Insert(ctx, []store.Run{*pendingRun(j, t0.Add(time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	run := running(t, stalled, j, t0.Add(2*time.Hour), 0, 1)
	freeze() // a renewal after the lease is zeroed below would keep the admin alive
	if _, err := d.ExecContext(ctx, `UPDATE admins SET lease_until = 0 WHERE id = $1`, stalled.AdminID()); err != nil {
		t.Fatal(err)
	}
	if ids, err := adopter.AdoptDeadAdmins(ctx); err != nil || len(ids) != 1 {
		t.Fatalf("AdoptDeadAdmins = %v, %v; want the stalled admin", ids, err)
	}

	if _, err := stalled.Fires.Claim(ctx, []store.Claim{{JobID: j.ID, Due: t0, Next: t0.Add(time.Second), Runs: []store.Run{*pendingRun(j, t0)}}}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("ClaimFires of the adopted admin: %v, want ErrLeaseLost", err)
	}
	if _, err := stalled.Fires.ClaimRuns(ctx, []store.RunClaim{{RunID: pending[0].ID, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MANUAL}}, t0); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("ClaimRuns of the adopted admin: %v, want ErrLeaseLost", err)
	}
	if _, err := stalled.Runs.Insert(ctx, []store.Run{*pendingRun(j, t0.Add(3*time.Hour))}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("InsertRuns of the adopted admin: %v, want ErrLeaseLost", err)
	}
	if _, err := stalled.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: run.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: t0}}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("SettleRuns of the adopted admin: %v, want ErrLeaseLost", err)
	}

	var runs, statusSum int
	var next int64
	if err := d.QueryRowContext(ctx, `SELECT count(*), sum(status) FROM runs`).Scan(&runs, &statusSum); err != nil {
		t.Fatal(err)
	}
	if err := d.QueryRowContext(ctx, `SELECT next_fire_at FROM jobs WHERE id = $1`, j.ID).Scan(&next); err != nil {
		t.Fatal(err)
	}
	wantSum := int(carillonv1.RunStatus_RUN_STATUS_PENDING + carillonv1.RunStatus_RUN_STATUS_RUNNING)
	if runs != 2 || statusSum != wantSum || next != t0.UnixMilli() {
		t.Errorf("after the adopted admin's writes: %d runs (status sum %d), the job's next fire %d; want 2 (%d) and %d: nothing written",
			runs, statusSum, next, wantSum, t0.UnixMilli())
	}
}

// TestAdoptWaitsForClaim: over PostgreSQL, an admin whose lease runs out
// in the middle of a transaction that claims runs (frozen there, or
// waiting for a lock) is adopted only once that transaction ended, and
// its adopter then settles what it claimed. Adopted in the middle, the
// adopter would find nothing to settle, forget the admin, and the runs it
// claimed would stay RUNNING with no executor for ever.
func TestAdoptWaitsForClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin, adopter, j, d, freeze := fenceCluster(t)

	// Another transaction holds the key of the run the admin inserts:
	// the admin's insert waits for it.
	blocker, err := d.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Rollback()
	if _, err := blocker.ExecContext(ctx, `INSERT INTO runs (job_id, group_id, trigger_type, scheduled_at, status, due_at) VALUES ($1, $2, $3, $4, $5, $4)`,
		j.ID, j.GroupID, carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, t0.UnixMilli(), carillonv1.RunStatus_RUN_STATUS_PENDING); err != nil {
		t.Fatal(err)
	}
	claimed := make(chan error, 1)
	go func() {
		r := *pendingRun(j, t0)
		r.Status = carillonv1.RunStatus_RUN_STATUS_RUNNING
		_, err := admin.Runs.Insert(ctx, []store.Run{r})
		claimed <- err
	}()
	waitFor(t, "the admin's insert to wait for the other transaction", func() bool {
		var n int
		err := d.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO runs%'`).Scan(&n)
		return err == nil && n > 0
	})
	// It freezes there, and its lease runs out.
	freeze()
	waitFor(t, "the admin's lease to run out", func() bool {
		var out bool
		err := d.QueryRowContext(ctx, `SELECT lease_until < `+nowMillis+` FROM admins WHERE id = $1`, admin.AdminID()).Scan(&out)
		return err == nil && out
	})
	if ids, err := adopter.AdoptDeadAdmins(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("AdoptDeadAdmins in the middle of the admin's claim = %v, %v; want none adopted yet", ids, err)
	}
	if err := blocker.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-claimed; err != nil {
		t.Fatalf("the admin's insert, begun while its lease held: %v", err)
	}
	if ids, err := adopter.AdoptDeadAdmins(ctx); err != nil || len(ids) != 1 || ids[0] != admin.AdminID() {
		t.Fatalf("AdoptDeadAdmins after the admin's claim = %v, %v; want [%s]", ids, err, admin.AdminID())
	}
	adopted, err := adopter.Runs.Adopted(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(adopted) != 1 || adopted[0].JobID != j.ID || !adopted[0].ScheduledAt.Equal(t0) {
		t.Errorf("AdoptedRuns = %+v, want the run the admin claimed", adopted)
	}
}

// nowMillis is PostgreSQL's clock in unix milliseconds, as leases count.
const nowMillis = `(extract(epoch from clock_timestamp()) * 1000)::bigint`

// waitFor polls cond every 10 ms for up to 10 s; it fails the test with
// what it waited for if cond never holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}

// TestSetLeaseDuration: over PostgreSQL, a lease set longer holds that
// long on the database's clock from the lease loop's start (its first
// renewal comes at once, not a quarter of the lease later), and on the
// admin's own.
func TestSetLeaseDuration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.URL(t)
	admin, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	admin.SetLeaseDuration(time.Hour)
	leased(t, admin)
	d, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	// The loop's first renewal runs as it starts; wait for the row to show
	// it rather than for a time.
	var left int64
	for range 500 {
		if err := d.QueryRowContext(ctx, `SELECT lease_until - `+nowMillis+` FROM admins WHERE id = $1`, admin.AdminID()).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left > int64(time.Minute/time.Millisecond) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if left < int64(59*time.Minute/time.Millisecond) {
		t.Fatalf("lease holds %d ms more on the database's clock, want about an hour", left)
	}
	if !admin.Leased() {
		t.Fatal("Leased() = false after a renewal of an hour")
	}
}

// lapsedAdmins opens n admins over one new PostgreSQL database, each with
// a lease that lasts a minute on its own clock and none renewing it, and
// a plain connection to it; lapse(a) runs a's lease out on the database's
// clock, as a stall of its renewals longer than a lease does.
func lapsedAdmins(t *testing.T, n int) (admins []*store.Store, lapse func(*store.Store)) {
	t.Helper()
	ctx := context.Background()
	db := pgtest.URL(t)
	for range n {
		a, err := store.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		a.SetLeaseDuration(time.Minute)
		if err := a.RenewLease(ctx); err != nil {
			t.Fatal(err)
		}
		admins = append(admins, a)
	}
	d, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return admins, func(a *store.Store) {
		t.Helper()
		if _, err := d.ExecContext(ctx, `UPDATE admins SET lease_until = 0 WHERE id = $1`, a.AdminID()); err != nil {
			t.Fatal(err)
		}
	}
}

// lost reports whether s's lease is lost (LeaseLost is closed).
func lost(s *store.Store) bool {
	select {
	case <-s.LeaseLost():
		return true
	default:
		return false
	}
}

// TestLateRenewal: over PostgreSQL, an admin whose lease ran out and that
// no admin adopted yet renews it on its next renewal and goes on; one
// that was adopted is lost at its next renewal. Admins stalled together
// (a machine or database that froze them all) and woken together renew
// before they adopt, and so do not stop each other.
func TestLateRenewal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admins, lapse := lapsedAdmins(t, 2)
	late, slow := admins[0], admins[1]
	lapse(late)
	lapse(slow)

	if err := late.RenewLease(ctx); err != nil {
		t.Fatalf("a late renewal, not adopted: %v", err)
	}
	if lost(late) || !late.Leased() {
		t.Fatalf("after its late renewal: lost %v, Leased %v; want held", lost(late), late.Leased())
	}
	if _, err := late.Groups.Create(ctx, store.Group{AppName: "app", Title: "App", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, t0); err != nil {
		t.Fatal(err)
	}
	// The one that renewed adopts the one that did not, whose renewal
	// then fails and loses its lease at once.
	if ids, err := late.AdoptDeadAdmins(ctx); err != nil || len(ids) != 1 || ids[0] != slow.AdminID() {
		t.Fatalf("AdoptDeadAdmins of the renewed admin = %v, %v; want [%s]", ids, err, slow.AdminID())
	}
	if err := slow.RenewLease(ctx); err == nil {
		t.Fatal("the renewal of an adopted admin succeeded")
	}
	if !lost(slow) || slow.Leased() {
		t.Errorf("after the adopted admin's renewal: lost %v, Leased %v; want lost", lost(slow), slow.Leased())
	}
	if lost(late) || !late.Leased() {
		t.Errorf("the adopter: lost %v, Leased %v; want held", lost(late), late.Leased())
	}
}

// TestLapsedAdminAdoptsNobody: over PostgreSQL, an admin whose lease ran
// out on the database adopts no other admin (AdoptDeadAdmins is fenced):
// two admins stalled together cannot adopt each other. It finds its lease
// lost instead, and then no longer renews it.
func TestLapsedAdminAdoptsNobody(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admins, lapse := lapsedAdmins(t, 2)
	a, b := admins[0], admins[1]
	lapse(a)
	lapse(b)
	if ids, err := a.AdoptDeadAdmins(ctx); !errors.Is(err, store.ErrLeaseLost) || len(ids) != 0 {
		t.Fatalf("AdoptDeadAdmins of an admin whose lease ran out = %v, %v; want ErrLeaseLost", ids, err)
	}
	if !lost(a) {
		t.Error("the lapsed admin that tried to adopt did not lose its lease")
	}
	if err := a.RenewLease(ctx); err == nil {
		t.Error("a lost admin renewed its lease")
	}
	if err := b.RenewLease(ctx); err != nil {
		t.Fatalf("the other admin's late renewal: %v; want it not adopted", err)
	}
	if ids, err := b.AdoptDeadAdmins(ctx); err != nil || len(ids) != 1 || ids[0] != a.AdminID() {
		t.Errorf("AdoptDeadAdmins of the renewed admin = %v, %v; want [%s]", ids, err, a.AdminID())
	}
}

// TestFencedWriteLosesLease: over PostgreSQL, a fenced write that finds
// the admin's lease run out on the database writes nothing and loses the
// lease for good: its caller leaves what it claimed to the admin's
// adopter, so a late renewal must not revive it.
func TestFencedWriteLosesLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stalled, other, j, lapse := stalledWithJob(t)
	lapse()
	if _, err := stalled.Runs.Insert(ctx, []store.Run{*pendingRun(j, t0)}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("Insert of an admin whose lease ran out: %v, want ErrLeaseLost", err)
	}
	if !lost(stalled) || stalled.Leased() {
		t.Errorf("after its fenced write failed: lost %v, Leased %v; want lost", lost(stalled), stalled.Leased())
	}
	if err := stalled.RenewLease(ctx); err == nil {
		t.Error("the admin renewed its lease after a fenced write lost it")
	}
	if ids, err := other.AdoptDeadAdmins(ctx); err != nil || len(ids) != 1 || ids[0] != stalled.AdminID() {
		t.Errorf("AdoptDeadAdmins = %v, %v; want [%s]", ids, err, stalled.AdminID())
	}
}

// TestFencedRouteLosesLease: over PostgreSQL the route, one statement
// that holds the admins' fence itself, routes nothing for an admin whose
// lease ran out on the database though its own clock says it holds, and
// loses the lease for good, as a fenced transaction does; the run stays
// unrouted for the admin that adopts it.
func TestFencedRouteLosesLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stalled, other, j, lapse := stalledWithJob(t)
	run := pendingRun(j, t0)
	run.Status = carillonv1.RunStatus_RUN_STATUS_RUNNING
	runs, err := stalled.Runs.Insert(ctx, []store.Run{*run})
	if err != nil {
		t.Fatal(err)
	}
	mine := runs[0].ID
	lapse()
	if routed, err := stalled.Runs.Route(ctx, []store.Route{{RunID: mine, Address: "http://x:1"}}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("Route of an admin whose lease ran out: %v, %v; want ErrLeaseLost", routed, err)
	}
	if !lost(stalled) || stalled.Leased() {
		t.Errorf("after its route failed: lost %v, Leased %v; want lost", lost(stalled), stalled.Leased())
	}
	if ids, err := other.AdoptDeadAdmins(ctx); err != nil || len(ids) != 1 || ids[0] != stalled.AdminID() {
		t.Fatalf("AdoptDeadAdmins = %v, %v; want [%s]", ids, err, stalled.AdminID())
	}
	adopted, err := other.Runs.Adopted(ctx)
	if err != nil || len(adopted) != 1 || adopted[0].ID != mine || adopted[0].RoutedTo != "" {
		t.Errorf("the adopter's runs to settle: %+v, %v; want run %d, never routed", adopted, err, mine)
	}
}

// stalledWithJob returns two admins over one PostgreSQL database (their
// leases a minute long: lapsedAdmins) and a job, and lapse, which ends
// the first one's lease on the database while its own clock still says it
// holds: a fenced write of that admin must then find it run out.
func stalledWithJob(t *testing.T) (stalled, other *store.Store, j store.Job, lapse func()) {
	t.Helper()
	ctx := context.Background()
	admins, lapseOf := lapsedAdmins(t, 2)
	stalled, other = admins[0], admins[1]
	g, err := other.Groups.Create(ctx, store.Group{AppName: "app", Title: "App", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if j, err = other.Jobs.Create(ctx, newJob(g.ID, t0), t0); err != nil {
		t.Fatal(err)
	}
	return stalled, other, j, func() {
		t.Helper()
		lapseOf(stalled)
		if !stalled.Leased() {
			t.Fatal("Leased() = false on the admin's own clock; the test needs it held there")
		}
	}
}
