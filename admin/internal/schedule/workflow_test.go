package schedule_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// manualJob creates a job of group g with no schedule: a workflow's node.
func manualJob(t *testing.T, st *store.Store, g store.Group, now time.Time) store.Job {
	t.Helper()
	j, err := st.Jobs.Create(context.Background(), store.Job{GroupID: g.ID, Description: "j", Handler: "h",
		ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}, now)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestWorkflowSchedule runs on a fake clock (synctest): a workflow's
// instant makes one workflow run, whose root node's run is handed over on
// the instant as a WORKFLOW run scheduled at it; the next instants, while
// that workflow run is still running, wait (SERIAL); and instants missed
// while no admin ran are recorded as one SKIPPED workflow run
// (DO_NOTHING), the schedule going on after them.
func TestWorkflowSchedule(t *testing.T) {
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		db := be.DB(t)
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			st, g := setup(t, db)
			defer st.Close()
			now := time.Now()
			j := manualJob(t, st, g, now)
			first := now.Add(1500 * time.Millisecond)
			nodes := []store.WorkflowNode{{Key: "root", JobID: j.ID}, {Key: "leaf", JobID: j.ID, DependsOn: []string{"root"}}}
			w, err := st.Workflows.Create(ctx, store.Workflow{GroupID: g.ID, Name: "every second", Enabled: true, NextFireAt: first,
				ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 1, Nodes: nodes}, now)
			if err != nil {
				t.Fatal(err)
			}
			late, err := st.Workflows.Create(ctx, store.Workflow{GroupID: g.ID, Name: "late", Enabled: true, NextFireAt: now.Add(-time.Hour - 30*time.Second),
				ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 60, Nodes: nodes}, now)
			if err != nil {
				t.Fatal(err)
			}
			rec := &recorder{st: st}
			stop := start(st, rec.Fire)
			time.Sleep(2700 * time.Millisecond)
			stop()

			fires := rec.all()
			if len(fires) != 1 {
				t.Fatalf("%d fires, want 1: the root of the first workflow run (the second waits behind it)", len(fires))
			}
			f := fires[0]
			if f.run.WorkflowNode != "root" || f.run.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_WORKFLOW ||
				!f.run.ScheduledAt.Equal(first) || !f.at.Equal(first) {
				t.Fatalf("fire of %q, %s, scheduled at %v, handed over at %v; want root, WORKFLOW, %v, on it",
					f.run.WorkflowNode, f.run.TriggerType, f.run.ScheduledAt, f.at, first)
			}
			wrs, err := st.Workflows.Runs(ctx, store.WorkflowRunFilter{WorkflowID: w.ID})
			if err != nil {
				t.Fatal(err)
			}
			// Instants are claimed up to the look-ahead (1.5 s) before they
			// come: 1.5 s, 2.5 s, 3.5 s; newest first.
			if len(wrs) != 3 {
				t.Fatalf("%d workflow runs, want 3: %+v", len(wrs), wrs)
			}
			for i, wr := range wrs {
				want := carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_PENDING
				if i == len(wrs)-1 {
					want = carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING
				}
				if at := first.Add(time.Duration(len(wrs)-1-i) * time.Second); wr.Status != want || !wr.ScheduledAt.Equal(at) {
					t.Errorf("workflow run %d: %s scheduled at %v, want %s at %v", wr.ID, wr.Status, wr.ScheduledAt, want, at)
				}
			}
			if f.run.WorkflowRunID != wrs[2].ID {
				t.Fatalf("the root's run is of workflow run %d, want %d", f.run.WorkflowRunID, wrs[2].ID)
			}
			skipped, err := st.Workflows.Runs(ctx, store.WorkflowRunFilter{WorkflowID: late.ID})
			if err != nil {
				t.Fatal(err)
			}
			if len(skipped) != 1 || skipped[0].Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SKIPPED ||
				!strings.Contains(skipped[0].Message, "61 scheduled instants") {
				t.Fatalf("late workflow's runs %+v; want one SKIPPED record of its 61 missed instants", skipped)
			}
			again, err := st.Workflows.Get(ctx, late.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !again.NextFireAt.After(now) {
				t.Fatalf("late workflow's next instant %v, want after %v", again.NextFireAt, now)
			}
		})
	})
}

// TestWorkflowFireOnceNow: a workflow whose instants were missed while no
// admin ran, under FIRE_ONCE_NOW, runs once now for all of them: one
// MISFIRE workflow run scheduled at the first missed instant, whose root
// node's run is handed over at once; the schedule goes on after now.
func TestWorkflowFireOnceNow(t *testing.T) {
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		db := be.DB(t)
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			st, g := setup(t, db)
			defer st.Close()
			now := time.Now()
			j := manualJob(t, st, g, now)
			missed := now.Add(-time.Hour - 30*time.Second)
			w, err := st.Workflows.Create(ctx, store.Workflow{GroupID: g.ID, Name: "once", Enabled: true, NextFireAt: missed,
				ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 60,
				MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW,
				Nodes:           []store.WorkflowNode{{Key: "root", JobID: j.ID}}}, now)
			if err != nil {
				t.Fatal(err)
			}
			rec := &recorder{st: st}
			stop := start(st, rec.Fire)
			time.Sleep(time.Second)
			stop()

			wrs, err := st.Workflows.Runs(ctx, store.WorkflowRunFilter{WorkflowID: w.ID})
			if err != nil {
				t.Fatal(err)
			}
			if len(wrs) != 1 || wrs[0].TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_MISFIRE || !wrs[0].ScheduledAt.Equal(missed) ||
				wrs[0].Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING {
				t.Fatalf("workflow runs %+v; want one RUNNING MISFIRE run scheduled at the first missed instant %v", wrs, missed)
			}
			fires := rec.all()
			if len(fires) != 1 || fires[0].run.WorkflowRunID != wrs[0].ID || fires[0].at.After(now.Add(100*time.Millisecond)) {
				t.Fatalf("fires %+v; want the root of workflow run %d, at once", fires, wrs[0].ID)
			}
			again, err := st.Workflows.Get(ctx, w.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !again.NextFireAt.After(now) {
				t.Fatalf("next instant %v, want after %v", again.NextFireAt, now)
			}
		})
	})
}
