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
	stalled, adopter, j, d, _ := fenceCluster(t)
	pending, err := stalled.Runs.Insert(ctx, []store.Run{*pendingRun(j, t0.Add(time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	run := running(t, stalled, j, t0.Add(2*time.Hour), 0, 1)
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
