package schedule_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// fill inserts small runs until the database is full, so that the scan's
// next run insert needs a page the limit refuses.
func fill(t *testing.T, st *store.Store, j store.Job, from time.Time) {
	t.Helper()
	ctx := context.Background()
	for i := range 100000 {
		r := store.Run{JobID: j.ID, GroupID: j.GroupID, ShardTotal: 1, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MANUAL,
			Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, ScheduledAt: from.Add(time.Duration(i) * time.Millisecond)}
		if _, err := st.Runs.Insert(ctx, []store.Run{r}); errors.Is(err, store.ErrFull) {
			return
		} else if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the database never filled")
}

// TestReadyFollowsScans checks that the scheduler is ready only while its
// scans succeed: on a full database the scans fail and Ready says why;
// the fires due meanwhile are not lost without a trace: once there is
// space again, the scan finds them late and the job's misfire strategy
// (FIRE_ONCE_NOW here) records a MISFIRE run.
func TestReadyFollowsScans(t *testing.T) {
	db := dbtest.SQLite.DB(t) // SQLite only: it fills the SQLite file up (store.ErrFull)
	synctest.Test(t, func(t *testing.T) {
		st, g := setup(t, db)
		defer st.Close()
		ctx := context.Background()
		now := time.Now()
		var jobs []store.Job
		for range 50 {
			j := fixRate(g, 1, now.Add(2*time.Second))
			j.MisfireStrategy = carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW
			j, err := st.Jobs.Create(ctx, j, now)
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j)
		}
		s := schedule.New(schedule.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err := s.Ready(time.Now()); err == nil {
			t.Error("Ready before Run: nil")
		}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := s.Run(runCtx, schedule.DispatchFunc(func([]schedule.Entry) {})); err != nil {
				t.Error(err)
			}
		}()
		time.Sleep(3 * time.Second)
		if err := s.Ready(time.Now()); err != nil {
			t.Fatalf("Ready while scanning: %v", err)
		}

		if err := st.LimitPages(ctx, 1); err != nil {
			t.Fatal(err)
		}
		fill(t, st, jobs[0], now.Add(-24*time.Hour))
		full := time.Now()
		time.Sleep(10 * time.Second) // every job falls due ten times
		err := s.Ready(time.Now())
		if !errors.Is(err, store.ErrFull) {
			t.Fatalf("Ready with the database full: %v, want an error matching store.ErrFull", err)
		}
		if !strings.Contains(err.Error(), "scan") {
			t.Errorf("Ready: %q does not say the scan failed", err)
		}

		if err := st.LimitPages(ctx, 1<<30); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second)
		if err := s.Ready(time.Now()); err != nil {
			t.Errorf("Ready with space again: %v", err)
		}
		if err := s.Ready(time.Now().Add(time.Hour)); err == nil {
			t.Error("Ready an hour after the last scan: nil, want it stale")
		}
		cancel()
		<-done
		if err := s.Ready(time.Now()); err == nil {
			t.Error("Ready after Run returned: nil")
		}
		// Each job's fires during the outage left a MISFIRE run.
		for _, j := range jobs {
			runs, err := st.Runs.List(ctx, store.RunFilter{JobID: j.ID})
			if err != nil {
				t.Fatal(err)
			}
			misfires := 0
			for _, r := range runs {
				if r.TriggerType == carillonv1.TriggerType_TRIGGER_TYPE_MISFIRE && r.ScheduledAt.After(full) {
					misfires++
				}
			}
			if misfires == 0 {
				t.Fatalf("job %d: no MISFIRE run for the fires due while the database was full (%d runs)", j.ID, len(runs))
			}
		}
	})
}
