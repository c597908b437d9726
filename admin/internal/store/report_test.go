package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// runMix writes runs of every kind around t0 through the store's write
// paths: scheduled fires claimed, pending runs inserted and claimed, runs
// settled (failures that retry), skipped, and deleted.
// fold, if not nil, is called between the inserts and the changes.
func runMix(t *testing.T, s *store.Store, b *bundle, fold func()) {
	t.Helper()
	ctx := context.Background()
	job := newJob(b.group.ID, time.Time{})
	job.RetryCount = 1
	j, err := s.Jobs.Create(ctx, job, t0)
	if err != nil {
		t.Fatal(err)
	}
	// 40 runs 7 minutes apart: across many 15-minute buckets and a day.
	var runs []store.Run
	for i := range 40 {
		runs = append(runs, running(t, s, j, t0.Add(time.Duration(i)*7*time.Minute-3*time.Hour), 0, 1))
	}
	if fold != nil {
		fold()
	}
	for i, r := range runs {
		switch i % 4 {
		case 0:
			settle(t, s, r, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0)
		case 1:
			settle(t, s, r, carillonv1.RunStatus_RUN_STATUS_FAILED, t0) // and a pending retry
		case 2:
			settle(t, s, r, carillonv1.RunStatus_RUN_STATUS_TIMED_OUT, t0)
		}
	}
	pending, err := s.Runs.Insert(ctx, []store.Run{*pendingRun(j, t0.Add(90*time.Second)), *pendingRun(j, t0.Add(150*time.Second))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Fires.Skip(ctx, pending[0].ID, "skipped", t0); err != nil {
		t.Fatal(err)
	}
	sched, err := s.Jobs.Create(ctx, newJob(b.group.ID, t0), t0)
	if err != nil {
		t.Fatal(err)
	}
	run := store.Run{JobID: sched.ID, GroupID: sched.GroupID, Handler: "h", ShardTotal: 1, ScheduledAt: t0, TriggeredAt: t0,
		TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING}
	if _, err := s.Fires.Claim(ctx, []store.Claim{{JobID: sched.ID, Due: t0, Next: t0.Add(time.Second), Runs: []store.Run{run}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Runs.Delete(ctx, store.RunSelection{JobID: j.ID, Before: t0.Add(-2 * time.Hour)}, 5); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Runs.Delete(ctx, store.RunSelection{JobID: j.ID, KeepLast: 20}, 100); err != nil {
		t.Fatal(err)
	}
}

// TestRunCounts checks that the dashboard's counters equal a count over
// the runs table after every kind of write, on a new database and on one
// made before the counters existed (the migration's backfill).
func TestRunCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("KeptByWrites", func(t *testing.T) {
		t.Parallel()
		for _, be := range pgtest.Backends {
			t.Run(be.Name, func(t *testing.T) {
				t.Parallel()
				newDB := be.DB

				s, b := setup(t, newDB(t))
				// Runs folded into the counters, then settled, skipped, deleted:
				// the triggers keep the counters.
				runMix(t, s, b, func() {
					if _, err := s.FoldRunCounts(ctx); err != nil {
						t.Fatal(err)
					}
				})
				if upto, err := s.RunCountsUpTo(ctx); err != nil || upto < 40 {
					t.Fatalf("runs folded up to %d (%v), want at least the first 40", upto, err)
				}
				if n, err := s.RunCounters(ctx); err != nil || n < 10 {
					t.Fatalf("%d counters (err %v): want the buckets of 40 runs over 5 hours", n, err)
				}
				drift, err := s.RunCountsDrift(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(drift) > 0 {
					t.Errorf("counters differ from the runs table: %v", drift)
				}
				// And the runs inserted after the fold, folded now.
				if _, err := s.FoldRunCounts(ctx); err != nil {
					t.Fatal(err)
				}
				if drift, err := s.RunCountsDrift(ctx); err != nil || len(drift) > 0 {
					t.Errorf("counters after the last fold differ from the runs table: %v (%v)", drift, err)
				}
			})
		}
	})

	t.Run("Backfilled", func(t *testing.T) {
		t.Parallel()
		s, b := setup(t, sqliteDB(t))
		runMix(t, s, b, nil)
		if err := s.UndoRunCounts(ctx); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s, err := store.Open(ctx, b.path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		drift, err := s.RunCountsDrift(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(drift) > 0 {
			t.Errorf("backfilled counters differ from the runs table: %v", drift)
		}
		if n, err := s.RunCounters(ctx); err != nil || n < 10 {
			t.Errorf("%d counters backfilled (%v)", n, err)
		}
	})

	t.Run("CountRunsIsExact", func(t *testing.T) {
		t.Parallel()
		for _, be := range pgtest.Backends {
			t.Run(be.Name, func(t *testing.T) {
				t.Parallel()
				newDB := be.DB

				s, b := setup(t, newDB(t))
				// Half the runs folded, half not: RunStore.Count counts both. Two
				// groups: a MEMBER's count is of their groups.
				fold := func() {
					if _, err := s.FoldRunCounts(ctx); err != nil {
						t.Fatal(err)
					}
				}
				runMix(t, s, b, fold)
				other, err := s.Groups.Create(ctx, store.Group{AppName: "other", Title: "Other", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, t0)
				if err != nil {
					t.Fatal(err)
				}
				runMix(t, s, &bundle{path: b.path, group: other}, fold)
				// Days in zones whose offsets are and are not multiples of 15
				// minutes, and ranges shorter than a bucket.
				var ranges [][2]time.Time
				for _, offset := range []time.Duration{0, 5*time.Hour + 45*time.Minute, -(19*time.Minute + 32*time.Second), 7 * time.Minute} {
					zone := time.FixedZone("z", int(offset.Seconds()))
					day := time.Date(t0.Year(), t0.Month(), t0.Day(), 0, 0, 0, 0, zone)
					for d := -1; d <= 1; d++ {
						ranges = append(ranges, [2]time.Time{day.AddDate(0, 0, d), day.AddDate(0, 0, d+1)})
					}
				}
				ranges = append(ranges, [2]time.Time{t0.Add(-3 * time.Hour), t0.Add(-3*time.Hour + 10*time.Minute)},
					[2]time.Time{t0.Add(-150 * time.Minute), t0.Add(-80*time.Minute + 3*time.Millisecond)})
				scopes := []store.Groups{store.AllGroups, {IDs: []int64{b.group.ID}}, {IDs: []int64{other.ID}}, {IDs: []int64{b.group.ID, other.ID}}, {}}
				for _, r := range ranges {
					for _, g := range scopes {
						want, err := s.CountRunsScan(ctx, r[0], r[1], g)
						if err != nil {
							t.Fatal(err)
						}
						got, err := s.Runs.Count(ctx, r[0], r[1], g)
						if err != nil {
							t.Fatal(err)
						}
						if diff := cmp.Diff(want, got); diff != "" {
							t.Errorf("CountRuns(%v, %v, %v) differs from a count over runs (-want +got):\n%s", r[0], r[1], g, diff)
						}
					}
				}
				// The groups split the whole.
				day := [2]time.Time{t0.AddDate(0, 0, -1), t0.AddDate(0, 0, 1)}
				all, _ := s.Runs.Count(ctx, day[0], day[1], store.AllGroups)
				one, _ := s.Runs.Count(ctx, day[0], day[1], scopes[1])
				two, _ := s.Runs.Count(ctx, day[0], day[1], scopes[2])
				for st, n := range all {
					if one[st]+two[st] != n || one[st] == 0 {
						t.Errorf("status %v: %d + %d runs of the two groups, %d in all", st, one[st], two[st], n)
					}
				}
			})
		}
	})
}
