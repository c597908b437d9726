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

// claim returns the run of e claimed for dispatch, as the trigger does:
// the run the scan claimed, or e's pending run claimed now; ok is false
// when that is no longer pending.
func claim(st *store.Store, e schedule.Entry, now time.Time) (run store.Run, ok bool) {
	if e.Run != nil {
		return *e.Run, true
	}
	runs, err := st.ClaimRuns(context.Background(), []store.RunClaim{{RunID: e.RunID, TriggerType: e.TriggerType}}, now)
	if err != nil || len(runs) == 0 {
		return store.Run{}, false
	}
	return runs[0], true
}

func (r *recorder) Fire(es []schedule.Entry) {
	now := time.Now()
	for _, e := range es {
		run, ok := claim(r.st, e, now)
		if !ok {
			continue
		}
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
				stopAt := time.Now()
				stop()
				fires := rec.all()
				// A stop hands over the fires claimed ahead (the look-ahead
				// is 1.5 s): 5.5 and 6.5 s, for the dispatcher to send on
				// their instants.
				if len(fires) != 6 {
					t.Fatalf("%d fires, want 4 in 5.2 s (at 1.5, 2.5, 3.5, 4.5 s) and 2 handed over at the stop (5.5, 6.5 s)", len(fires))
				}
				for i, f := range fires[4:] {
					want := first.Add(time.Duration(4+i) * time.Second)
					if f.entry.Run == nil || !f.entry.At.Equal(want) || !f.at.Equal(stopAt) {
						t.Errorf("handed over at the stop: claimed %v, for %v at %v; want claimed, for %v at %v",
							f.entry.Run != nil, f.entry.At, f.at, want, stopAt)
					}
				}
				fires = fires[:4]
				for i, f := range fires {
					want := first.Add(time.Duration(i) * time.Second)
					if !f.run.ScheduledAt.Equal(want) || !f.entry.At.Equal(want) || !f.at.Equal(want.Add(-ahead)) {
						t.Errorf("fire %d: scheduled %v for %v handed over %v, want %v for %v handed over %v",
							i, f.run.ScheduledAt, f.entry.At, f.at, want, want, want.Add(-ahead))
					}
					// Claimed by the scan, stored as it will be sent.
					stored, _ := st.Run(context.Background(), f.run.ID)
					if f.entry.Run == nil || stored.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING || !stored.TriggeredAt.Equal(want) {
						t.Errorf("fire %d: entry run %v, stored %s triggered at %v; want it claimed, RUNNING, triggered at %v",
							i, f.entry.Run != nil, stored.Status, stored.TriggeredAt, want)
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

// TestRestartRecoversPendingRuns starts a scheduler on a database an
// earlier admin left pending runs in (retries, child jobs' runs, or the
// read-ahead of older versions): each fires once, except a scheduled fire
// found more than the misfire threshold late, which its job's misfire
// strategy (DO_NOTHING here) marks SKIPPED. A run the earlier admin had
// claimed for dispatch is not fired again.
func TestRestartRecoversPendingRuns(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		st, g := setup(t, dir)
		defer st.Close()
		ctx := context.Background()
		now := time.Now()
		j, err := st.CreateJob(ctx, fixRate(g, 60, now.Add(time.Hour)), now) // nothing of its own to fire meanwhile
		if err != nil {
			t.Fatal(err)
		}
		run := func(trigger carillonv1.TriggerType, status carillonv1.RunStatus, at time.Time, attempt int32) store.Run {
			return store.Run{JobID: j.ID, GroupID: g.ID, ShardTotal: 1, TriggerType: trigger, Status: status, ScheduledAt: at, Attempt: attempt}
		}
		runs, err := st.InsertRuns(ctx, []store.Run{
			run(carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, carillonv1.RunStatus_RUN_STATUS_PENDING, now.Add(-time.Second), 0),
			run(carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, carillonv1.RunStatus_RUN_STATUS_PENDING, now.Add(-time.Hour), 0),
			run(carillonv1.TriggerType_TRIGGER_TYPE_RETRY, carillonv1.RunStatus_RUN_STATUS_PENDING, now.Add(-2*time.Hour), 1),
			run(carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, carillonv1.RunStatus_RUN_STATUS_RUNNING, now.Add(-3*time.Second), 0),
		})
		if err != nil {
			t.Fatal(err)
		}
		recent, old, retry, claimed := runs[0].ID, runs[1].ID, runs[2].ID, runs[3].ID
		rec := &recorder{st: st}
		stop := start(st, rec.Fire)
		time.Sleep(2 * time.Second)
		stop()

		fired := map[int64]int{}
		for _, f := range rec.all() {
			fired[f.run.ID]++
		}
		if want := map[int64]int{recent: 1, retry: 1}; fmt.Sprint(fired) != fmt.Sprint(want) {
			t.Errorf("fired runs %v, want %v (the recent fire and the retry, once each)", fired, want)
		}
		for id, want := range map[int64]carillonv1.RunStatus{
			old: carillonv1.RunStatus_RUN_STATUS_SKIPPED, claimed: carillonv1.RunStatus_RUN_STATUS_RUNNING,
		} {
			if r, _ := st.Run(ctx, id); r.Status != want {
				t.Errorf("run %d: %s, want %s", id, r.Status, want)
			}
		}
	})
}
