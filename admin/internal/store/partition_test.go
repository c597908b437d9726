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
	if p := store.PartitionOf([]string{"b", "c"}, "a"); !p.All() {
		t.Errorf("an admin not among the live ones owns %v, want every bucket", p)
	}
	live := []string{"e", "b", "d", "a", "c", "b"} // any order, a duplicate
	for n := 1; n <= len(live); n++ {
		ids := live[:n]
		sorted := slices.Compact(slices.Sorted(slices.Values(ids)))
		owners := make([]int, store.Buckets)
		prevHi := 0
		for rank, id := range sorted {
			p := store.PartitionOf(ids, id)
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
	p := store.PartitionOf([]string{"a", "b"}, "b")
	if !p.Owns(store.Buckets-1) || !p.Owns(2*store.Buckets+store.Buckets/2) || p.Owns(store.Buckets) || p.Owns(store.Buckets/2-1) {
		t.Errorf("the second of two admins (%v) owns the wrong ids", p)
	}
}

// TestSharedDueJobs: three admins over PostgreSQL each read the due jobs
// of their own buckets, all of them between the three and none twice;
// the other admins' only up to the takeover's bound.
func TestSharedDueJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admins, db := dbtest.Shared(t, 3)
	g, err := admins[0].Groups.Create(ctx, store.Group{AppName: "app", Title: "App", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, t0)
	if err != nil {
		t.Fatal(err)
	}
	const jobs = 90
	dbtest.SpreadJobIDs(t, db, jobs, func(int) {
		if _, err := admins[0].Jobs.Create(ctx, newJob(g.ID, t0), t0); err != nil {
			t.Fatal(err)
		}
	})
	later := t0.Add(time.Hour)
	seen := map[int64]int{}
	for i, a := range admins {
		p := a.Partition()
		own, err := a.Fires.DueJobs(ctx, later, t0.Add(-time.Second), jobs)
		if err != nil {
			t.Fatal(err)
		}
		if len(own) == 0 {
			t.Errorf("admin %d (%v) read none of the %d jobs spread over the buckets", i, p, jobs)
		}
		for _, j := range own {
			if !p.Owns(j.ID) {
				t.Errorf("admin %d (%v) read job %d, not its own, before the takeover's bound", i, p, j.ID)
			}
			seen[j.ID]++
		}
		if n, err := a.Fires.CountDue(ctx, later, jobs); err != nil || n != len(own) {
			t.Errorf("admin %d: CountDue = %d, %v; want its %d jobs", i, n, err, len(own))
		}
		next, others, err := a.Fires.NextFireAt(ctx)
		if err != nil || (len(own) > 0 && !next.Equal(t0)) || (len(own) < jobs && !others.Equal(t0)) {
			t.Errorf("admin %d: NextFireAt = %v, %v, %v; want %v for its own (%d jobs) and the others'", i, next, others, err, t0, len(own))
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
		if strings.Contains(line, "Index Cond:") && strings.Contains(line, "(id % '1024'::bigint)") {
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
