package retention_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/retention"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func TestRunDeletesOldSettledRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "carillon.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	g, _ := st.CreateGroup(ctx, store.Group{AppName: "app", Title: "app"}, now)
	j, err := st.CreateJob(ctx, store.Job{GroupID: g.ID, Description: "d", Handler: "h",
		ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}, now)
	if err != nil {
		t.Fatal(err)
	}
	var runs []store.Run
	for age := range 1200 { // one run an hour for 50 days, settled except the oldest
		at := now.Add(-time.Duration(age) * time.Hour)
		status := carillonv1.RunStatus_RUN_STATUS_SUCCEEDED
		if age == 1199 {
			status = carillonv1.RunStatus_RUN_STATUS_RUNNING // never deleted, however old
		}
		runs = append(runs, store.Run{JobID: j.ID, GroupID: g.ID, ShardTotal: 1, ScheduledAt: at,
			TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Status: status})
	}
	if _, err := st.InsertRuns(ctx, runs); err != nil {
		t.Fatal(err)
	}

	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- retention.Run(cctx, retention.Config{Store: st, Days: 30, NowFunc: func() time.Time { return now },
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	}()
	// Run sweeps at once, then every hour: wait for the first sweep.
	var left []store.Run
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if left, err = st.Runs(ctx, store.RunFilter{JobID: j.ID, Limit: 1000}); err != nil {
			t.Fatal(err)
		}
		if len(left) <= 30*24+2 || time.Now().After(deadline) {
			break
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cutoff := now.AddDate(0, 0, -30)
	kept := 0
	for _, r := range left {
		if r.ScheduledAt.Before(cutoff) && r.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING {
			t.Errorf("run %d scheduled %v is older than 30 days and was kept", r.ID, r.ScheduledAt)
		}
		kept++
	}
	if want := 30*24 + 2; kept != want { // ages 0 h to 720 h, and the running one
		t.Errorf("%d runs kept, want %d: the last 30 days (both ends) and the running one", kept, want)
	}
}
