package retention_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/retention"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestRunDeletesOldSettledRuns runs in a synctest bubble: Run sweeps at
// once, then every hour of the bubble's clock, and each sweep is awaited
// with synctest.Wait, not polled for.
func TestRunDeletesOldSettledRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := dbtest.Open(t, filepath.Join(dir, "carillon.db"))
		defer st.Close()
		now := time.Now() // the bubble's clock: Run reads the same one
		g, _ := st.Groups.Create(ctx, store.Group{AppName: "app", Title: "app"}, now)
		j, err := st.Jobs.Create(ctx, store.Job{GroupID: g.ID, Description: "d", Handler: "h",
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
		if _, err := st.Runs.Insert(ctx, runs); err != nil {
			t.Fatal(err)
		}

		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- retention.Run(cctx, retention.Config{Store: st, Days: 30,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		}()
		kept := func(cutoff time.Time) {
			t.Helper()
			left, err := st.Runs.List(ctx, store.RunFilter{JobID: j.ID, Limit: 2000})
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, r := range runs {
				if !r.ScheduledAt.Before(cutoff) || r.Status == carillonv1.RunStatus_RUN_STATUS_RUNNING {
					want++
				}
			}
			for _, r := range left {
				if r.ScheduledAt.Before(cutoff) && r.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING {
					t.Errorf("run %d scheduled %v is older than the cutoff %v and was kept", r.ID, r.ScheduledAt, cutoff)
				}
			}
			if len(left) != want {
				t.Errorf("%d runs kept, want %d: those since %v and the running one", len(left), want, cutoff)
			}
		}
		synctest.Wait() // the first sweep, at once
		kept(now.AddDate(0, 0, -30))
		time.Sleep(time.Hour) // the next sweep: one more hour of runs has aged out
		synctest.Wait()
		kept(now.Add(time.Hour).AddDate(0, 0, -30))
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
