package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestWorkflowAlarmAndMetrics: a workflow run that ends FAILED on a real
// executor alarms the admin's webhook (on loopback) once, naming the
// workflow, the workflow run, the failed node and its page, and records
// the delivery on the workflow run; /metrics counts the workflow runs by
// status and the nodes' waits.
func TestWorkflowAlarmAndMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	var alarms []map[string]any
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e map[string]any
		if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
			http.Error(w, "bad alarm", http.StatusBadRequest)
			return
		}
		if _, ok := e["workflowRunId"]; ok { // the failed node's run alarms on its own too
			mu.Lock()
			alarms = append(alarms, e)
			mu.Unlock()
		}
	}))
	defer hook.Close()
	w := startWorkflowSetupWith(t, admin.Config{AlarmWebhook: hook.URL, PublicURL: "https://carillon.example.com", MetricsListen: "127.0.0.1:0"})
	f := w.jobs["flaky"]
	id := w.create(t, "etl", node("extract", f), node("transform", f, "extract"), node("load", f, "transform"))
	w.failing.Store("transform")
	tr, err := w.wf.TriggerWorkflow(ctx, &carillonv1.TriggerWorkflowRequest{WorkflowId: id})
	if err != nil {
		t.Fatal(err)
	}
	w.await(t, tr.WorkflowRunId, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_FAILED)
	var wr *carillonv1.WorkflowRun
	eventually(t, w.c.url, 30*time.Second, func() error {
		res, err := w.wf.GetWorkflowRun(ctx, &carillonv1.GetWorkflowRunRequest{WorkflowRunId: tr.WorkflowRunId})
		if err != nil {
			return err
		}
		if wr = res.WorkflowRun; wr.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_SENT {
			return fmt.Errorf("workflow run's alarm %s %q, want SENT", wr.AlarmStatus, wr.AlarmMessage)
		}
		return nil
	})
	mu.Lock()
	got := slices.Clone(alarms)
	mu.Unlock()
	wantURL := fmt.Sprintf("https://carillon.example.com/#/workflows?id=%d&run=%d", id, tr.WorkflowRunId)
	if len(got) != 1 || got[0]["workflowId"] != fmt.Sprint(id) || got[0]["workflowName"] != "etl" ||
		got[0]["workflowRunId"] != fmt.Sprint(tr.WorkflowRunId) || got[0]["status"] != "FAILED" || got[0]["runUrl"] != wantURL ||
		fmt.Sprint(got[0]["failedNodes"]) != "[transform]" {
		t.Errorf("webhook got %v, want one alarm of workflow %d run %d FAILED, failed node transform, linking to %s", got, id, tr.WorkflowRunId, wantURL)
	}

	w.failing.Store("")
	if _, err := w.wf.RetryWorkflowRun(ctx, &carillonv1.RetryWorkflowRunRequest{WorkflowRunId: tr.WorkflowRunId}); err != nil {
		t.Fatal(err)
	}
	w.await(t, tr.WorkflowRunId, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SUCCEEDED)
	m := scrapeMetrics(t, w.a.Metrics)
	for _, c := range []struct {
		status string
		want   float64
	}{{"failed", 1}, {"succeeded", 1}, {"cancelled", 0}} {
		if got := m.value("carillon_workflow_runs_total", "status", c.status); got != c.want {
			t.Errorf("carillon_workflow_runs_total{status=%q} = %v, want %v", c.status, got, c.want)
		}
	}
	// extract, transform, then transform again and load after the retry.
	if got := m.value("carillon_workflow_node_wait_seconds"); got != 4 {
		t.Errorf("carillon_workflow_node_wait_seconds counts %v waits, want 4", got)
	}
}
