package schedule_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// recorder is a dispatcher that claims each run as the trigger would and
// remembers when it fired.
type recorder struct {
	st    *store.Store
	mu    sync.Mutex
	fires []fire
}

type fire struct {
	entry schedule.Entry
	at    time.Time // when Fire was called
	run   store.Run
}

// claim returns the run of e claimed for dispatch, as the trigger does:
// the run the scan claimed (as stored, when its entry keeps only part of
// it), or e's pending run claimed now; ok is false when that is no longer
// pending.
func claim(st *store.Store, e schedule.Entry, now time.Time) (run store.Run, ok bool) {
	if e.Run != nil {
		return *e.Run, true
	}
	if e.Claimed {
		run, err := st.Runs.Get(context.Background(), e.RunID)
		return run, err == nil
	}
	runs, err := st.Fires.ClaimRuns(context.Background(), []store.RunClaim{{RunID: e.RunID, JobID: e.JobID, TriggerType: e.TriggerType}}, now)
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

// setup opens a store on db (a new database: dbtest) and creates a group.
func setup(t *testing.T, db string) (*store.Store, store.Group) {
	t.Helper()
	st := dbtest.Open(t, db)
	g, err := st.Groups.Create(context.Background(), store.Group{AppName: "app", Title: "app"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return st, g
}

// createJobs stores n copies of job j (their ids left to the store).
func createJobs(t *testing.T, st *store.Store, n int, j store.Job) {
	t.Helper()
	jobs := make([]store.Job, n)
	for i := range jobs {
		jobs[i] = j
	}
	if err := st.Jobs.CreateMany(context.Background(), jobs, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// start runs a scheduler over st until the returned stop is called.
func start(st *store.Store, fire schedule.DispatchFunc, setup ...func(*schedule.Scheduler)) (stop func()) {
	return startAhead(st, fire, 0, setup...)
}

// startAhead is start with Config.FireAhead.
func startAhead(st *store.Store, fire schedule.DispatchFunc, ahead time.Duration, setup ...func(*schedule.Scheduler)) (stop func()) {
	return startConfig(schedule.Config{Store: st, FireAhead: ahead}, fire, setup...)
}

// startConfig runs a scheduler of cfg, its logs discarded, handing fires
// to d, until the returned stop is called.
func startConfig(cfg schedule.Config, d schedule.Dispatcher, setup ...func(*schedule.Scheduler)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s := schedule.New(cfg)
	for _, f := range setup {
		f(s)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx, d) }() // it returns an error only when it cannot recover; the tests see no fires then
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
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		for _, ahead := range []time.Duration{0, 100 * time.Millisecond} {
			t.Run(fmt.Sprint("ahead=", ahead), func(t *testing.T) {
				db := be.DB(t)
				synctest.Test(t, func(t *testing.T) {
					st, g := setup(t, db)
					defer st.Close()
					first := time.Now().Add(1500 * time.Millisecond)
					if _, err := st.Jobs.Create(context.Background(), fixRate(g, 1, first), time.Now()); err != nil {
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
						if !f.entry.Claimed || !f.entry.At.Equal(want) || !f.at.Equal(stopAt) {
							t.Errorf("handed over at the stop: claimed %v, for %v at %v; want claimed, for %v at %v",
								f.entry.Claimed, f.entry.At, f.at, want, stopAt)
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
						stored, _ := st.Runs.Get(context.Background(), f.run.ID)
						if !f.entry.Claimed || stored.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING || !stored.TriggeredAt.Equal(want) {
							t.Errorf("fire %d: entry run %v, stored %s triggered at %v; want it claimed, RUNNING, triggered at %v",
								i, f.entry.Claimed, stored.Status, stored.TriggeredAt, want)
						}
					}
				})
			})
		}
	})
}

// TestBurstHandedOverEarly runs on a fake clock (synctest): the fires of
// an instant on which many are due are handed over earlier, by
// FireAheadPerFire for each, and a lone fire by FireAhead and its own.
func TestBurstHandedOverEarly(t *testing.T) {
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		db := be.DB(t)
		synctest.Test(t, func(t *testing.T) {
			st, g := setup(t, db)
			defer st.Close()
			const n = 300
			burst := time.Now().Add(10 * time.Second)
			lone := burst.Add(3 * time.Second)
			jobs := make([]store.Job, n, n+1)
			for i := range jobs {
				jobs[i] = fixRate(g, 60, burst)
			}
			jobs = append(jobs, fixRate(g, 60, lone))
			if err := st.Jobs.CreateMany(context.Background(), jobs, time.Now()); err != nil {
				t.Fatal(err)
			}
			rec := &recorder{st: st}
			stop := startConfig(schedule.Config{Store: st, FireAhead: 100 * time.Millisecond, FireAheadPerFire: time.Millisecond}, rec)
			time.Sleep(time.Until(lone) + time.Millisecond)
			stop()
			fires := rec.all()
			if len(fires) != n+1 {
				t.Fatalf("%d fires handed over, want %d", len(fires), n+1)
			}
			for _, f := range fires {
				want := burst.Add(-100*time.Millisecond - n*time.Millisecond)
				if f.entry.At.Equal(lone) {
					want = lone.Add(-101 * time.Millisecond)
				}
				if !f.at.Equal(want) {
					t.Fatalf("the fire of %v was handed over at %v, want %v", f.entry.At, f.at, want)
				}
			}
		})
	})
}

// TestFireGather runs on a fake clock (synctest): with FireGather, the
// instants whose hand-over comes less than FireGather after the earliest
// due are handed over with it, and the next instant starts a hand-over of
// its own.
func TestFireGather(t *testing.T) {
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		db := be.DB(t)
		synctest.Test(t, func(t *testing.T) {
			st, g := setup(t, db)
			defer st.Close()
			const ahead, gather = 100 * time.Millisecond, 25 * time.Millisecond
			base := time.Now().Add(10 * time.Second)
			offsets := []time.Duration{0, 10 * time.Millisecond, 24 * time.Millisecond, 25 * time.Millisecond, 40 * time.Millisecond}
			var jobs []store.Job
			for _, o := range offsets {
				jobs = append(jobs, fixRate(g, 60, base.Add(o)))
			}
			if err := st.Jobs.CreateMany(context.Background(), jobs, time.Now()); err != nil {
				t.Fatal(err)
			}
			rec := &recorder{st: st}
			stop := startConfig(schedule.Config{Store: st, FireAhead: ahead, FireGather: gather}, rec)
			time.Sleep(time.Until(base.Add(40 * time.Millisecond)))
			stop()
			fires := rec.all()
			if len(fires) != len(offsets) {
				t.Fatalf("%d fires handed over, want %d", len(fires), len(offsets))
			}
			for _, f := range fires {
				want := base.Add(-ahead) // 0, 10 and 24 ms, with the first
				if o := f.entry.At.Sub(base); o >= gather {
					want = base.Add(gather - ahead) // 25 and 40 ms, with the fourth
				}
				if !f.at.Equal(want) {
					t.Errorf("the fire of base+%v was handed over at base%+v, want base%+v", f.entry.At.Sub(base), f.at.Sub(base), want.Sub(base))
				}
			}
		})
	})
}

// TestBurstClaimedEarly runs on a fake clock (synctest): a burst of 2,900
// fires on one instant is claimed earlier than the look-ahead, by twice
// what claiming them costs (claimLead: 3 s more at 500 µs a claim, what
// 29,000 fires cost at the default claim cost), even behind a job that
// fires every second, whose next fire is always the earliest: the scan
// counts the jobs due within claimLeadMax, not only those due by the next
// fire.
func TestBurstClaimedEarly(t *testing.T) {
	// SQLite only: the scheduler's lead is the same over either store (the
	// count of due jobs it uses runs over both in the store's own tests).
	db := dbtest.SQLite.DB(t)
	synctest.Test(t, func(t *testing.T) {
		st, g := setup(t, db)
		defer st.Close()
		ctx := context.Background()
		const n, cost = 2_900, 500 * time.Microsecond // with the every-second job: 2 × 2,901 × 500 µs = 2.9 s, so 3 s more
		burst := time.Now().Add(20 * time.Second).Truncate(time.Second)
		jobs := []store.Job{fixRate(g, 1, time.Now().Add(time.Second))}
		for range n {
			jobs = append(jobs, fixRate(g, 60, burst))
		}
		if err := st.Jobs.CreateMany(ctx, jobs, time.Now()); err != nil {
			t.Fatal(err)
		}
		rec := &recorder{st: st}
		stop := start(st, rec.Fire, func(s *schedule.Scheduler) { schedule.SetClaimCost(s, cost) })
		defer stop()
		claimed := func() int64 {
			counts, err := st.Runs.Count(ctx, burst, burst.Add(time.Millisecond), store.AllGroups)
			if err != nil {
				t.Fatal(err)
			}
			return counts[carillonv1.RunStatus_RUN_STATUS_RUNNING]
		}
		time.Sleep(time.Until(burst.Add(-4600 * time.Millisecond)))
		synctest.Wait()
		if got := claimed(); got != 0 {
			t.Fatalf("%d fires of the burst claimed 4.6 s before it, want none yet", got)
		}
		time.Sleep(time.Until(burst.Add(-4 * time.Second)))
		synctest.Wait()
		if got := claimed(); got < n { // n, and the every-second job's fire of that instant
			t.Fatalf("%d of the burst's %d fires claimed 4 s before it, want all (the look-ahead alone is 1.5 s)", got, n)
		}
	})
}

// TestMisfire starts a scheduler after an outage: each job's instants more
// than the misfire threshold late are recorded as one run (SKIPPED under
// DO_NOTHING, the MISFIRE run fired now under FIRE_ONCE_NOW) with how many
// they were; the instants less than the threshold late fire at once; the
// schedule goes on from there.
func TestMisfire(t *testing.T) {
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		for _, strategy := range []carillonv1.MisfireStrategy{
			carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING,
			carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW,
		} {
			t.Run(strategy.String(), func(t *testing.T) {
				db := be.DB(t)
				synctest.Test(t, func(t *testing.T) {
					st, g := setup(t, db)
					defer st.Close()
					ctx := context.Background()
					now := time.Now() // a whole second
					// Every minute from 1 h 30 s ago: 61 instants missed, the
					// last 30 s ago; the next in 30 s.
					rate := fixRate(g, 60, now.Add(-time.Hour-30*time.Second))
					// Every second from 60 s ago: 55 missed (60 to 6 s ago);
					// 5 s ago to now, less than the threshold late, fire now.
					cron := store.Job{GroupID: g.ID, Description: "c", Handler: "h", Enabled: true, NextFireAt: now.Add(-time.Minute),
						ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "* * * * * ?", TimeZone: "UTC"}
					var jobs []store.Job
					for _, j := range []store.Job{rate, cron} {
						j.MisfireStrategy = strategy
						j, err := st.Jobs.Create(ctx, j, now)
						if err != nil {
							t.Fatal(err)
						}
						jobs = append(jobs, j)
					}
					rec := &recorder{st: st}
					stop := start(st, rec.Fire)
					time.Sleep(500 * time.Millisecond)
					stop()

					fired := map[int64]fire{}
					for _, f := range rec.all() {
						fired[f.run.ID] = f
					}
					for i, want := range []store.Run{
						{ScheduledAt: now.Add(-time.Hour - 30*time.Second), MissedUntil: now.Add(-30 * time.Second), MissedCount: 61},
						{ScheduledAt: now.Add(-time.Minute), MissedUntil: now.Add(-6 * time.Second), MissedCount: 55},
					} {
						runs, err := st.Runs.List(ctx, store.RunFilter{JobID: jobs[i].ID, To: now.Add(-5 * time.Second)})
						if err != nil {
							t.Fatal(err)
						}
						if len(runs) != 1 {
							t.Fatalf("job %d: %d runs of the missed instants, want 1, their record", i, len(runs))
						}
						r := runs[0]
						if !r.ScheduledAt.Equal(want.ScheduledAt) || !r.MissedUntil.Equal(want.MissedUntil) || r.MissedCount != want.MissedCount {
							t.Errorf("job %d: record of %v through %v, %d instants; want %v through %v, %d",
								i, r.ScheduledAt, r.MissedUntil, r.MissedCount, want.ScheduledAt, want.MissedUntil, want.MissedCount)
						}
						f, sent := fired[r.ID]
						if strategy == carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING {
							msg := fmt.Sprintf("misfire: %d scheduled instants from", want.MissedCount)
							if r.Status != carillonv1.RunStatus_RUN_STATUS_SKIPPED || r.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE || sent ||
								!strings.HasPrefix(r.Message, msg) || !strings.HasSuffix(r.Message, "skipped by DO_NOTHING") {
								t.Errorf("job %d: record %s %s, sent %v, message %q; want SKIPPED SCHEDULE, not sent, saying %q…skipped by DO_NOTHING",
									i, r.Status, r.TriggerType, sent, r.Message, msg)
							}
						} else if r.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_MISFIRE || !sent || !f.at.Equal(now) {
							t.Errorf("job %d: record %s %s, sent %v at %v; want the MISFIRE run, sent now (%v)", i, r.Status, r.TriggerType, sent, f.at, now)
						}
					}
					// The instants of the last 5 s fire now, as scheduled fires.
					var late []time.Time
					for _, f := range rec.all() {
						// (Later instants were claimed ahead, and handed over by the stop.)
						if f.run.JobID == jobs[1].ID && f.run.TriggerType == carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE && !f.run.ScheduledAt.After(now) {
							late = append(late, f.run.ScheduledAt)
							if !f.at.Equal(now) {
								t.Errorf("fire of %v handed over at %v, want at once (%v)", f.run.ScheduledAt, f.at, now)
							}
						}
					}
					slices.SortFunc(late, time.Time.Compare)
					var want []time.Time
					for s := -5; s <= 0; s++ {
						want = append(want, now.Add(time.Duration(s)*time.Second))
					}
					if !slices.EqualFunc(late, want, time.Time.Equal) {
						t.Errorf("scheduled fires of the every-second job: %v, want the instants less than the threshold late, %v", late, want)
					}
					got, _ := st.Jobs.Get(ctx, jobs[0].ID)
					if want := now.Add(30 * time.Second); !got.NextFireAt.Equal(want) || !got.LastFireAt.IsZero() != (strategy == carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW) {
						t.Errorf("every-minute job: next fire %v, last %v; want next %v (its schedule goes on), last set only by a fire", got.NextFireAt, got.LastFireAt, want)
					}
				})
			})
		}
	})
}

// TestMisfireCountBound: the misfire of an every-second cron after a long
// outage counts up to MissedCountMax instants and says "at least"; its
// last missed instant is still exact.
func TestMisfireCountBound(t *testing.T) {
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		db := be.DB(t)
		synctest.Test(t, func(t *testing.T) {
			st, g := setup(t, db)
			defer st.Close()
			ctx := context.Background()
			now := time.Now()
			j, err := st.Jobs.Create(ctx, store.Job{GroupID: g.ID, Description: "c", Handler: "h", Enabled: true, NextFireAt: now.Add(-24 * time.Hour),
				ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "* * * * * ?", TimeZone: "UTC"}, now)
			if err != nil {
				t.Fatal(err)
			}
			stop := start(st, (&recorder{st: st}).Fire)
			time.Sleep(100 * time.Millisecond)
			stop()
			runs, err := st.Runs.List(ctx, store.RunFilter{JobID: j.ID, Status: carillonv1.RunStatus_RUN_STATUS_SKIPPED})
			if err != nil {
				t.Fatal(err)
			}
			msg := fmt.Sprintf("misfire: at least %d scheduled instants from", schedule.MissedCountMax)
			if len(runs) != 1 || runs[0].MissedCount != schedule.MissedCountMax || !runs[0].MissedUntil.Equal(now.Add(-6*time.Second)) ||
				!strings.HasPrefix(runs[0].Message, msg) {
				t.Fatalf("records %+v; want one of %d instants through %v saying %q", runs, schedule.MissedCountMax, now.Add(-6*time.Second), msg)
			}
		})
	})
}

// TestRestartRecoversPendingRuns starts a scheduler on a database an
// earlier admin left pending runs in (retries, child jobs' runs, or the
// read-ahead of older versions): each fires once, except a scheduled fire
// found more than the misfire threshold late, which its job's misfire
// strategy (DO_NOTHING here) marks SKIPPED. A run the earlier admin had
// claimed for dispatch is not fired again. A one-off run left waiting for
// a later instant (TriggerJob's run_at) fires on that instant, not before;
// one cancelled meanwhile (KillRun) does not fire.
func TestRestartRecoversPendingRuns(t *testing.T) {
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		db := be.DB(t)
		synctest.Test(t, func(t *testing.T) {
			st, g := setup(t, db)
			defer st.Close()
			ctx := context.Background()
			now := time.Now()
			j, err := st.Jobs.Create(ctx, fixRate(g, 60, now.Add(time.Hour)), now) // nothing of its own to fire meanwhile
			if err != nil {
				t.Fatal(err)
			}
			run := func(trigger carillonv1.TriggerType, status carillonv1.RunStatus, at time.Time, attempt int32) store.Run {
				return store.Run{JobID: j.ID, GroupID: g.ID, ShardTotal: 1, TriggerType: trigger, Status: status, ScheduledAt: at, Attempt: attempt}
			}
			runs, err := st.Runs.Insert(ctx, []store.Run{
				run(carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, carillonv1.RunStatus_RUN_STATUS_PENDING, now.Add(-time.Second), 0),
				run(carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, carillonv1.RunStatus_RUN_STATUS_PENDING, now.Add(-time.Hour), 0),
				run(carillonv1.TriggerType_TRIGGER_TYPE_RETRY, carillonv1.RunStatus_RUN_STATUS_PENDING, now.Add(-2*time.Hour), 1),
				run(carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, carillonv1.RunStatus_RUN_STATUS_RUNNING, now.Add(-3*time.Second), 0),
				run(carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, carillonv1.RunStatus_RUN_STATUS_PENDING, now.Add(1500*time.Millisecond), 0),
				run(carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, carillonv1.RunStatus_RUN_STATUS_PENDING, now.Add(time.Second), 0),
				run(carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, carillonv1.RunStatus_RUN_STATUS_PENDING, now.Add(time.Hour), 0),
			})
			if err != nil {
				t.Fatal(err)
			}
			recent, old, retry, claimed, later, cancelled, muchLater := runs[0].ID, runs[1].ID, runs[2].ID, runs[3].ID, runs[4].ID, runs[5].ID, runs[6].ID
			if ok, err := st.Fires.CancelPending(ctx, cancelled, "cancelled", now); !ok || err != nil {
				t.Fatalf("cancel run %d: %v, %v", cancelled, ok, err)
			}
			rec := &recorder{st: st}
			stop := start(st, rec.Fire)
			time.Sleep(2 * time.Second)
			stop()

			fired := map[int64]int{}
			for _, f := range rec.all() {
				fired[f.run.ID]++
				if f.run.ID == later && !f.at.Equal(now.Add(1500*time.Millisecond)) {
					t.Errorf("the one-off run due at %v fired at %v", now.Add(1500*time.Millisecond), f.at)
				}
			}
			if want := map[int64]int{recent: 1, retry: 1, later: 1}; fmt.Sprint(fired) != fmt.Sprint(want) {
				t.Errorf("fired runs %v, want %v (the recent fire, the retry and the one-off run due in 1.5 s, once each; not run %d, cancelled, nor %d, due in an hour)",
					fired, want, cancelled, muchLater)
			}
			for id, want := range map[int64]carillonv1.RunStatus{
				old: carillonv1.RunStatus_RUN_STATUS_SKIPPED, claimed: carillonv1.RunStatus_RUN_STATUS_RUNNING,
			} {
				if r, _ := st.Runs.Get(ctx, id); r.Status != want {
					t.Errorf("run %d: %s, want %s", id, r.Status, want)
				}
			}
			// The skipped fire is the record of its one missed instant.
			if r, _ := st.Runs.Get(ctx, old); r.MissedCount != 1 || !r.MissedUntil.Equal(r.ScheduledAt) {
				t.Errorf("skipped run: missed %d through %v, want 1 through its instant %v", r.MissedCount, r.MissedUntil, r.ScheduledAt)
			}
		})
	})
}

// TestRestartKeepsRunsWaitingForSlot: after a restart, the runs an
// earlier admin left waiting for a concurrency slot are recovered as
// pending runs, however late: they are not misfires (not SKIPPED), and
// wait while the slot is taken; the run holding it settling hands the
// oldest on, which fires.
func TestRestartKeepsRunsWaitingForSlot(t *testing.T) {
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		db := be.DB(t)
		synctest.Test(t, func(t *testing.T) {
			st, g := setup(t, db)
			defer st.Close()
			ctx := context.Background()
			now := time.Now()
			job := fixRate(g, 60, now.Add(time.Hour))
			job.MaxConcurrency = 1
			j, err := st.Jobs.Create(ctx, job, now)
			if err != nil {
				t.Fatal(err)
			}
			run := func(status carillonv1.RunStatus, slot store.Slot, at time.Time) store.Run {
				return store.Run{JobID: j.ID, GroupID: g.ID, ShardTotal: 1, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE,
					Status: status, Slot: slot, ScheduledAt: at, TriggeredAt: at, ExecutorAddress: "http://executor:1"}
			}
			pending := carillonv1.RunStatus_RUN_STATUS_PENDING
			runs, err := st.Runs.Insert(ctx, []store.Run{
				run(carillonv1.RunStatus_RUN_STATUS_RUNNING, store.SlotHeld, now.Add(-3*time.Hour)),
				run(pending, store.SlotWaiting, now.Add(-2*time.Hour)),
				run(pending, store.SlotWaiting, now.Add(-time.Hour)),
			})
			if err != nil {
				t.Fatal(err)
			}
			holding, oldest, newer := runs[0], runs[1].ID, runs[2].ID
			rec := &recorder{st: st}
			var sched *schedule.Scheduler
			stop := start(st, rec.Fire, func(s *schedule.Scheduler) { sched = s })
			defer stop()
			time.Sleep(2 * time.Second)
			if fired := rec.all(); len(fired) != 0 {
				t.Fatalf("fired %d runs with the job's one slot taken", len(fired))
			}
			for _, id := range []int64{oldest, newer} {
				if r, _ := st.Runs.Get(ctx, id); !r.WaitsForSlot() {
					t.Fatalf("run %d after the restart: %s slot %d; want PENDING, waiting for a slot", id, r.Status, r.Slot)
				}
			}
			out, err := st.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: holding.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: time.Now()}})
			if err != nil {
				t.Fatal(err)
			}
			sched.Enqueue(out.Freed...) // as the trigger's completer does
			time.Sleep(time.Second)
			fired := rec.all()
			if len(fired) != 1 || fired[0].run.ID != oldest {
				t.Fatalf("after the slot was freed, fired %v; want the oldest waiting run %d only", fired, oldest)
			}
		})
	})
}

// TestScanClaimsWhatIsDueAtItsStart: a scan claims the fires due within
// its window when it reads them, in batches of scanBatch while batches come
// back full, and leaves the fires that enter the window while it works to
// the next scan. Jobs spread over the second (FIX_RATE) were otherwise
// claimed a few at a time by a scan that never ended: each pass took long
// enough for a few more to fall due. The scan's clock here moves on by
// 10 ms at each reading.
func TestScanClaimsWhatIsDueAtItsStart(t *testing.T) {
	for _, tc := range []struct {
		name       string
		spacing    time.Duration // between the jobs' next fires
		jobs, want int
	}{
		{"spread", time.Millisecond, 200, 101}, // due at t0 + 0..199 ms; window 100 ms
		{"burst", 0, 600, 600},                 // all due at t0: three batches
	} {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
				ctx := context.Background()
				st, g := setup(t, be.DB(t))
				t0 := time.Now().Add(time.Hour).Truncate(time.Second)
				jobs := make([]store.Job, tc.jobs)
				for i := range jobs {
					jobs[i] = fixRate(g, 3600, t0.Add(time.Duration(i)*tc.spacing))
				}
				if err := st.Jobs.CreateMany(ctx, jobs, time.Now()); err != nil {
					t.Fatal(err)
				}
				s := schedule.New(schedule.Config{Store: st, Lookahead: 100 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
				clock := t0
				schedule.SetNow(s, func() time.Time { now := clock; clock = clock.Add(10 * time.Millisecond); return now })
				queued, err := schedule.Scan(ctx, s)
				if err != nil {
					t.Fatal(err)
				}
				if queued != tc.want {
					t.Errorf("one scan queued %d runs, want %d", queued, tc.want)
				}
			})
		})
	}
}

// TestScanCutKeepsWindow: a burst larger than a scan's bound on passes is
// claimed by scans that follow one another at once, each in the window of
// the first, sized for all of it; not by scans each waiting for a window
// sized for what is left, which claimed the last quarter of a
// million-fire minute mark after the fire loop had handed it over. The
// bound is one pass of 256 jobs here, the burst 600 jobs 20 s ahead, each
// claim taken to cost 20 ms: claimLead of 600 is 24 s; of the 344 left
// after a scan, 14 s.
func TestScanCutKeepsWindow(t *testing.T) {
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		st, g := setup(t, be.DB(t))
		t0 := time.Now().Add(20 * time.Second).Truncate(time.Millisecond)
		const n = 600
		createJobs(t, st, n, fixRate(g, 3600, t0))
		s := schedule.New(schedule.Config{Store: st, Lookahead: 100 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		schedule.SetClaimCost(s, 20*time.Millisecond)
		schedule.SetScanPasses(s, 1)
		schedule.SetScanBatchAhead(s, 256)
		window, wait, queued := schedule.ScanOnce(ctx, s) // the look-ahead: nothing; then the burst's lead
		if queued != 0 || time.Until(t0) > window {
			t.Fatalf("first scan: %d queued, next window %v; want none, a window reaching the burst %v away", queued, window, time.Until(t0).Round(time.Second))
		}
		first := window
		for scans := 2; queued < n; scans++ {
			if scans > 4 {
				t.Fatalf("%d of %d claimed after 4 scans", queued, n)
			}
			if wait > 100*time.Millisecond {
				t.Fatalf("scan %d waits %v with %d of %d claimed; want the next at once", scans, wait, queued, n)
			}
			window, wait, queued = schedule.ScanOnce(ctx, s)
			if queued < n && window < first {
				t.Fatalf("scan %d, %d of %d claimed: next window %v, shorter than the burst's %v", scans, queued, n, window, first)
			}
		}
	})
}

// TestScanAheadBatches: a burst claimed ahead of the look-ahead is claimed
// in passes of up to 1,024 jobs once a pass found its fires more than
// 10 s ahead, not 256: the claims share the writer with the results of the
// burst before, one write of each in turn, and at 256 a claim a
// million-job minute mark was claimed after its instant. Here a burst of
// 1,000 jobs 20 s ahead: a scan within a 30 s look-ahead takes one pass of
// 256; a scan in the burst's window, of two passes, takes the 744 left
// (256, then the rest), where passes of 256 would leave 232.
func TestScanAheadBatches(t *testing.T) {
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		st, g := setup(t, be.DB(t))
		t0 := time.Now().Add(20 * time.Second).Truncate(time.Millisecond)
		const n = 1000
		createJobs(t, st, n, fixRate(g, 3600, t0))
		s := schedule.New(schedule.Config{Store: st, Lookahead: 30 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		schedule.SetScanPasses(s, 1)
		if _, _, queued := schedule.ScanOnce(ctx, s); queued != 256 {
			t.Fatalf("a scan within the look-ahead queued %d of %d runs, want one pass of 256", queued, n)
		}
		s = schedule.New(schedule.Config{Store: st, Lookahead: 100 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		schedule.SetClaimCost(s, 40*time.Millisecond) // claimLead of the 744 left: the longest, 55 s
		schedule.SetScanPasses(s, 2)
		window, _, queued := schedule.ScanOnce(ctx, s) // the look-ahead: nothing; then the burst's lead
		if queued != 0 || time.Until(t0) > window {
			t.Fatalf("first scan: %d queued, next window %v; want none, a window reaching the burst %v away", queued, window, time.Until(t0).Round(time.Second))
		}
		if _, _, queued = schedule.ScanOnce(ctx, s); queued != n-256 {
			t.Errorf("a scan of two passes ahead of the look-ahead queued %d of the %d runs left, want all", queued, n-256)
		}
	})
}
