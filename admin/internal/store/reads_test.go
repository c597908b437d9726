package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
)

// TestAPIReadsApart checks that the fire path's reads do not wait for the
// management API's: with every API connection taken by long reads, the
// scan's queries and the job and group reads of the scheduler and trigger
// still answer, while an API read waits for a connection.
func TestAPIReadsApart(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()
			s, b := setup(t, newDB(t))
			j, err := s.Jobs.Create(ctx, newJob(b.group.ID, t0), t0)
			if err != nil {
				t.Fatal(err)
			}
			release, err := s.HoldAPIReads(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer release()

			fire, cancel := context.WithTimeout(ctx, 10*time.Second) // generous: only a wait for a connection would take long
			defer cancel()
			if jobs, err := s.Fires.DueJobs(fire, t0.Add(time.Second), t0.Add(time.Second), 10); err != nil || len(jobs) != 1 {
				t.Errorf("DueJobs with the API's connections taken: %d jobs, %v", len(jobs), err)
			}
			if _, _, err := s.Fires.NextFireAt(fire); err != nil {
				t.Errorf("NextFireAt: %v", err)
			}
			if _, err := s.Jobs.Get(fire, j.ID); err != nil {
				t.Errorf("Job: %v", err)
			}
			if _, err := s.Groups.Get(fire, b.group.ID); err != nil {
				t.Errorf("Group: %v", err)
			}

			api, cancel := context.WithTimeout(store.WithAPIReads(ctx), 50*time.Millisecond)
			defer cancel()
			if _, err := s.Jobs.Get(api, j.ID); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("an API read with every API connection taken: got %v, want it to wait until its deadline", err)
			}
		})
	}
}
