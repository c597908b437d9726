package schedule_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
)

// sharedJobs creates n jobs firing every second from first, over admin;
// their ids, in order, fall in buckets spread over all (store.BucketOf).
func sharedJobs(t *testing.T, admin *store.Store, n int, first time.Time) []store.Job {
	t.Helper()
	ctx := context.Background()
	g, err := admin.Groups.Create(ctx, store.Group{AppName: "app", Title: "app"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	jobs := make([]store.Job, n)
	for i := range jobs {
		if jobs[i], err = admin.Jobs.Create(ctx, fixRate(g, 1, first), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return jobs
}

// awaitFires waits until the recorders together have fired n runs of
// the instant at, and fails the test if that takes more than twenty
// seconds.
func awaitFires(t *testing.T, recs []*recorder, at time.Time, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := 0
		for _, r := range recs {
			for _, f := range r.all() {
				if f.run.ScheduledAt.Equal(at) {
					got++
				}
			}
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d fires of %v after 20 s", got, n, at)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// firedBy returns, for each job, which recorders fired its run of the
// instant at (their indexes), failing the test for a job fired twice.
func firedBy(t *testing.T, recs []*recorder, at time.Time) map[int64]int {
	t.Helper()
	by := map[int64]int{}
	for i, r := range recs {
		for _, f := range r.all() {
			if !f.run.ScheduledAt.Equal(at) {
				continue
			}
			if prev, ok := by[f.run.JobID]; ok {
				t.Errorf("job %d's fire of %v claimed by admins %d and %d", f.run.JobID, at, prev, i)
			}
			by[f.run.JobID] = i
		}
	}
	return by
}

// TestSharedScan: three admins over PostgreSQL each claim the fires of
// the jobs of their own buckets, every fire once. None takes over
// another's jobs (an hour's TakeoverDelay): on a busy machine an owner's
// scan may be late.
func TestSharedScan(t *testing.T) {
	t.Parallel()
	admins, _ := dbtest.Shared(t, 3)
	first := time.Now().Truncate(time.Second).Add(3 * time.Second)
	const n = 60
	jobs := sharedJobs(t, admins[0], n, first)
	recs := make([]*recorder, len(admins))
	for i, a := range admins {
		recs[i] = &recorder{st: a}
		defer start(a, recs[i].Fire, func(s *schedule.Scheduler) { schedule.SetTakeoverDelay(s, time.Hour) })()
	}
	for _, at := range []time.Time{first, first.Add(time.Second)} {
		awaitFires(t, recs, at, n)
		claimedByOwners(t, jobs, recs, at, admins)
	}
}

// claimedByOwners checks that every job's fire of the instant at was
// claimed by the admin that owns the job (admins[i] for recs[i]), once.
func claimedByOwners(t *testing.T, jobs []store.Job, recs []*recorder, at time.Time, admins []*store.Store) {
	t.Helper()
	by := claimedOnce(t, jobs, recs, at)
	for _, j := range jobs {
		if i, ok := by[j.ID]; ok && !admins[i].Partition().Owns(j.ID) {
			t.Errorf("job %d's fire of %v claimed by admin %d (%v), not its owner", j.ID, at, i, admins[i].Partition())
		}
	}
}

// claimedOnce checks that every job's fire of the instant at was claimed
// once, and returns by which recorder (firedBy).
func claimedOnce(t *testing.T, jobs []store.Job, recs []*recorder, at time.Time) map[int64]int {
	t.Helper()
	by := firedBy(t, recs, at)
	for _, j := range jobs {
		if _, ok := by[j.ID]; !ok {
			t.Errorf("job %d's fire of %v was not claimed", j.ID, at)
		}
	}
	return by
}

// TestSharedTakeover: the jobs of an admin that leaves them unclaimed
// (alive, it does not scan) are claimed by the others, store.TakeoverDelay
// after their owner should have; once its lease ran out, the others split
// its buckets. Every fire is claimed once throughout.
func TestSharedTakeover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admins, db := dbtest.Shared(t, 3)
	idle := admins[2]
	first := time.Now().Truncate(time.Second).Add(3 * time.Second)
	const n = 60
	jobs := sharedJobs(t, admins[0], n, first)
	scanning := admins[:2]
	recs := make([]*recorder, len(scanning))
	for i, a := range scanning {
		recs[i] = &recorder{st: a}
		defer start(a, recs[i].Fire)()
	}
	awaitFires(t, recs, first, n)
	claimedOnce(t, jobs, recs, first)
	idles := 0
	for _, j := range jobs {
		if idle.Partition().Owns(j.ID) {
			idles++
		}
	}
	if idles == 0 {
		t.Fatalf("none of the %d jobs is the idle admin's (%v): nothing to take over", n, idle.Partition())
	}

	// The idle admin's lease runs out: the two others split its buckets.
	d, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.ExecContext(ctx, `UPDATE admins SET lease_until = 0 WHERE id = $1`, idle.AdminID()); err != nil {
		t.Fatal(err)
	}
	// Another admin adopts it, as the adoption loop does within 200 ms:
	// its next renewal, merely late, would otherwise renew it.
	if ids, err := admins[0].AdoptDeadAdmins(ctx); err != nil || len(ids) != 1 {
		t.Fatalf("AdoptDeadAdmins = %v, %v; want the idle admin", ids, err)
	}
	dbtest.AwaitPartitions(t, scanning)
	after := time.Now().Truncate(time.Second).Add(3 * time.Second)
	awaitFires(t, recs, after, n)
	claimedOnce(t, jobs, recs, after)
}
