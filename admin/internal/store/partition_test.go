package store_test

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestPartitionOf: the live admins, in id order, own ranges of buckets
// that cover every bucket once, of sizes differing by one at most; an
// admin not among them owns every bucket.
func TestPartitionOf(t *testing.T) {
	t.Parallel()
	if p := store.PartitionOf([]string{"b", "c"}, "a", 0); !p.All() {
		t.Errorf("an admin not among the live ones owns %v, want every bucket", p)
	}
	live := []string{"e", "b", "d", "a", "c", "b"} // any order, a duplicate
	for n := 1; n <= len(live); n++ {
		ids := live[:n]
		sorted := slices.Compact(slices.Sorted(slices.Values(ids)))
		owners := make([]int, store.Buckets)
		prevHi := 0
		for rank, id := range sorted {
			p := store.PartitionOf(ids, id, 0)
			if p.Lo != prevHi {
				t.Errorf("%d admins: %s (rank %d) owns %v, want it to start at %d, where rank %d's ends", len(sorted), id, rank, p, prevHi, rank-1)
			}
			prevHi = p.Hi
			if size := p.Hi - p.Lo; size < store.Buckets/len(sorted) || size > store.Buckets/len(sorted)+1 {
				t.Errorf("%d admins: %s owns %d buckets", len(sorted), id, size)
			}
			if p.All() != (len(sorted) == 1) {
				t.Errorf("%d admins: %s owns %v; All = %v", len(sorted), id, p, p.All())
			}
			for b := p.Lo; b < p.Hi; b++ {
				owners[b]++
			}
		}
		for b, n := range owners {
			if n != 1 {
				t.Fatalf("%d admins: bucket %d has %d owners, want 1", len(sorted), b, n)
			}
		}
	}
	p := store.PartitionOf([]string{"a", "b"}, "b", 0)
	for id := int64(1); id <= 3*store.Buckets; id++ {
		if b := store.BucketOf(id); p.Owns(id) != (b >= store.Buckets/2) {
			t.Fatalf("the second of two admins (%v) owns job %d (bucket %d): %v", p, id, b, p.Owns(id))
		}
	}
}

// TestPartitionOfSharing: when fewer admins share the fires than are
// live, the first of them in id order split every bucket and the others
// own none; more than are live share as every live one.
func TestPartitionOfSharing(t *testing.T) {
	t.Parallel()
	live := []string{"d", "a", "c", "b"}
	for sharing := 1; sharing <= 6; sharing++ {
		var owning []store.Partition
		for _, id := range []string{"a", "b", "c", "d"} {
			p := store.PartitionOf(live, id, sharing)
			if p.Lo < p.Hi {
				owning = append(owning, p)
				continue
			}
			if p.All() || p.Owns(1) || p.Owns(2) {
				t.Errorf("sharing %d: %s owns %v, neither a range nor none", sharing, id, p)
			}
			if rank := int(id[0] - 'a'); rank < sharing {
				t.Errorf("sharing %d: %s (rank %d) owns no bucket", sharing, id, rank)
			}
		}
		if want := min(sharing, len(live)); len(owning) != want || !dbtest.Tiles(owning) {
			t.Errorf("sharing %d: the owners' ranges are %v, want %d that cover every bucket once", sharing, owning, want)
		}
	}
}

// TestSharingOf: as many admins share the fires as each taking at most
// the figure needs, at once when the load grows, and fewer only once
// each of fewer would take three quarters of it; never fewer than one
// nor more than are live; with no figure, every live admin.
func TestSharingOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		total      int64
		current, n int
		perAdmin   int64
		want       int
	}{
		{total: 1024, current: 0, n: 3, perAdmin: 2000, want: 1},
		{total: 1024, current: 1, n: 3, perAdmin: 0, want: 3},    // no figure: every live admin
		{total: 2000, current: 1, n: 3, perAdmin: 2000, want: 1}, // exactly one's figure
		{total: 2001, current: 1, n: 3, perAdmin: 2000, want: 2}, // grows at once
		{total: 9000, current: 1, n: 3, perAdmin: 2000, want: 3}, // at most the live admins
		{total: 1600, current: 2, n: 3, perAdmin: 2000, want: 2}, // below two's need, above the shrink
		{total: 1500, current: 2, n: 3, perAdmin: 2000, want: 1}, // three quarters of one's figure
		{total: 2900, current: 3, n: 3, perAdmin: 2000, want: 2}, // shrinks to as many as the load keeps busy
		{total: 0, current: 3, n: 3, perAdmin: 2000, want: 1},    // idle: one
		{total: 5000, current: 3, n: 2, perAdmin: 2000, want: 2}, // an admin died
		{total: 10, current: 0, n: 0, perAdmin: 2000, want: 0},   // none live: none (partitionOf then owns every bucket)
	} {
		if got := store.SharingOf(c.total, c.current, c.n, c.perAdmin); got != c.want {
			t.Errorf("SharingOf(%d fires/s, %d sharing, %d live, %d per admin) = %d, want %d", c.total, c.current, c.n, c.perAdmin, got, c.want)
		}
	}
}

// TestBucketsScatterIDs: each Buckets consecutive ids fall in every
// bucket once, and the first ids a cluster gives its jobs, in order, are
// shared about evenly by any number of admins: none gets fewer than 90%
// of its share, less one.
func TestBucketsScatterIDs(t *testing.T) {
	t.Parallel()
	for from := int64(1); from < 4*store.Buckets; from += store.Buckets - 1 {
		seen := make([]bool, store.Buckets)
		for id := from; id < from+store.Buckets; id++ {
			b := store.BucketOf(id)
			if b < 0 || b >= store.Buckets || seen[b] {
				t.Fatalf("ids %d to %d: id %d falls in bucket %d, out of range or taken", from, from+store.Buckets-1, id, b)
			}
			seen[b] = true
		}
	}
	live := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for _, jobs := range []int{30, 100, 1000} {
		for n := 2; n <= len(live); n++ {
			for _, self := range live[:n] {
				p := store.PartitionOf(live[:n], self, 0)
				own := 0
				for id := int64(1); id <= int64(jobs); id++ {
					if p.Owns(id) {
						own++
					}
				}
				if share := float64(jobs) / float64(n); float64(own) < 0.9*share-1 {
					t.Errorf("%d admins, jobs 1 to %d: %s (%v) owns %d, want about %.0f", n, jobs, self, p, own, share)
				}
			}
		}
	}
}

// TestSharedDueJobs: three admins over PostgreSQL each read the due jobs
// of their own buckets, all of them between the three and none twice;
// the other admins' only up to the takeover's bound.
func TestSharedDueJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admins, _ := dbtest.Shared(t, 3)
	g, err := admins[0].Groups.Create(ctx, store.Group{AppName: "app", Title: "App", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, t0)
	if err != nil {
		t.Fatal(err)
	}
	const jobs = 90
	for range jobs { // ids in order: the buckets scatter them (BucketOf)
		if _, err := admins[0].Jobs.Create(ctx, newJob(g.ID, t0), t0); err != nil {
			t.Fatal(err)
		}
	}
	later := t0.Add(time.Hour)
	seen := map[int64]int{}
	for i, a := range admins {
		p := a.Partition()
		own, err := a.Fires.DueJobs(ctx, later, t0.Add(-time.Second), jobs)
		if err != nil {
			t.Fatal(err)
		}
		if len(own) < jobs/4 {
			t.Errorf("admin %d (%v) read %d of the %d jobs, want about a third", i, p, len(own), jobs)
		}
		for _, j := range own {
			if !p.Owns(j.ID) {
				t.Errorf("admin %d (%v) read job %d, not its own, before the takeover's bound", i, p, j.ID)
			}
			seen[j.ID]++
		}
		if n, err := a.Fires.CountDue(ctx, time.Time{}, later, jobs); err != nil || n != len(own) {
			t.Errorf("admin %d: CountDue = %d, %v; want its %d jobs", i, n, err, len(own))
		}
		next, others, err := a.Fires.NextFireAt(ctx)
		if err != nil || (len(own) > 0 && !next.Equal(t0)) || (len(own) < jobs && !others.Equal(t0)) {
			t.Errorf("admin %d: NextFireAt = %v, %v, %v; want %v for its own (%d jobs) and the others'", i, next, others, err, t0, len(own))
		}
		if n, err := a.Fires.Next(ctx); err != nil || !n.Jobs.Equal(next) || !n.JobsOthers.Equal(others) || !n.Workflows.IsZero() || !n.WorkflowsOthers.IsZero() {
			t.Errorf("admin %d: Next = %+v, %v; want NextFireAt's %v and %v, and no workflow", i, n, err, next, others)
		}
		// Past the takeover's bound, the others' jobs too; before its own
		// window, none of its own.
		taken, err := a.Fires.DueJobs(ctx, t0.Add(-time.Second), later, jobs)
		if err != nil {
			t.Fatal(err)
		}
		if len(taken) != jobs-len(own) || slices.ContainsFunc(taken, func(j store.Job) bool { return p.Owns(j.ID) }) {
			t.Errorf("admin %d: the takeover read %d jobs, want the others' %d", i, len(taken), jobs-len(own))
		}
	}
	if len(seen) != jobs {
		t.Errorf("the admins read %d of the %d due jobs", len(seen), jobs)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("job %d read by %d admins, want 1", id, n)
		}
	}
}

// TestSharedScanPlan: the query of an admin sharing the due jobs reads
// the index jobs_due, whose entries hold the bucket it filters on: the
// rows of other buckets are never read.
func TestSharedScanPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, db := dbtest.Shared(t, 1)
	d, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	conn, err := d.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// An empty table is read whole rather than through an index.
	if _, err := conn.ExecContext(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	q := strings.NewReplacer("$1", "1", "$2", "2", "$3", "0", "$4", "341", "$5", "256").Replace(store.DueJobsSharedSQL())
	rows, err := conn.QueryContext(ctx, `EXPLAIN `+q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	text := strings.Join(plan, "\n")
	scans := strings.Count(text, "Index Scan using jobs_due on jobs")
	conds := 0
	for _, line := range plan {
		if strings.Contains(line, "Index Cond:") && strings.Contains(line, "((id * 633) % '1024'::bigint)") {
			conds++
		}
	}
	if scans != 3 || conds != 3 {
		t.Errorf("%d scans of jobs_due, %d with the bucket in the index condition; want 3 of each:\n%s", scans, conds, text)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestSharedAsLoadNeeds: three admins over PostgreSQL, each taking at
// most one fire a second before another shares them: idle, the first in
// id order owns every bucket and the others none; once one of them has
// claimed fires at more than twice that, all three split the buckets;
// a window without claims later, one owns them again.
func TestSharedAsLoadNeeds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := dbtest.Postgres.DB(t)
	admins := make([]*store.Store, 3)
	for i := range admins {
		admins[i] = dbtest.Open(t, db)
		admins[i].SetFiresPerAdmin(1)
	}
	// rounds has every admin renew its lease a few times over, which
	// publishes what it read of the others at its last renewal and reads
	// them again, and returns their buckets.
	rounds := func() []store.Partition {
		t.Helper()
		for range 3 {
			for _, a := range admins {
				if err := a.RenewLease(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		ps := make([]store.Partition, len(admins))
		for i, a := range admins {
			ps[i] = a.Partition()
		}
		return ps
	}
	one := func(ps []store.Partition) bool {
		owners := 0
		for _, p := range ps {
			switch {
			case p.All():
				owners++
			case p.Lo < p.Hi:
				return false
			}
		}
		return owners == 1
	}
	if ps := rounds(); !one(ps) {
		t.Fatalf("idle admins own %v, want one of them every bucket and the others none", ps)
	}

	g, err := admins[0].Groups.Create(ctx, store.Group{AppName: "app", Title: "App", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, t0)
	if err != nil {
		t.Fatal(err)
	}
	var claims []store.Claim
	for range 30 {
		j, err := admins[0].Jobs.Create(ctx, newJob(g.ID, t0), t0)
		if err != nil {
			t.Fatal(err)
		}
		claims = append(claims, store.Claim{JobID: j.ID, Due: t0, Next: t0.Add(time.Hour), Runs: []store.Run{*pendingRun(j, t0)}})
	}
	if _, err := admins[0].Fires.Claim(ctx, claims); err != nil {
		t.Fatal(err)
	}
	if ps := rounds(); !dbtest.Tiles(ps) {
		t.Fatalf("after 30 fires claimed at once, the admins own %v, want three ranges that cover every bucket once", ps)
	}

	time.Sleep(store.RateWindow + 100*time.Millisecond) // the claims leave the window of every rate
	if ps := rounds(); !one(ps) {
		t.Fatalf("a window after the claims, the admins own %v, want one of them every bucket and the others none", ps)
	}
}

// TestRenewalSeesAdoptWork: the lease's renewal, which reads the admins,
// says whether AdoptDeadAdmins has work (AdoptWorkSeen), and wakes the
// adopting loop when it has (AdoptWork), for each way an admin can be
// dead, adopted or alive: the loop makes a round trip of its own only
// when it has.
func TestRenewalSeesAdoptWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := dbtest.Postgres.DB(t)
	a, b := dbtest.Open(t, db), dbtest.Open(t, db)
	d, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := d.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	check := func(name string, want bool) {
		t.Helper()
		if err := a.RenewLease(ctx); err != nil {
			t.Fatal(err)
		}
		if seen := a.AdoptWorkSeen(); seen != want {
			t.Errorf("%s: the renewal saw work %v, want %v", name, seen, want)
		}
		woken := false // the adopting loop waits on AdoptWork
		select {
		case <-a.AdoptWork():
			woken = true
		default:
		}
		if woken != want {
			t.Errorf("%s: AdoptWork received %v, want %v", name, woken, want)
		}
	}
	check("every admin alive", false)
	exec(`INSERT INTO admins (id, started_at, lease_until) VALUES ('x-dead', 0, 0)`)
	for _, c := range []struct {
		name, adoptedBy string
		want            bool
	}{
		{"dead, not adopted", "", true},
		{"dead, adopted by a live admin", b.AdminID(), false},
		{"dead, adopted by a dead admin", "x-gone", true},
		{"dead, adopted by this admin", a.AdminID(), true},
	} {
		exec(`UPDATE admins SET adopted_by = $1 WHERE id = 'x-dead'`, c.adoptedBy)
		check(c.name, c.want)
	}
	exec(`DELETE FROM admins WHERE id = 'x-dead'`)
	check("every admin alive again", false)
}
