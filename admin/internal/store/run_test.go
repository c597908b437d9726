package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
)

// TestInsertRunsIDs: runs stored together, in chunks of every prepared
// size (64 + 16 + 4 + 1 and a second 64), each get the ID of their own
// row, over both databases.
func TestInsertRunsIDs(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			s, j := backendJob(t, be, time.Time{})
			ctx := context.Background()
			for round := range 3 {
				runs := make([]store.Run, 64+16+4+1+64)
				for i := range runs {
					runs[i] = *pendingRun(j, t0.Add(time.Duration(round*1000+i)*time.Second))
					runs[i].Param = fmt.Sprint("round ", round, " run ", i)
				}
				stored, err := s.Runs.Insert(ctx, runs)
				if err != nil {
					t.Fatal(err)
				}
				seen := map[int64]bool{}
				for i, r := range stored {
					got, err := s.Runs.Get(ctx, r.ID)
					if err != nil {
						t.Fatal(err)
					}
					if seen[r.ID] || got.Param != runs[i].Param || !got.ScheduledAt.Equal(runs[i].ScheduledAt) {
						t.Fatalf("round %d, run %d: ID %d (seen before: %v) holds %q at %s, want %q at %s",
							round, i, r.ID, seen[r.ID], got.Param, got.ScheduledAt, runs[i].Param, runs[i].ScheduledAt)
					}
					seen[r.ID] = true
				}
			}
		})
	}
}
