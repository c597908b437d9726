package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestStartStopJob: JobStore.Start enables a stopped job with its next
// fire and leaves a started one as it is; JobStore.Stop disables a
// started job, clears its next fire and drops its own pending runs, a
// backfill's too (a workflow node's pending run and the job's other runs
// stay), and leaves a stopped one as it is; JobStore.Update (its schedule
// unchanged) drops them the same way and takes the earliest dropped
// scheduled instant, a backfill's left out, as its next fire; Start, Stop
// and Delete refuse a missing job (ErrNotFound). Over both backends.
func TestStartStopJob(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			j, err := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
			if err != nil {
				t.Fatal(err)
			}
			want := func(what string, enabled bool, next, updated time.Time) {
				t.Helper()
				got, err := s.Jobs.Get(ctx, j.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Enabled != enabled || !got.NextFireAt.Equal(next) || !got.UpdatedAt.Equal(updated) {
					t.Errorf("%s: enabled %v, next fire %v, updated %v; want %v, %v, %v", what,
						got.Enabled, got.NextFireAt, got.UpdatedAt, enabled, next, updated)
				}
			}
			// pending inserts pending runs of j: its own at at, a backfill's
			// at an earlier instant, a workflow node's at a later one.
			pending := func(at time.Time) (own, backfill, node int64) {
				t.Helper()
				bf := pendingRun(j, at.Add(-time.Hour))
				bf.TriggerType = carillonv1.TriggerType_TRIGGER_TYPE_BACKFILL
				wf := pendingRun(j, at.Add(time.Hour))
				wf.TriggerType, wf.WorkflowRunID, wf.WorkflowNode = carillonv1.TriggerType_TRIGGER_TYPE_WORKFLOW, 1, "n"
				rs, err := s.Runs.Insert(ctx, []store.Run{*pendingRun(j, at), *bf, *wf})
				if err != nil {
					t.Fatal(err)
				}
				return rs[0].ID, rs[1].ID, rs[2].ID
			}
			wantPending := func(what string, ids ...int64) {
				t.Helper()
				rs, err := s.Runs.List(ctx, store.RunFilter{JobID: j.ID, Status: carillonv1.RunStatus_RUN_STATUS_PENDING, Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				var got []int64
				for _, r := range rs {
					got = append(got, r.ID)
				}
				slices.Sort(got)
				if !slices.Equal(got, ids) {
					t.Errorf("%s: pending runs %v, want %v", what, got, ids)
				}
			}

			if _, err := s.Jobs.Start(ctx, j.ID, t0.Add(10*time.Second), t0.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			want("started", true, t0.Add(10*time.Second), t0.Add(time.Second))
			if _, err := s.Jobs.Start(ctx, j.ID, t0.Add(20*time.Second), t0.Add(2*time.Second)); err != nil {
				t.Fatal(err)
			}
			want("started again", true, t0.Add(10*time.Second), t0.Add(time.Second))

			running, err := s.Runs.Insert(ctx, []store.Run{fired(j, t0.Add(5*time.Second))})
			if err != nil {
				t.Fatal(err)
			}
			_, _, node := pending(t0.Add(30 * time.Second))
			if _, err := s.Jobs.Update(ctx, j, false, t0.Add(3*time.Second)); err != nil {
				t.Fatal(err)
			}
			want("updated", true, t0.Add(30*time.Second), t0.Add(3*time.Second))
			wantPending("updated", node)

			_, _, node2 := pending(t0.Add(40 * time.Second))
			if _, err := s.Jobs.Stop(ctx, j.ID, t0.Add(4*time.Second)); err != nil {
				t.Fatal(err)
			}
			want("stopped", false, time.Time{}, t0.Add(4*time.Second))
			wantPending("stopped", node, node2)
			if _, err := s.Jobs.Stop(ctx, j.ID, t0.Add(5*time.Second)); err != nil {
				t.Fatal(err)
			}
			want("stopped again", false, time.Time{}, t0.Add(4*time.Second))

			missing := j.ID + 1000
			if _, err := s.Jobs.Start(ctx, missing, t0, t0); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Start of a missing job: %v, want ErrNotFound", err)
			}
			if _, err := s.Jobs.Stop(ctx, missing, t0); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Stop of a missing job: %v, want ErrNotFound", err)
			}
			if err := s.Jobs.Delete(ctx, missing); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Delete of a missing job: %v, want ErrNotFound", err)
			}

			if _, err := s.Jobs.Start(ctx, j.ID, t0.Add(time.Minute), t0.Add(6*time.Second)); err != nil {
				t.Fatal(err)
			}
			own, _, _ := pending(t0.Add(50 * time.Second))
			if err := s.Jobs.Delete(ctx, j.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Jobs.Get(ctx, j.ID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get of the deleted job: %v, want ErrNotFound", err)
			}
			if _, err := s.Runs.Get(ctx, own); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the deleted job's own pending run: %v, want ErrNotFound", err)
			}
			if _, err := s.Runs.Get(ctx, running[0].ID); err != nil {
				t.Errorf("the deleted job's running run: %v, want it kept", err)
			}
		})
	}
}

// TestJobGetAll: GetAll reads the jobs named that exist, each as Get
// reads it, whatever the repeats among the IDs.
func TestJobGetAll(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, j1 := backendJob(t, be, time.Time{})
			j2 := newJob(j1.GroupID, time.Time{})
			j2.AlarmWebhookURL, j2.AlarmEmails = "https://hooks.example.com/x", []string{"ops@example.com"}
			j2, err := s.Jobs.Create(ctx, j2, t0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Jobs.GetAll(ctx, []int64{j2.ID, j1.ID, j2.ID, j2.ID + 1000})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 {
				t.Fatalf("GetAll read %d jobs, want 2", len(got))
			}
			for _, id := range []int64{j1.ID, j2.ID} {
				want, err := s.Jobs.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if got[id] == nil {
					t.Errorf("GetAll did not read job %d", id)
				} else if diff := cmp.Diff(want, *got[id]); diff != "" {
					t.Errorf("GetAll's job %d differs from Get's (-Get +GetAll):\n%s", id, diff)
				}
			}
		})
	}
}
