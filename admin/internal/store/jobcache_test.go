package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestJobDefinitionsFollowWrites: the fire path's job lookups come from
// the cache while no job changes, and see every kind of job write at once.
func TestJobDefinitionsFollowWrites(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()
			s, b := setup(t, newDB(t))
			a, _ := s.Jobs.Create(ctx, newJob(b.group.ID, t0), t0)
			other, _ := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
			lookup := func(id int64) (store.JobDefinition, bool) {
				t.Helper()
				jobs, err := s.Jobs.Definitions(ctx, []int64{id})
				if err != nil {
					t.Fatal(err)
				}
				j, ok := jobs[id]
				if !ok {
					return store.JobDefinition{}, false
				}
				return *j, true
			}

			if j, ok := lookup(a.ID); !ok || j.Handler != "h" {
				t.Fatalf("job %+v, %v: want it, handler h", j, ok)
			}
			reads := s.JobReads()
			for range 3 {
				lookup(a.ID)
			}
			if got := s.JobReads(); got != reads {
				t.Errorf("%d job reads for three lookups of an unchanged job, want none", got-reads)
			}

			a.Handler = "changed"
			if _, err := s.Jobs.Update(ctx, a, false, t0); err != nil {
				t.Fatal(err)
			}
			if j, _ := lookup(a.ID); j.Handler != "changed" {
				t.Errorf("after UpdateJob: handler %q, want changed", j.Handler)
			}
			if _, err := s.Jobs.Stop(ctx, a.ID, t0); err != nil {
				t.Fatal(err)
			}
			if j, _ := lookup(a.ID); j.Enabled {
				t.Error("after StopJob: still enabled")
			}
			if _, err := s.Jobs.Start(ctx, a.ID, t0.Add(time.Second), t0); err != nil {
				t.Fatal(err)
			}
			if j, _ := lookup(a.ID); !j.Enabled {
				t.Error("after StartJob: not enabled")
			}
			if err := s.Jobs.Delete(ctx, a.ID); err != nil {
				t.Fatal(err)
			}
			if j, ok := lookup(a.ID); ok {
				t.Errorf("after DeleteJob: still found: %+v", j)
			}
			if _, ok := lookup(other.ID); !ok {
				t.Error("the other job is gone")
			}
			// A new job is seen at once, though creating it left the cache alone:
			// the lookup of its ID before it existed cached nothing.
			next := other.ID + 1 // IDs are never reused (AUTOINCREMENT)
			if _, ok := lookup(next); ok {
				t.Fatal("found a job that does not exist")
			}
			if err := s.Jobs.CreateMany(ctx, []store.Job{newJob(b.group.ID, time.Time{})}, t0); err != nil {
				t.Fatal(err)
			}
			all, _ := s.Jobs.List(ctx, store.JobFilter{})
			newest := all[len(all)-1]
			if newest.ID != next || newest.ScheduleType != carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE {
				t.Fatalf("newest job %+v, want job %d", newest, next)
			}
			if _, ok := lookup(newest.ID); !ok {
				t.Error("a job created by CreateJobs is not found")
			}
		})
	}
}
