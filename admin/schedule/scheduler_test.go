package schedule_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/carillonhq/carillon/admin/schedule"
	"github.com/carillonhq/carillon/admin/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// recorder is a FireFunc that claims each run as the trigger would and
// remembers when it fired.
type recorder struct {
	st    *store.Store
	mu    sync.Mutex
	fires []fire
}

type fire struct {
	entry schedule.Entry
	at    time.Time // when FireFunc was called
	run   store.Run
}

func (r *recorder) Fire(es []schedule.Entry) {
	now := time.Now()
	for _, e := range es {
		runs, err := r.st.ClaimRuns(context.Background(), []store.RunClaim{{RunID: e.RunID, TriggerType: e.TriggerType}}, now)
		if err != nil || len(runs) == 0 {
			continue
		}
		run := runs[0]
		r.mu.Lock()
		r.fires = append(r.fires, fire{entry: e, at: now, run: run})
		r.mu.Unlock()
	}
}

func (r *recorder) all() []fire {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]fire(nil), r.fires...)
}

// setup opens a store in dir and creates a group.
func setup(t *testing.T, dir string) (*store.Store, store.Group) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(dir, "carillon.db"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := st.CreateGroup(context.Background(), store.Group{AppName: "app", Title: "app"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return st, g
}

// start runs a scheduler over st until the returned stop is called.
func start(st *store.Store, fire schedule.FireFunc) (stop func()) { return startAhead(st, fire, 0) }

// startAhead is start with Config.FireAhead.
func startAhead(st *store.Store, fire schedule.FireFunc, ahead time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	s := schedule.New(schedule.Config{Store: st, FireFunc: fire, FireAhead: ahead, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	return func() { cancel(); <-done }
}

func fixRate(g store.Group, every int32, next time.Time) store.Job {
	return store.Job{GroupID: g.ID, Description: "j", Handler: "h", Enabled: true, NextFireAt: next,
		ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: every}
}

// TestFiresAtTheScheduledInstant runs on a fake clock (synctest), so it can
// require each fire to be handed over exactly at its instant, or exactly
// FireAhead before it.
func TestFiresAtTheScheduledInstant(t *testing.T) {
	for _, ahead := range []time.Duration{0, 100 * time.Millisecond} {
		t.Run(fmt.Sprint("ahead=", ahead), func(t *testing.T) {
			dir := t.TempDir()
			synctest.Test(t, func(t *testing.T) {
				st, g := setup(t, dir)
				defer st.Close()
				first := time.Now().Add(1500 * time.Millisecond)
				if _, err := st.CreateJob(context.Background(), fixRate(g, 1, first), time.Now()); err != nil {
					t.Fatal(err)
				}
				rec := &recorder{st: st}
				stop := startAhead(st, rec.Fire, ahead)
				time.Sleep(5200*time.Millisecond - ahead)
				stop()
				fires := rec.all()
				if len(fires) != 4 {
					t.Fatalf("%d fires in 5.2 s, want 4 (at 1.5, 2.5, 3.5, 4.5 s)", len(fires))
				}
				for i, f := range fires {
					want := first.Add(time.Duration(i) * time.Second)
					if !f.run.ScheduledAt.Equal(want) || !f.entry.At.Equal(want) || !f.at.Equal(want.Add(-ahead)) {
						t.Errorf("fire %d: scheduled %v for %v handed over %v, want %v for %v handed over %v",
							i, f.run.ScheduledAt, f.entry.At, f.at, want, want, want.Add(-ahead))
					}
				}
			})
		})
	}
}

func TestMisfire(t *testing.T) {
	for _, tt := range []struct {
		strategy carillonv1.MisfireStrategy
		fires    int
	}{
		{carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING, 0},
		{carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW, 1},
	} {
		t.Run(tt.strategy.String(), func(t *testing.T) {
			dir := t.TempDir()
			synctest.Test(t, func(t *testing.T) {
				st, g := setup(t, dir)
				defer st.Close()
				now := time.Now()
				j := fixRate(g, 60, now.Add(-time.Hour)) // due an hour ago: the admin was down
				j.MisfireStrategy = tt.strategy
				j, err := st.CreateJob(context.Background(), j, now)
				if err != nil {
					t.Fatal(err)
				}
				rec := &recorder{st: st}
				stop := start(st, rec.Fire)
				time.Sleep(30 * time.Second)
				stop()
				fires := rec.all()
				if len(fires) != tt.fires {
					t.Fatalf("%d fires, want %d", len(fires), tt.fires)
				}
				if tt.fires == 1 {
					f := fires[0]
					if f.run.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_MISFIRE || !f.at.Equal(now) {
						t.Errorf("misfire fire: trigger %s at %v, want MISFIRE at %v", f.run.TriggerType, f.at, now)
					}
				}
				got, _ := st.Job(context.Background(), j.ID)
				if want := now.Add(time.Minute); !got.NextFireAt.Equal(want) {
					t.Errorf("next fire = %v, want one interval from now, %v (missed slots not replayed)", got.NextFireAt, want)
				}
			})
		})
	}
}

// TestRestartRecoversReadAheadRuns stops a scheduler after it has read
// fires ahead, keeps the admin "down" past the misfire threshold, and
// starts a new scheduler on the same database: every scheduled instant has
// exactly one run, dispatched or skipped.
func TestRestartRecoversReadAheadRuns(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		st, g := setup(t, dir)
		defer st.Close()
		ctx := context.Background()
		begin := time.Now()
		j, err := st.CreateJob(ctx, fixRate(g, 1, begin.Add(time.Second)), begin)
		if err != nil {
			t.Fatal(err)
		}
		rec := &recorder{st: st}
		stop := start(st, rec.Fire)
		time.Sleep(2500 * time.Millisecond) // fires at 1 s and 2 s; more read ahead
		stop()
		time.Sleep(20 * time.Second) // down
		stop = start(st, rec.Fire)
		time.Sleep(3 * time.Second)
		stop()

		runs, err := st.Runs(ctx, store.RunFilter{JobID: j.ID, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[time.Time]carillonv1.RunStatus{}
		for _, r := range runs {
			if _, dup := seen[r.ScheduledAt]; dup {
				t.Errorf("instant %v has two runs", r.ScheduledAt)
			}
			seen[r.ScheduledAt] = r.Status
		}
		skipped, fired := 0, 0
		for _, st := range seen {
			switch st {
			case carillonv1.RunStatus_RUN_STATUS_SKIPPED:
				skipped++
			case carillonv1.RunStatus_RUN_STATUS_RUNNING:
				fired++
			}
		}
		if skipped == 0 {
			t.Error("no read-ahead run was skipped as a misfire after the restart")
		}
		if len(rec.all()) != fired {
			t.Errorf("%d fires but %d dispatched runs", len(rec.all()), fired)
		}
		if fired < 5 {
			t.Errorf("%d fires, want at least 2 before and 3 after the restart", fired)
		}
	})
}
