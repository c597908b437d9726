package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestMissedFires: of the expected fires no executor received, the report
// counts those recorded as misfires, and breaks the others down by their
// run's status in the database: refused unsent (FAILED), still RUNNING, or
// no run at all.
func TestMissedFires(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "carillon.db")
	c := config{jobs: 5, fixRate: 60}
	group, err := seedJobs(ctx, path, "app", &c)
	if err != nil {
		t.Fatal(err)
	}
	at := c.seededFrom.Truncate(time.Second).Add(time.Hour)
	w := &window{start: at.Add(-time.Second), end: at.Add(time.Second), expected: map[fireKey]bool{}}
	for job := int64(1); job <= 5; job++ {
		w.expected[fireKey{job, at.UnixMilli()}] = true
	}
	w.receipts = []receipt{{job: 1, at: at.UnixMilli(), got: at.UnixNano()}}
	run := func(job int64, status carillonv1.RunStatus) store.Run {
		return store.Run{JobID: job, GroupID: group, Handler: "h", TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE,
			ScheduledAt: at, DueAt: at, Status: status}
	}
	skipped := run(2, carillonv1.RunStatus_RUN_STATUS_SKIPPED)
	skipped.MissedCount, skipped.MissedUntil = 1, at
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Runs.Insert(ctx, []store.Run{run(1, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED), skipped,
		run(3, carillonv1.RunStatus_RUN_STATUS_FAILED), run(4, carillonv1.RunStatus_RUN_STATUS_RUNNING)})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if w.misfires, err = misfireRecords(ctx, path, w.start, w.end); err != nil {
		t.Fatal(err)
	}
	if w.stored, err = storedRuns(ctx, path, w.start, w.end); err != nil {
		t.Fatal(err)
	}
	var r result
	r.fill(&c, w)
	f := r.Fires
	if f.Received != 1 || f.Missed != 4 || f.MissedRecorded == nil || *f.MissedRecorded != 1 || *f.Neither != 3 {
		t.Errorf("received %d, missed %d, recorded %v, neither %v; want 1, 4, 1, 3", f.Received, f.Missed, f.MissedRecorded, f.Neither)
	}
	if diff := cmp.Diff(map[string]int{"FAILED": 1, "RUNNING": 1, "none": 1}, f.NeitherAs); diff != "" {
		t.Errorf("neither_as (-want +got):\n%s", diff)
	}
	if got, want := neitherAs(f.NeitherAs), " (their runs: FAILED 1, RUNNING 1, none 1)"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}
