package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
)

// TestCountDue: CountDue counts the enabled jobs due after an instant and
// by another, up to its limit, and not the disabled ones or those due
// before or later.
func TestCountDue(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			jobs := []store.Job{newJob(b.group.ID, t0), newJob(b.group.ID, t0), newJob(b.group.ID, t0.Add(time.Second)),
				newJob(b.group.ID, t0.Add(time.Hour)), newJob(b.group.ID, time.Time{})} // the last one disabled
			if err := s.Jobs.CreateMany(ctx, jobs, t0); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				after, before time.Time
				limit         int
				want          int
			}{
				{time.Time{}, t0.Add(-time.Millisecond), 10, 0},
				{time.Time{}, t0, 10, 2},
				{time.Time{}, t0.Add(time.Second), 10, 3},
				{time.Time{}, t0.Add(time.Second), 2, 2},
				{time.Time{}, t0.Add(24 * time.Hour), 10, 4},
				{t0.Add(-time.Millisecond), t0.Add(24 * time.Hour), 10, 4},
				{t0, t0.Add(24 * time.Hour), 10, 2},
				{t0, t0.Add(time.Second), 10, 1},
				{t0.Add(time.Second), t0.Add(24 * time.Hour), 10, 1},
			} {
				n, err := s.Fires.CountDue(ctx, c.after, c.before, c.limit)
				if err != nil {
					t.Fatal(err)
				}
				if n != c.want {
					t.Errorf("CountDue(t0%+v, t0%+v, %d) = %d, want %d", c.after.Sub(t0), c.before.Sub(t0), c.limit, n, c.want)
				}
			}
		})
	}
}
