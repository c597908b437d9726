package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
)

// TestSeedJobsFrom: seeded jobs, cron or FIX_RATE, first fire no earlier
// than seedJobs says they fire from (config.seededFrom), which the
// measured window's expected fires start at: a large seed's first fire
// waits for the admin's claim lead, and the instants before it were
// counted as missed.
func TestSeedJobsFrom(t *testing.T) {
	t.Parallel()
	for _, c := range []config{{jobs: 20, cron: "* * * * * ?"}, {jobs: 20, fixRate: 2}} {
		path := filepath.Join(t.TempDir(), "carillon.db")
		before := time.Now()
		if _, err := seedJobs(context.Background(), path, "app", &c); err != nil {
			t.Fatal(err)
		}
		if want := before.Add(seedDelay(c.jobs)); c.seededFrom.Before(want) || c.seededFrom.After(time.Now().Add(seedDelay(c.jobs))) {
			t.Errorf("%s: seededFrom %v, want about %v", c.scheduleName(), c.seededFrom, want)
		}
		st, err := store.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := st.Fires.DueJobs(context.Background(), c.seededFrom.Add(time.Hour), time.Time{}, 100)
		st.Close()
		if err != nil || len(jobs) != c.jobs {
			t.Fatalf("%s: %d due jobs, %v; want %d", c.scheduleName(), len(jobs), err, c.jobs)
		}
		for _, j := range jobs {
			if j.NextFireAt.Before(c.seededFrom.Truncate(time.Millisecond)) {
				t.Errorf("%s: job %d first fires at %v, before %v", c.scheduleName(), j.ID, j.NextFireAt, c.seededFrom)
			}
		}
	}
}
