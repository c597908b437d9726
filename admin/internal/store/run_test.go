package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestInsertRunsIDs: runs stored together, in chunks of every prepared
// size (64 + 16 + 4 + 1 and a second 64), each get the ID of their own
// row, over both databases.
func TestInsertRunsIDs(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			s, j := backendJob(t, be, time.Time{})
			ctx := context.Background()
			for round := range 3 {
				runs := make([]store.Run, 64+16+4+1+64)
				for i := range runs {
					runs[i] = *pendingRun(j, t0.Add(time.Duration(round*1000+i)*time.Second))
					runs[i].Param = fmt.Sprint("round ", round, " run ", i)
				}
				// One run of the chunk of 16 is not plain: its chunk is
				// stored whole, the others by the plain runs' inserts.
				runs[70].Message = "not plain"
				stored, err := s.Runs.Insert(ctx, runs)
				if err != nil {
					t.Fatal(err)
				}
				seen := map[int64]bool{}
				for i, r := range stored {
					got, err := s.Runs.Get(ctx, r.ID)
					if err != nil {
						t.Fatal(err)
					}
					if seen[r.ID] || got.Param != runs[i].Param || !got.ScheduledAt.Equal(runs[i].ScheduledAt) {
						t.Fatalf("round %d, run %d: ID %d (seen before: %v) holds %q at %s, want %q at %s",
							round, i, r.ID, seen[r.ID], got.Param, got.ScheduledAt, runs[i].Param, runs[i].ScheduledAt)
					}
					seen[r.ID] = true
				}
			}
		})
	}
}

// TestRunStoredWhole: every field of a run that a run is stored with
// reads back as stored, through Get (dbsqlc's RunByID) and through List
// (runColumns, scanRun), over both databases; so do the two ways a run
// is settled by the admin (AdminSettled, LateResult).
func TestRunStoredWhole(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, b := setup(t, be.DB(t))
		j, err := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
		if err != nil {
			t.Fatal(err)
		}
		rendered := "rendered param"
		whole := store.Run{JobID: j.ID, GroupID: j.GroupID, ExecutorAddress: "10.0.0.7:9999", Handler: "h", Param: "p {{.Attempt}}",
			ShardIndex: 2, ShardTotal: 3, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MISFIRE, ScheduledAt: t0,
			TriggeredAt: t0.Add(time.Second), TriggerMessage: "misfired", Status: carillonv1.RunStatus_RUN_STATUS_FAILED,
			Message: "it failed", FinishedAt: t0.Add(3 * time.Second), Attempt: 4, DueAt: t0.Add(500 * time.Millisecond),
			TimeoutSeconds: 30, AlarmStatus: carillonv1.AlarmStatus_ALARM_STATUS_FAILED, AlarmMessage: "alarm failed",
			MissedCount: 5, MissedUntil: t0.Add(5 * time.Minute), LateResult: true, WorkflowRunID: 11, WorkflowNode: "node",
			Outputs: map[string]string{"out": "1"}, Inputs: map[string]string{"in": "2"}, RenderedParam: &rendered,
			Slot: store.SlotHeld, StartedAt: t0.Add(2 * time.Second)}
		guessed := *pendingRun(j, t0.Add(time.Hour))
		guessed.DueAt, guessed.AdminSettled = t0.Add(time.Hour), true
		// A plain run (every other field its column's default) is stored
		// by the plain runs' insert on SQLite.
		plain := store.Run{JobID: j.ID, GroupID: j.GroupID, Handler: "h", Param: "p", ShardIndex: 1, ShardTotal: 2,
			TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, ScheduledAt: t0.Add(2 * time.Hour),
			TriggeredAt: t0.Add(2*time.Hour + time.Second), Status: carillonv1.RunStatus_RUN_STATUS_RUNNING, Attempt: 2,
			DueAt: t0.Add(2*time.Hour + time.Second), TimeoutSeconds: 7}
		stored, err := s.Runs.Insert(ctx, []store.Run{whole, guessed, plain})
		if err != nil {
			t.Fatal(err)
		}
		listed, err := s.Runs.List(ctx, store.RunFilter{JobID: j.ID})
		if err != nil || len(listed) != len(stored) {
			t.Fatalf("List = %+v, %v; want the %d runs", listed, err, len(stored))
		}
		for i, want := range stored {
			got, err := s.Runs.Get(ctx, want.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("run %d as Get reads it (-want +got):\n%s", i, diff)
			}
			if diff := cmp.Diff(want, listed[len(listed)-1-i]); diff != "" {
				t.Errorf("run %d as List reads it (-want +got):\n%s", i, diff)
			}
		}
		if _, err := s.Runs.Get(ctx, stored[1].ID+100); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get of a missing run: %v, want ErrNotFound", err)
		}
	})
}

// TestRedefineAndMaxID: Redefine sets the handler, param and rendered
// param of its run alone (nil clears the rendered one), and MaxID is the
// largest run ID, 0 before any run.
func TestRedefineAndMaxID(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, b := setup(t, be.DB(t))
		if id, err := s.Runs.MaxID(ctx); err != nil || id != 0 {
			t.Errorf("MaxID with no run = %d, %v; want 0", id, err)
		}
		j, err := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := s.Runs.Insert(ctx, []store.Run{*pendingRun(j, t0), *pendingRun(j, t0.Add(time.Second)), *pendingRun(j, t0.Add(2*time.Second))})
		if err != nil {
			t.Fatal(err)
		}
		if id, err := s.Runs.MaxID(ctx); err != nil || id != stored[2].ID {
			t.Errorf("MaxID = %d, %v; want %d", id, err, stored[2].ID)
		}
		rendered := "rendered"
		if err := s.Runs.Redefine(ctx, stored[1].ID, "new handler", "new {{.Param}}", &rendered); err != nil {
			t.Fatal(err)
		}
		got, err := s.Runs.Get(ctx, stored[1].ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Handler != "new handler" || got.Param != "new {{.Param}}" || got.RenderedParam == nil || *got.RenderedParam != rendered {
			t.Errorf("redefined: handler %q, param %q, rendered %v; want the new ones", got.Handler, got.Param, got.RenderedParam)
		}
		for _, r := range []store.Run{stored[0], stored[2]} {
			if other, err := s.Runs.Get(ctx, r.ID); err != nil || other.Handler != r.Handler || other.Param != r.Param || other.RenderedParam != nil {
				t.Errorf("another run: %+v, %v; want it as stored", other, err)
			}
		}
		if err := s.Runs.Redefine(ctx, stored[1].ID, "h", "p", nil); err != nil {
			t.Fatal(err)
		}
		if got, err = s.Runs.Get(ctx, stored[1].ID); err != nil || got.Handler != "h" || got.Param != "p" || got.RenderedParam != nil {
			t.Errorf("redefined without a rendered param: %+v, %v", got, err)
		}
	})
}
