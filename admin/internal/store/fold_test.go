package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestFoldStopsAtRunInFlight: a fold counts the runs inserted since the
// last one, at most its limit, up to the oldest of them still in flight,
// or past it while over lag runs would be left out; a run in flight that
// a fold counted already holds no later fold back; and the counts stay
// those of the runs when it settles.
func TestFoldStopsAtRunInFlight(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			j, err := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
			if err != nil {
				t.Fatal(err)
			}
			runs := make([]store.Run, 10)
			for i := range runs {
				runs[i] = running(t, s, j, t0.Add(time.Duration(i)*time.Second), 0, 1)
			}
			for i, r := range runs {
				if i != 3 { // the fourth stays in flight
					settle(t, s, r, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0)
				}
			}
			fold := func(limit, lag, want int64, wantUpTo store.Run) {
				t.Helper()
				n, err := s.FoldRunCountsLag(ctx, limit, lag)
				if err != nil {
					t.Fatal(err)
				}
				upto, err := s.RunCountsUpTo(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if n != want || upto != wantUpTo.ID {
					t.Errorf("fold(limit %d, lag %d) folded %d runs up to run %d, want %d up to run %d", limit, lag, n, upto, want, wantUpTo.ID)
				}
				drift, err := s.RunCountsDrift(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(drift) > 0 {
					t.Errorf("run_counts drifted: %v", drift)
				}
			}
			fold(2, 100, 2, runs[1])   // its limit
			fold(100, 100, 1, runs[2]) // up to the run in flight
			fold(100, 100, 0, runs[2]) // nothing more while it runs
			fold(100, 5, 2, runs[4])   // past it: 5 runs at most left out
			fold(100, 100, 5, runs[9]) // the run in flight, counted, holds nothing back
			settle(t, s, runs[3], carillonv1.RunStatus_RUN_STATUS_FAILED, t0)
			fold(100, 100, 0, runs[9]) // and settles counted (no drift)
		})
	}
}
