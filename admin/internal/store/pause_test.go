package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestPauseGroup: a paused group's jobs are not due, a claim read before
// the pause does not apply, its pending runs are not claimed; the resume
// records the paused instants as one SKIPPED run per job, moves the
// schedule past the resume, and returns the pending runs that waited.
func TestPauseGroup(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			j, err := s.Jobs.Create(ctx, newJob(b.group.ID, t0), t0.Add(-time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			pending, err := s.Runs.Insert(ctx, []store.Run{*pendingRun(j, t0.Add(250*time.Millisecond))})
			if err != nil {
				t.Fatal(err)
			}
			g, err := s.Groups.Pause(ctx, b.group.ID, t0.Add(-500*time.Millisecond))
			if err != nil || !g.PausedAt.Equal(t0.Add(-500*time.Millisecond)) || !g.UpdatedAt.Equal(g.PausedAt) {
				t.Fatalf("PauseGroup: %+v, %v; want paused and updated at t0-500ms", g, err)
			}
			if g, err = s.Groups.Pause(ctx, b.group.ID, t0); err != nil || !g.PausedAt.Equal(t0.Add(-500*time.Millisecond)) {
				t.Fatalf("PauseGroup again: paused at %v, %v; want unchanged", g.PausedAt, err)
			}
			if !s.Jobs.StoppedSince(j.ID, 0) {
				t.Error("the paused group's job is not marked for the dispatcher (StoppedSince)")
			}

			due, err := s.Fires.DueJobs(ctx, t0.Add(time.Hour), t0.Add(time.Hour), 10)
			if err != nil || len(due) != 0 {
				t.Errorf("DueJobs while paused: %d jobs, %v; want none", len(due), err)
			}
			if n, err := s.Fires.CountDue(ctx, time.Time{}, t0.Add(time.Hour), 10); err != nil || n != 0 {
				t.Errorf("CountDue while paused: %d, %v; want 0", n, err)
			}
			if next, _, err := s.Fires.NextFireAt(ctx); err != nil || !next.IsZero() {
				t.Errorf("NextFireAt while paused: %v, %v; want none", next, err)
			}
			// A scan that read the job before the pause claims nothing.
			runs, err := s.Fires.Claim(ctx, []store.Claim{{JobID: j.ID, Due: t0, Next: t0.Add(time.Second), Runs: []store.Run{fired(j, t0)}}})
			if err != nil || len(runs) != 0 {
				t.Errorf("ClaimFires while paused: %d runs, %v; want none", len(runs), err)
			}
			claimed, err := s.Fires.ClaimRuns(ctx, []store.RunClaim{{RunID: pending[0].ID, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MANUAL}}, t0)
			if err != nil || len(claimed) != 0 {
				t.Errorf("ClaimRuns while paused: %d runs, %v; want none (the run waits)", len(claimed), err)
			}

			resumed := t0.Add(10*time.Second + 500*time.Millisecond)
			g, waited, err := s.Groups.Resume(ctx, b.group.ID, resumed, schedule.ResumePlan())
			if err != nil || !g.PausedAt.IsZero() || !g.UpdatedAt.Equal(resumed) {
				t.Fatalf("ResumeGroup: %+v, %v; want not paused, updated at the resume", g, err)
			}
			if len(waited) != 1 || waited[0].ID != pending[0].ID {
				t.Errorf("ResumeGroup returned pending runs %v, want run %d, which waited", waited, pending[0].ID)
			}
			got, _ := s.Jobs.Get(ctx, j.ID)
			if want := t0.Add(11 * time.Second); !got.NextFireAt.Equal(want) {
				t.Errorf("next fire after the resume: %v, want %v (the first instant after it)", got.NextFireAt, want)
			}
			skipped := skippedRuns(t, s, j.ID)
			if len(skipped) != 1 {
				t.Fatalf("%d SKIPPED runs after the pause, want one: %+v", len(skipped), skipped)
			}
			r := skipped[0]
			if !r.ScheduledAt.Equal(t0) || r.MissedCount != 11 || !r.MissedUntil.Equal(t0.Add(10*time.Second)) || !strings.Contains(r.Message, "paused") {
				t.Errorf("the pause's record: scheduled %v, missed %d until %v, %q; want t0, 11 until t0+10s, naming the pause",
					r.ScheduledAt, r.MissedCount, r.MissedUntil, r.Message)
			}
			if claimed, err := s.Fires.ClaimRuns(ctx, []store.RunClaim{{RunID: pending[0].ID, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MANUAL}}, resumed); err != nil || len(claimed) != 1 {
				t.Errorf("ClaimRuns after the resume: %d runs, %v; want the run", len(claimed), err)
			}
			// Resuming again records nothing more.
			if _, _, err := s.Groups.Resume(ctx, b.group.ID, resumed.Add(time.Minute), schedule.ResumePlan()); err != nil {
				t.Fatal(err)
			}
			if n := len(skippedRuns(t, s, j.ID)); n != 1 {
				t.Errorf("%d SKIPPED runs after a second resume, want still one", n)
			}
			if _, err := s.Groups.Pause(ctx, 999, t0); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("PauseGroup of no group: %v, want ErrNotFound", err)
			}
			if _, _, err := s.Groups.Resume(ctx, 999, t0, schedule.ResumePlan()); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("ResumeGroup of no group: %v, want ErrNotFound", err)
			}
		})
	}
}

// TestPauseGroupDroppedFire: the fires of a job claimed before the pause
// and dropped at their instants (settled SKIPPED) become the pause's one
// record, the earliest: the resume counts them and the other paused
// instants in it. An every-second job may have two claimed (the scan's
// look-ahead holds more than one instant).
func TestPauseGroupDroppedFire(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		for _, claimed := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/claimed=%d", be.Name, claimed), func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				s, b := setup(t, be.DB(t))
				j, err := s.Jobs.Create(ctx, newJob(b.group.ID, t0), t0.Add(-time.Minute))
				if err != nil {
					t.Fatal(err)
				}
				var runs []store.Run
				for i := range claimed {
					at := t0.Add(time.Duration(i) * time.Second)
					rs, err := s.Fires.Claim(ctx, []store.Claim{{JobID: j.ID, Due: at, Next: at.Add(time.Second), Runs: []store.Run{fired(j, at)}}})
					if err != nil || len(rs) != 1 {
						t.Fatalf("ClaimFires %v: %d runs, %v", at, len(rs), err)
					}
					runs = append(runs, rs...)
				}
				if _, err := s.Groups.Pause(ctx, b.group.ID, t0.Add(-time.Second)); err != nil {
					t.Fatal(err)
				}
				// The dispatcher drops the claimed fires at their instants.
				for _, r := range runs {
					if _, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_SKIPPED,
						Message: "dropped", FinishedAt: r.ScheduledAt}}); err != nil {
						t.Fatal(err)
					}
				}
				if _, _, err := s.Groups.Resume(ctx, b.group.ID, t0.Add(5*time.Second+500*time.Millisecond), schedule.ResumePlan()); err != nil {
					t.Fatal(err)
				}
				skipped := skippedRuns(t, s, j.ID)
				if len(skipped) != 1 {
					t.Fatalf("%d SKIPPED runs after the pause, want one: %+v", len(skipped), skipped)
				}
				r := skipped[0]
				// The claimed fires from t0 dropped, then the rest up to t0+5s
				// skipped: 6 instants.
				if r.ID != runs[0].ID || r.MissedCount != 6 || !r.MissedUntil.Equal(t0.Add(5*time.Second)) || !strings.Contains(r.Message, "paused") {
					t.Errorf("the pause's record: run %d, missed %d until %v, %q; want run %d, 6 until t0+5s, naming the pause",
						r.ID, r.MissedCount, r.MissedUntil, r.Message, runs[0].ID)
				}
			})
		}
	}
}

// TestPauseGroupOneOffAtInstant: a one-off run of a job at the first
// instant a pause skipped holds the key of that instant's record (job,
// instant): the resume records nothing then, and still moves the schedule
// past the resume.
func TestPauseGroupOneOffAtInstant(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			j, err := s.Jobs.Create(ctx, newJob(b.group.ID, t0), t0.Add(-time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			other, err := s.Jobs.Create(ctx, newJob(b.group.ID, t0), t0.Add(-time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			oneOff := *pendingRun(j, t0)
			oneOff.TriggerType, oneOff.Status, oneOff.FinishedAt = carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0
			if _, err := s.Runs.Insert(ctx, []store.Run{oneOff}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Groups.Pause(ctx, b.group.ID, t0.Add(-500*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Groups.Resume(ctx, b.group.ID, t0.Add(3500*time.Millisecond), schedule.ResumePlan()); err != nil {
				t.Fatal(err)
			}
			if skipped := skippedRuns(t, s, j.ID); len(skipped) != 0 {
				t.Errorf("SKIPPED runs of the job with a one-off run at t0: %+v, want none", skipped)
			}
			if skipped := skippedRuns(t, s, other.ID); len(skipped) != 1 || skipped[0].MissedCount != 4 {
				t.Errorf("SKIPPED runs of the other job: %+v, want one, missing 4 instants", skipped)
			}
			got, err := s.Jobs.Get(ctx, j.ID)
			if want := t0.Add(4 * time.Second); err != nil || !got.NextFireAt.Equal(want) {
				t.Errorf("next fire after the resume: %v, %v; want %v", got.NextFireAt, err, want)
			}
		})
	}
}

// fired is job j's scheduled fire of instant at, as the scan claims it.
func fired(j store.Job, at time.Time) store.Run {
	r := *pendingRun(j, at)
	r.Status, r.TriggeredAt = carillonv1.RunStatus_RUN_STATUS_RUNNING, at
	return r
}

// skippedRuns returns job id's SKIPPED runs.
func skippedRuns(t *testing.T, s *store.Store, id int64) []store.Run {
	t.Helper()
	runs, err := s.Runs.List(context.Background(), store.RunFilter{JobID: id, Status: carillonv1.RunStatus_RUN_STATUS_SKIPPED, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// TestPauseGroupWorkflow: a paused group's workflows are not due, a claim
// read before the pause makes no workflow run, and the resume records the
// paused instants as one SKIPPED workflow run and moves the schedule past
// the resume.
func TestPauseGroupWorkflow(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			j := newJob(b.group.ID, time.Time{})
			j.ScheduleType = carillonv1.ScheduleType_SCHEDULE_TYPE_NONE
			j, err := s.Jobs.Create(ctx, j, t0)
			if err != nil {
				t.Fatal(err)
			}
			w, err := s.Workflows.Create(ctx, store.Workflow{GroupID: b.group.ID, Name: "every second", Enabled: true, NextFireAt: t0,
				ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 1,
				Nodes: []store.WorkflowNode{{Key: "only", JobID: j.ID}}}, t0.Add(-time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Groups.Pause(ctx, b.group.ID, t0.Add(-500*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			if due, err := s.Workflows.Due(ctx, t0.Add(time.Hour), t0.Add(time.Hour), 10); err != nil || len(due) != 0 {
				t.Errorf("DueWorkflows while paused: %d, %v; want none", len(due), err)
			}
			if next, _, err := s.Workflows.NextFireAt(ctx); err != nil || !next.IsZero() {
				t.Errorf("NextWorkflowFireAt while paused: %v, %v; want none", next, err)
			}
			if _, err := s.Workflows.ClaimFires(ctx, []store.WorkflowClaim{{WorkflowID: w.ID, Due: t0, Next: t0.Add(time.Second),
				Fires: []store.WorkflowFire{{At: t0, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE}}}}, t0); err != nil {
				t.Fatal(err)
			}
			if runs, err := s.Workflows.Runs(ctx, store.WorkflowRunFilter{WorkflowID: w.ID, Limit: 10}); err != nil || len(runs) != 0 {
				t.Errorf("workflow runs after a claim while paused: %d, %v; want none", len(runs), err)
			}
			if _, _, err := s.Groups.Resume(ctx, b.group.ID, t0.Add(3500*time.Millisecond), schedule.ResumePlan()); err != nil {
				t.Fatal(err)
			}
			runs, err := s.Workflows.Runs(ctx, store.WorkflowRunFilter{WorkflowID: w.ID, Limit: 10})
			if err != nil || len(runs) != 1 || runs[0].Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SKIPPED ||
				!runs[0].ScheduledAt.Equal(t0) || !strings.Contains(runs[0].Message, "paused") {
				t.Fatalf("workflow runs after the resume: %+v, %v; want one SKIPPED at t0 naming the pause", runs, err)
			}
			if r := runs[0]; r.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE || !r.CreatedAt.Equal(t0.Add(3500*time.Millisecond)) ||
				!r.FinishedAt.Equal(r.CreatedAt) {
				t.Errorf("the pause's workflow run: trigger %s, created %v, finished %v; want SCHEDULE, both at the resume (t0+3.5s)",
					r.TriggerType, r.CreatedAt, r.FinishedAt)
			}
			got, err := s.Workflows.Get(ctx, w.ID)
			if want := t0.Add(4 * time.Second); err != nil || !got.NextFireAt.Equal(want) {
				t.Errorf("workflow's next instant after the resume: %v, %v; want %v", got.NextFireAt, err, want)
			}
		})
	}
}
