package alarm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/alarm"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// failedWorkflowRun stores a workflow of two nodes, first -> second, with
// the alarm webhook hook, and a run of it whose first node failed: the
// workflow run ends FAILED, its alarm due.
func failedWorkflowRun(t *testing.T, st *store.Store, hook string) (store.Workflow, int64) {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	g, err := st.Groups.Create(ctx, store.Group{AppName: "wf" + time.Now().Format("150405.000000"), Title: "t"}, now)
	if err != nil {
		t.Fatal(err)
	}
	j, err := st.Jobs.Create(ctx, store.Job{GroupID: g.ID, Description: "step", Handler: "h", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}, now)
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.Workflows.Create(ctx, store.Workflow{GroupID: g.ID, Name: "etl", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE,
		AlarmWebhookURL: hook, Nodes: []store.WorkflowNode{{Key: "first", JobID: j.ID}, {Key: "second", JobID: j.ID, DependsOn: []string{"first"}}}}, now)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := st.Workflows.Trigger(ctx, w.ID, carillonv1.TriggerType_TRIGGER_TYPE_API, nil, now)
	if err != nil || len(ch.FollowUps) != 1 {
		t.Fatalf("trigger: %v, %d runs", err, len(ch.FollowUps))
	}
	run := ch.FollowUps[0]
	if _, err := st.Fires.ClaimRuns(ctx, []store.RunClaim{{RunID: run.ID, TriggerType: run.TriggerType, SendAt: now}}, now); err != nil {
		t.Fatal(err)
	}
	settled, err := st.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: run.ID, Status: carillonv1.RunStatus_RUN_STATUS_FAILED,
		Message: "disk full", FinishedAt: now}})
	if err != nil {
		t.Fatal(err)
	}
	if len(settled.WorkflowRunsEnded) != 1 || settled.WorkflowRunsEnded[0].Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_FAILED {
		t.Fatalf("settling the failed node ended %+v, want its workflow run FAILED", settled.WorkflowRunsEnded)
	}
	return w, ch.WorkflowRunID
}

// TestSenderWorkflowRun: a workflow run that ended FAILED alarms the
// workflow's webhook and the admin's, naming the workflow, the workflow
// run, its failed nodes and its page (the node's run alarms on its own,
// as any run does); the outcome is recorded on the
// workflow run, and it is not sent again.
func TestSenderWorkflowRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := dbtest.SQLite.Open(t)
	var mu sync.Mutex
	got := map[string][]alarm.Event{}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e alarm.Event
		if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
			http.Error(w, "bad alarm", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got[r.URL.Path] = append(got[r.URL.Path], e)
		mu.Unlock()
	}))
	defer hook.Close()

	w, wrID := failedWorkflowRun(t, st, hook.URL+"/workflow")
	s := alarm.NewSender(alarm.SenderConfig{
		Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), PublicURL: "https://carillon.example.com/",
		Channels: []alarm.Channel{{Name: "webhook", Alarm: &alarm.Webhook{URL: hook.URL + "/admin"}}},
	})
	for range 2 { // the second delivers nothing more
		if err := s.SendDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	wantURL := fmt.Sprintf("https://carillon.example.com/#/workflows?id=%d&run=%d", w.ID, wrID)
	for _, path := range []string{"/workflow", "/admin"} {
		// The admin's webhook also gets the failed node's run's own alarm.
		es := slices.DeleteFunc(got[path], func(e alarm.Event) bool { return e.WorkflowRunID == 0 })
		if len(es) != 1 {
			t.Fatalf("%s webhook got %d workflow alarms, want 1", path, len(es))
		}
		e := es[0]
		if e.WorkflowID != w.ID || e.WorkflowName != "etl" || e.WorkflowRunID != wrID || e.Status != "FAILED" ||
			!slices.Equal(e.FailedNodes, []string{"first"}) || e.RunURL != wantURL || e.RunID != 0 || !strings.Contains(e.Message, "first") {
			t.Errorf("%s webhook got %+v, want workflow %d run %d FAILED, failed node first, linking to %s", path, e, w.ID, wrID, wantURL)
		}
	}
	wr, err := st.Workflows.Run(ctx, wrID)
	if err != nil {
		t.Fatal(err)
	}
	if wr.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_SENT || wr.AlarmMessage != "webhook: sent" {
		t.Errorf("workflow run's alarm %s %q, want SENT by the webhook", wr.AlarmStatus, wr.AlarmMessage)
	}
}
