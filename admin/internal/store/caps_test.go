package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// countStatus counts job's runs by status.
func countStatus(t *testing.T, s *store.Store, jobID int64) map[carillonv1.RunStatus]int {
	t.Helper()
	runs, err := s.Runs.List(context.Background(), store.RunFilter{JobID: jobID, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := map[carillonv1.RunStatus]int{}
	for _, r := range runs {
		out[r.Status]++
	}
	return out
}

// waitingCandidates stores n pending runs of j due one millisecond apart from at.
func waitingCandidates(t *testing.T, s *store.Store, j store.Job, at time.Time, n int) []store.Run {
	t.Helper()
	rs := make([]store.Run, n)
	for i := range rs {
		rs[i] = *pendingRun(j, at.Add(time.Duration(i)*time.Millisecond))
	}
	rs, err := s.Runs.Insert(context.Background(), rs)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestConcurrencyCapRace claims the pending runs of a job with cap 2 one
// by one from many goroutines at once, over four admins sharing the
// database on PostgreSQL: exactly two are claimed; the others wait for a
// slot. Settling one hands the oldest waiting run on, and its claim takes
// the freed slot.
func TestConcurrencyCapRace(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			admins := []*store.Store{s}
			for range 3 {
				if !s.Shared() {
					break
				}
				other, err := store.Open(ctx, b.path)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { other.Close() })
				leased(t, other)
				admins = append(admins, other)
			}
			j := newJob(b.group.ID, time.Time{})
			j.MaxConcurrency = 2
			j, err := s.Jobs.Create(ctx, j, t0)
			if err != nil {
				t.Fatal(err)
			}
			if !j.Capped {
				t.Fatal("a job with max_concurrency 2 is not Capped")
			}
			runs := waitingCandidates(t, s, j, t0, 12)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var claimed []store.Run
			for i, r := range runs {
				wg.Go(func() {
					got, err := admins[i%len(admins)].Fires.ClaimRuns(ctx, []store.RunClaim{{RunID: r.ID, JobID: j.ID, TriggerType: r.TriggerType}}, t0)
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					claimed = append(claimed, got...)
					mu.Unlock()
				})
			}
			wg.Wait()
			if len(claimed) != 2 {
				t.Fatalf("claimed %d runs of a job with cap 2", len(claimed))
			}
			counts := countStatus(t, s, j.ID)
			if counts[carillonv1.RunStatus_RUN_STATUS_RUNNING] != 2 || counts[carillonv1.RunStatus_RUN_STATUS_PENDING] != 10 {
				t.Fatalf("runs by status: %v; want 2 RUNNING, 10 PENDING", counts)
			}
			waiting, err := s.Fires.Waiting(ctx, b.group.ID, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(waiting) != 10 || !strings.HasPrefix(waiting[0].Message, store.SlotWaitMessage) || !waiting[0].WaitsForSlot() {
				t.Fatalf("waiting runs: %d, first %+v", len(waiting), waiting[0])
			}

			out := settle(t, s, claimed[0], carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0.Add(time.Second))
			if len(out.Freed) != 1 || out.Freed[0].ID != waiting[0].ID {
				t.Fatalf("settling a run freed %v; want the oldest waiting run %d", ids(out.Freed), waiting[0].ID)
			}
			// All waiting runs try at once: only the freed slot is taken.
			var again []store.RunClaim
			for _, r := range waiting {
				again = append(again, store.RunClaim{RunID: r.ID, JobID: j.ID, TriggerType: r.TriggerType})
			}
			got, err := s.Fires.ClaimRuns(ctx, again, t0.Add(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].ID != waiting[0].ID || got[0].Message != "" || got[0].Slot != store.SlotHeld {
				t.Fatalf("claim after a slot freed: %v; want the oldest waiting run %d only, holding a slot", ids(got), waiting[0].ID)
			}
		})
	}
}

// TestConcurrencyCapFires: the scan's claims of a capped job's fires take
// slots; with none free a fire waits PENDING, or, under DISCARD_LATER, is
// recorded SKIPPED; a group's cap counts all its jobs' runs; a job with no
// cap in a group with none is not capped.
func TestConcurrencyCapFires(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			mk := func(cap int32, block carillonv1.BlockStrategy) store.Job {
				j := newJob(b.group.ID, t0)
				j.MaxConcurrency, j.BlockStrategy = cap, block
				j, err := s.Jobs.Create(ctx, j, t0)
				if err != nil {
					t.Fatal(err)
				}
				return j
			}
			fire := func(j store.Job, at time.Time) store.Run {
				t.Helper()
				r := store.Run{JobID: j.ID, GroupID: j.GroupID, Handler: j.Handler, ShardTotal: 1, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE,
					ScheduledAt: at, TriggeredAt: at, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING}
				runs, err := s.Fires.Claim(ctx, []store.Claim{{JobID: j.ID, Due: at, Next: at.Add(time.Second), Runs: []store.Run{r}, Capped: j.Capped}})
				if err != nil || len(runs) != 1 {
					t.Fatalf("claim fire: %v, %v", runs, err)
				}
				return runs[0]
			}
			free := mk(0, carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL)
			if free.Capped {
				t.Fatal("a job with no cap in a group with none is Capped")
			}
			if r := fire(free, t0); r.Slot != store.SlotNone || r.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING {
				t.Fatalf("an uncapped job's fire: %+v", r)
			}

			serial := mk(1, carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL)
			first := fire(serial, t0)
			if first.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING || first.Slot != store.SlotHeld {
				t.Fatalf("first fire of a job with cap 1: %+v", first)
			}
			second := fire(serial, t0.Add(time.Second))
			if !second.WaitsForSlot() || !second.DueAt.Equal(t0.Add(time.Second)) || !strings.Contains(second.Message, "concurrency cap 1 of job") {
				t.Fatalf("second fire of a job with cap 1: %+v; want PENDING, waiting for a slot", second)
			}
			out := settle(t, s, first, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0.Add(2*time.Second))
			if len(out.Freed) != 1 || out.Freed[0].ID != second.ID {
				t.Fatalf("freed %v; want %d", ids(out.Freed), second.ID)
			}

			discard := mk(1, carillonv1.BlockStrategy_BLOCK_STRATEGY_DISCARD_LATER)
			fire(discard, t0)
			skipped := fire(discard, t0.Add(time.Second))
			if skipped.Status != carillonv1.RunStatus_RUN_STATUS_SKIPPED || !strings.HasPrefix(skipped.Message, "concurrency cap 1 of job") {
				t.Fatalf("fire of a DISCARD_LATER job at its cap: %+v; want SKIPPED", skipped)
			}

			// A group cap of 3 counts the runs holding slots of all its
			// jobs (discard's one; free's first ran before any cap, and
			// holds none); its jobs become capped.
			g := b.group
			g.MaxConcurrency = 3
			if _, err := s.Groups.Update(ctx, g, t0); err != nil {
				t.Fatal(err)
			}
			free, err := s.Jobs.Get(ctx, free.ID)
			if err != nil || !free.Capped {
				t.Fatalf("a job of a group with a cap: Capped %v, %v", free.Capped, err)
			}
			for i := 1; i <= 2; i++ {
				if r := fire(free, t0.Add(time.Duration(i)*time.Second)); r.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING {
					t.Fatalf("fire %d with %d of the group's 3 slots taken: %+v", i, i, r)
				}
			}
			if r := fire(free, t0.Add(3*time.Second)); !r.WaitsForSlot() || !strings.Contains(r.Message, "concurrency cap 3 of group") {
				t.Fatalf("fire with the group's 3 slots taken: %+v", r)
			}
		})
	}
}

// TestStartedAtStored: a result's started_at is stored with its run.
func TestStartedAtStored(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			s, j := backendJob(t, be, time.Time{})
			ctx := context.Background()
			r := running(t, s, j, t0, 0, 1)
			started := t0.Add(250 * time.Millisecond)
			if _, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED,
				StartedAt: started, FinishedAt: t0.Add(time.Second)}}); err != nil {
				t.Fatal(err)
			}
			got, err := s.Runs.Get(ctx, r.ID)
			if err != nil || !got.StartedAt.Equal(started) {
				t.Fatalf("started at %v (%v); want %v", got.StartedAt, err, started)
			}
		})
	}
}

func ids(runs []store.Run) []int64 {
	out := make([]int64, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	return out
}

// TestUpdateDropsBackfill: updating a job drops its backfill runs not
// started yet, and their past instants do not become its next fire.
func TestUpdateDropsBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t, sqliteDB(t))
	next := t0.Add(time.Hour)
	j, err := s.Jobs.Create(ctx, newJob(b.group.ID, next), t0)
	if err != nil {
		t.Fatal(err)
	}
	r := pendingRun(j, t0.AddDate(0, -1, 0))
	r.TriggerType = carillonv1.TriggerType_TRIGGER_TYPE_BACKFILL
	runs, err := s.Runs.Insert(ctx, []store.Run{*r})
	if err != nil {
		t.Fatal(err)
	}
	j.Description = "changed"
	got, err := s.Jobs.Update(ctx, j, false, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !got.NextFireAt.Equal(next) {
		t.Errorf("next fire after the update: %v, want %v (not the backfill's instant)", got.NextFireAt, next)
	}
	if _, err := s.Runs.Get(ctx, runs[0].ID); err == nil {
		t.Error("the pending backfill run survived the update")
	}
}
