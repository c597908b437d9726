package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func TestCreateJobs(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()

			t.Run("SameRowsAsCreateJob", func(t *testing.T) {
				t.Parallel()
				s, b := setup(t, newDB(t))
				var children []int64 // listed in the reverse order of their ids
				for range 2 {
					c, err := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
					if err != nil {
						t.Fatal(err)
					}
					children = append([]int64{c.ID}, children...)
				}
				j := newJob(b.group.ID, t0.Add(time.Hour))
				j.Cron, j.ScheduleType, j.TimeZone, j.Param = "7 30 4 * * ?", carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, "Europe/Berlin", "p"
				j.AlarmEmails, j.ChildJobIDs = []string{"a@example.com", "b@example.com"}, children
				one, err := s.Jobs.Create(ctx, j, t0)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Jobs.CreateMany(ctx, []store.Job{j, j}, t0); err != nil {
					t.Fatal(err)
				}
				got, err := s.Jobs.List(ctx, store.JobFilter{})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 5 {
					t.Fatalf("got %d jobs, want 5", len(got))
				}
				for _, g := range got[2:] {
					if diff := cmp.Diff(one, g, cmpopts.IgnoreFields(store.Job{}, "ID")); diff != "" {
						t.Errorf("bulk job %d differs from CreateJob's (-want +got):\n%s", g.ID, diff)
					}
				}
				due, err := s.Fires.DueJobs(ctx, t0.Add(2*time.Hour), t0.Add(2*time.Hour), 10)
				if err != nil {
					t.Fatal(err)
				}
				if len(due) != 3 {
					t.Errorf("DueJobs found %d of the 3 enabled jobs", len(due))
				}
			})

			t.Run("MissingGroupStoresNothing", func(t *testing.T) {
				t.Parallel()
				s, b := setup(t, newDB(t))
				err := s.Jobs.CreateMany(ctx, []store.Job{newJob(b.group.ID, t0), newJob(b.group.ID+100, t0)}, t0)
				if !errors.Is(err, store.ErrGroupNotFound) {
					t.Fatalf("got %v, want ErrGroupNotFound", err)
				}
				all, _, err := s.Jobs.Count(ctx, store.AllGroups)
				if err != nil {
					t.Fatal(err)
				}
				if all != 0 {
					t.Errorf("%d jobs stored, want 0", all)
				}
			})
		})
	}
}
