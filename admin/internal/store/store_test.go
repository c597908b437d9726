package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/service"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

var t0 = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

type bundle struct {
	path  string
	group store.Group
}

// sqliteDB returns the path of a new SQLite database, for the tests of
// what only SQLite has (its file, its lock, its checkpoints).
func sqliteDB(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "carillon.db")
}

// setup opens a store on db, a new database (pgtest.Backends), and creates
// one AUTO group.
func setup(t *testing.T, db string) (*store.Store, *bundle) {
	t.Helper()
	path := db
	s, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	leased(t, s)
	g, err := s.Groups.Create(context.Background(), store.Group{AppName: "app", Title: "App", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, t0)
	if err != nil {
		t.Fatal(err)
	}
	return s, &bundle{path: path, group: g}
}

// start runs services for the rest of the test: a cleanup registered
// after the store's Close stops them, in reverse order, before it.
func start(tb testing.TB, services ...service.Service) {
	tb.Helper()
	g := service.NewGroup(services...)
	if err := g.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(g.Stop)
}

// leased renews s's lease for the rest of the test over PostgreSQL
// (LeaseLoop), as an admin does: a test may last longer than a lease,
// and its admin's sends would be fenced off (ErrLeaseLost).
func leased(t *testing.T, s *store.Store) {
	t.Helper()
	if s.Shared() {
		start(t, s.LeaseLoop())
	}
}

// backendJob opens a new store on be, with a group, and returns it and a
// job of the group whose next fire is next (stopped when zero).
func backendJob(t *testing.T, be pgtest.Backend, next time.Time) (*store.Store, store.Job) {
	t.Helper()
	s, b := setup(t, be.DB(t))
	j, err := s.Jobs.Create(context.Background(), newJob(b.group.ID, next), t0)
	if err != nil {
		t.Fatal(err)
	}
	return s, j
}

func newJob(groupID int64, next time.Time) store.Job {
	return store.Job{
		GroupID: groupID, Description: "every second", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE,
		IntervalSeconds: 1, Handler: "h", Enabled: !next.IsZero(), NextFireAt: next,
	}
}

func pendingRun(j store.Job, at time.Time) *store.Run {
	return &store.Run{JobID: j.ID, GroupID: j.GroupID, Handler: j.Handler, ShardTotal: 1,
		TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, ScheduledAt: at, Status: carillonv1.RunStatus_RUN_STATUS_PENDING}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("SecondOpenIsRefused", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t, sqliteDB(t))
		_, err := store.Open(ctx, b.path)
		if !errors.Is(err, store.ErrLocked) {
			t.Fatalf("second Open: got %v, want ErrLocked", err)
		}
	})

	t.Run("ReopenKeepsData", func(t *testing.T) {
		t.Parallel()
		for _, be := range pgtest.Backends {
			t.Run(be.Name, func(t *testing.T) {
				t.Parallel()
				newDB := be.DB

				s, b := setup(t, newDB(t))
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				s2, err := store.Open(ctx, b.path) // migrations already applied: must be a no-op
				if err != nil {
					t.Fatal(err)
				}
				defer s2.Close()
				g, err := s2.Groups.Get(ctx, b.group.ID)
				if err != nil {
					t.Fatal(err)
				}
				if g.AppName != "app" {
					t.Errorf("app name after reopen = %q, want app", g.AppName)
				}
			})
		}
	})
}

func TestGroups(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()
			s, b := setup(t, newDB(t))

			if _, err := s.Groups.Create(ctx, store.Group{AppName: "app", Title: "dup"}, t0); !errors.Is(err, store.ErrAlreadyExists) {
				t.Errorf("duplicate app name: got %v, want ErrAlreadyExists", err)
			}
			if _, err := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0); err != nil {
				t.Fatal(err)
			}
			if err := s.Groups.Delete(ctx, b.group.ID); !errors.Is(err, store.ErrInUse) {
				t.Errorf("delete group with a job: got %v, want ErrInUse", err)
			}
			if err := s.Groups.Delete(ctx, 999); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("delete missing group: got %v, want ErrNotFound", err)
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()
			s, _ := setup(t, newDB(t))
			for _, a := range []string{"http://b:1", "http://a:1"} {
				if _, err := s.Registry.Register(ctx, "app", a, "", 0, t0); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Registry.Register(ctx, "app", "http://c:1", "", 0, t0.Add(-2*time.Minute)); err != nil {
				t.Fatal(err)
			}
			// A new process on an address says so: Register returns the instance
			// that registered there before.
			if prev, err := s.Registry.Register(ctx, "app", "http://b:1", "i1", 0, t0); err != nil || prev != "" {
				t.Fatalf("first instance: previous %q, %v; want \"\"", prev, err)
			}
			if prev, err := s.Registry.Register(ctx, "app", "http://b:1", "i1", 0, t0); err != nil || prev != "i1" {
				t.Fatalf("same instance: previous %q, %v; want i1", prev, err)
			}
			if prev, err := s.Registry.Register(ctx, "app", "http://b:1", "i2", 0, t0); err != nil || prev != "i1" {
				t.Fatalf("restarted: previous %q, %v; want i1", prev, err)
			}
			if last, err := s.Registry.LastBeat(ctx); err != nil || !last.Equal(t0) {
				t.Errorf("LastBeat = %v, %v; want %v", last, err, t0)
			}
			got, err := s.Registry.Executors(ctx, "app", t0.Add(-90*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"http://a:1", "http://b:1"}, got); diff != "" {
				t.Errorf("live executors (-want +got):\n%s", diff)
			}
			if err := s.Registry.Deregister(ctx, "app", "http://a:1"); err != nil {
				t.Fatal(err)
			}
			got, _ = s.Registry.Executors(ctx, "app", t0.Add(-90*time.Second))
			if diff := cmp.Diff([]string{"http://b:1"}, got); diff != "" {
				t.Errorf("after deregister (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClaimFires(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()

			t.Run("AdvancesAndStoresRunOnce", func(t *testing.T) {
				t.Parallel()
				s, b := setup(t, newDB(t))
				j, err := s.Jobs.Create(ctx, newJob(b.group.ID, t0), t0)
				if err != nil {
					t.Fatal(err)
				}
				claim := store.Claim{JobID: j.ID, Due: t0, Next: t0.Add(time.Second), Runs: []store.Run{*pendingRun(j, t0)}}
				runs, err := s.Fires.Claim(ctx, []store.Claim{claim})
				if err != nil || len(runs) != 1 {
					t.Fatalf("first claim: runs %v, err %v; want one run", runs, err)
				}
				// The same claim again is stale (next_fire_at moved on): no second run.
				runs, err = s.Fires.Claim(ctx, []store.Claim{claim})
				if err != nil || len(runs) != 0 {
					t.Fatalf("repeated claim: runs %v, err %v; want none", runs, err)
				}
				got, _ := s.Jobs.Get(ctx, j.ID)
				if !got.NextFireAt.Equal(t0.Add(time.Second)) || !got.LastFireAt.Equal(t0) {
					t.Errorf("job after claim: next %v last %v, want next %v last %v", got.NextFireAt, got.LastFireAt, t0.Add(time.Second), t0)
				}
			})

			t.Run("UniqueInstant", func(t *testing.T) {
				t.Parallel()
				s, b := setup(t, newDB(t))
				j, _ := s.Jobs.Create(ctx, newJob(b.group.ID, t0), t0)
				if _, err := s.Fires.Claim(ctx, []store.Claim{{JobID: j.ID, Due: t0, Next: t0, Runs: []store.Run{*pendingRun(j, t0)}}}); err != nil {
					t.Fatal(err)
				}
				// A second claim for the same instant (next did not move) must fail
				// as a whole, storing nothing.
				_, err := s.Fires.Claim(ctx, []store.Claim{{JobID: j.ID, Due: t0, Next: t0.Add(time.Second), Runs: []store.Run{*pendingRun(j, t0)}}})
				if err == nil {
					t.Fatal("a second run for the same (job, instant) was stored")
				}
				runs, _ := s.Runs.List(ctx, store.RunFilter{JobID: j.ID})
				if len(runs) != 1 {
					t.Errorf("runs = %d, want 1", len(runs))
				}
				got, _ := s.Jobs.Get(ctx, j.ID)
				if !got.NextFireAt.Equal(t0) {
					t.Errorf("failed claim moved next fire to %v", got.NextFireAt)
				}
			})

			t.Run("StopDropsPendingAndClaim", func(t *testing.T) {
				t.Parallel()
				s, b := setup(t, newDB(t))
				j, _ := s.Jobs.Create(ctx, newJob(b.group.ID, t0), t0)
				runs, _ := s.Fires.Claim(ctx, []store.Claim{{JobID: j.ID, Due: t0, Next: t0.Add(time.Second), Runs: []store.Run{*pendingRun(j, t0)}}})
				if _, err := s.Jobs.Stop(ctx, j.ID, t0); err != nil {
					t.Fatal(err)
				}
				if _, ok, err := claimRun(ctx, s, runs[0].ID, carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, t0); ok || err != nil {
					t.Errorf("claim of a stopped job's read-ahead run: ok %v err %v; want not ok", ok, err)
				}
				got, _ := s.Jobs.Get(ctx, j.ID)
				if got.Enabled || !got.NextFireAt.IsZero() {
					t.Errorf("stopped job: enabled %v next %v", got.Enabled, got.NextFireAt)
				}
				if _, err := s.Fires.Claim(ctx, []store.Claim{{JobID: j.ID, Due: t0.Add(time.Second), Next: t0.Add(2 * time.Second), Runs: []store.Run{*pendingRun(j, t0.Add(time.Second))}}}); err != nil {
					t.Fatal(err)
				}
				if rs, _ := s.Runs.List(ctx, store.RunFilter{JobID: j.ID}); len(rs) != 0 {
					t.Errorf("stopped job got %d runs, want 0", len(rs))
				}
			})
		})
	}
}

func TestSettleRuns(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()
			s, b := setup(t, newDB(t))
			j, _ := s.Jobs.Create(ctx, newJob(b.group.ID, t0), t0)
			runs, _ := s.Fires.Claim(ctx, []store.Claim{{JobID: j.ID, Due: t0, Next: t0.Add(time.Second), Runs: []store.Run{*pendingRun(j, t0)}}})
			id := runs[0].ID

			res := store.Result{RunID: id, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, Message: "ok", FinishedAt: t0.Add(time.Second)}
			if settled, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{res}); err != nil || len(settled.Runs) != 0 {
				t.Fatalf("settle a pending (never dispatched) run: %v %v; want ignored", settled, err)
			}
			if _, ok, err := claimRun(ctx, s, id, carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, t0); !ok || err != nil {
				t.Fatalf("claim: ok %v err %v", ok, err)
			}
			if settled, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{res}); err != nil || len(settled.Runs) != 1 {
				t.Fatalf("settle: %v %v; want one run", settled, err)
			}
			// A repeated result changes nothing; a different one keeps the
			// status and is noted in the message (TestResultChecked).
			again := res
			again.Status, again.Message = carillonv1.RunStatus_RUN_STATUS_FAILED, "late"
			for _, r := range []store.Result{res, again} {
				if settled, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{r}); err != nil || len(settled.Runs) != 0 {
					t.Fatalf("repeated result: %v %v; want ignored", settled, err)
				}
			}
			got, _ := s.Runs.Get(ctx, id)
			if want := "ok [a later result was not applied: FAILED at 2026-11-23T08:00:01Z: late]"; got.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED || got.Message != want {
				t.Errorf("run = %s %q, want SUCCEEDED %q", got.Status, got.Message, want)
			}
		})
	}
}

func TestFixDelayNextFireAfterFinish(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()
			s, b := setup(t, newDB(t))
			j := newJob(b.group.ID, t0)
			j.ScheduleType, j.IntervalSeconds = carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY, 30
			j, _ = s.Jobs.Create(ctx, j, t0)
			runs, _ := s.Fires.Claim(ctx, []store.Claim{{JobID: j.ID, Due: t0, Runs: []store.Run{*pendingRun(j, t0)}}}) // Next zero: waits for the run
			if _, _, err := claimRun(ctx, s, runs[0].ID, carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, t0); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Jobs.Get(ctx, j.ID); !got.NextFireAt.IsZero() {
				t.Fatalf("next fire while running = %v, want none", got.NextFireAt)
			}
			finished := t0.Add(7 * time.Second)
			out, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: runs[0].ID, Status: carillonv1.RunStatus_RUN_STATUS_FAILED, FinishedAt: finished}})
			if err != nil || !out.Rescheduled {
				t.Errorf("settle: Rescheduled %v, err %v; want true, nil (the scheduler must scan)", out.Rescheduled, err)
			}
			got, _ := s.Jobs.Get(ctx, j.ID)
			if want := finished.Add(30 * time.Second); !got.NextFireAt.Equal(want) {
				t.Errorf("next fire = %v, want finish + 30 s = %v", got.NextFireAt, want)
			}
		})
	}
}

// TestFixDelayTogether: the fires of FIX_DELAY jobs settled in one batch
// each get their next fire after their finish, but the one whose retry
// is still to run.
func TestFixDelayTogether(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			finished := t0.Add(7 * time.Second)
			var results []store.Result
			var jobs []store.Job
			for i, c := range []struct {
				retries int32
				status  carillonv1.RunStatus
			}{{0, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED}, {1, carillonv1.RunStatus_RUN_STATUS_FAILED}, {0, carillonv1.RunStatus_RUN_STATUS_FAILED}} {
				j := newJob(b.group.ID, t0)
				j.ScheduleType, j.IntervalSeconds, j.RetryCount = carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY, int32(10*(i+1)), c.retries
				j, err := s.Jobs.Create(ctx, j, t0)
				if err != nil {
					t.Fatal(err)
				}
				runs, err := s.Fires.Claim(ctx, []store.Claim{{JobID: j.ID, Due: t0, Runs: []store.Run{*pendingRun(j, t0)}}})
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := claimRun(ctx, s, runs[0].ID, carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, t0); err != nil {
					t.Fatal(err)
				}
				jobs = append(jobs, j)
				results = append(results, store.Result{RunID: runs[0].ID, Status: c.status, FinishedAt: finished})
			}
			out, err := s.Runs.Settle(ctx, followup.Policy{}, results)
			if err != nil || !out.Rescheduled {
				t.Fatalf("settle: Rescheduled %v, err %v; want true, nil", out.Rescheduled, err)
			}
			for i, want := range []time.Time{finished.Add(10 * time.Second), {}, finished.Add(30 * time.Second)} {
				got, err := s.Jobs.Get(ctx, jobs[i].ID)
				if err != nil {
					t.Fatal(err)
				}
				if !got.NextFireAt.Equal(want) {
					t.Errorf("job %d: next fire %v, want %v", i, got.NextFireAt, want)
				}
			}
		})
	}
}

func TestStatusLiterals(t *testing.T) {
	// The partial index runs_active and the queries that use it name these
	// statuses as SQL literals; they must match the enum.
	if store.SQLRunning != fmt.Sprint(int32(carillonv1.RunStatus_RUN_STATUS_RUNNING)) ||
		store.SQLPending != fmt.Sprint(int32(carillonv1.RunStatus_RUN_STATUS_PENDING)) {
		t.Fatalf("sqlRunning %s, sqlPending %s do not match the RunStatus enum", store.SQLRunning, store.SQLPending)
	}
}

// TestCheckpoints: committed pages reach the database file without the
// writer checkpointing (its automatic checkpoint is off): the background
// checkpointer copies them from the WAL within a second. The store runs in
// a synctest bubble, so the second is the bubble's.
func TestCheckpoints(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, b := setup(t, sqliteDB(t))
		start(t, s.CheckpointLoop())
		j, _ := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
		before := fileSize(t, b.path)
		runs := make([]store.Run, 5000)
		for i := range runs {
			runs[i] = *pendingRun(j, t0.Add(time.Duration(i)*time.Second))
		}
		if _, err := s.Runs.Insert(ctx, runs); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if after := fileSize(t, b.path); after < before+256<<10 {
			t.Fatalf("database file still %d bytes (%d before 5,000 runs) a second later: nothing checkpointed", after, before)
		}
	})
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
