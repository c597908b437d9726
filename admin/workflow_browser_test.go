package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/carillonhq/carillon/admin/client"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
	"github.com/carillonhq/carillon/sdk"
)

// workflowClient is a WorkflowService client of the admin at url, as its
// first ADMIN.
func workflowClient(url string) carillonv1connect.WorkflowServiceClient {
	tok, _ := credentials.Load(url)
	return carillonv1connect.NewWorkflowServiceClient(http.DefaultClient, url, client.WithToken(tok.(string)))
}

// nodesAre is a JavaScript expression: whether the graph's nodes of keys
// all show status (a RunStatus name without its prefix).
func nodesAre(status string, keys ...string) string {
	return fmt.Sprintf(`%q.split(" ").every((k) => document.querySelector('[data-testid=dag] [data-node="' + k + '"]')?.dataset.status === %q)`,
		strings.Join(keys, " "), status)
}

// runIs is a JavaScript expression: whether the open workflow run's status
// reads status.
func runIs(status string) string {
	return fmt.Sprintf(`document.querySelector('[data-testid=workflow-run-status]')?.textContent === %q`, status)
}

// TestConsoleWorkflows drives the console's Workflows page in headless
// Chromium against a real admin and SDK executor: a workflow of four
// nodes (extract -> transform_a and transform_b -> load) made in the
// editor, its graph drawn in layers, run now, every node turning
// SUCCEEDED in the run's view, a node clicked through to its run and log
// and back; edited (a cycle refused naming its nodes); a failed node
// retried and a running one cancelled from the run's view; Chinese; a
// phone's width; a VIEWER sees no write buttons.
func TestConsoleWorkflows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmin(t)
	c := newClients(a.URL, http.DefaultClient)
	wf := workflowClient(a.URL)
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "etl", Title: "ETL"}})
	if err != nil {
		t.Fatal(err)
	}
	var fixed atomic.Bool
	startExecutor(t, a.URL, "etl", func(ex *sdk.Executor) {
		ex.HandleFunc("flaky", func(ctx context.Context, job *sdk.Job) error {
			if !fixed.Load() {
				return fmt.Errorf("not fixed yet")
			}
			return nil
		})
		ex.HandleFunc("wait", func(ctx context.Context, job *sdk.Job) error {
			<-ctx.Done()
			return ctx.Err()
		})
	})
	none := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
	jobs := map[string]*carillonv1.Job{}
	for _, d := range []string{"extract", "transform_a", "transform_b", "load"} {
		jobs[d] = createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: d, Handler: "ok", Schedule: none})
	}

	// The editor: a node per job picked, dependencies ticked, the graph
	// drawn as it is edited.
	b := newBrowser(t, a.URL)
	b.signIn(t, "admin", adminPassword)
	addNode := func(job string) chromedp.Action {
		return chromedp.Tasks{
			setValue(`select[name=add_job]`, fmt.Sprint(jobs[job].Id)),
			chromedp.Click(`//button[text()="Add node"]`, chromedp.BySearch),
			chromedp.WaitVisible(fmt.Sprintf(`[data-testid=dag] [data-node=%q]`, job)),
		}
	}
	tick := func(child, parent string) chromedp.Action {
		return chromedp.Click(fmt.Sprintf(`input[name="dep-%s-%s"]`, child, parent))
	}
	b.run(t, "make a workflow in the editor",
		chromedp.Navigate(a.URL+"/#/"),
		chromedp.Click(`//nav//a[text()="Workflows"]`, chromedp.BySearch),
		chromedp.Click(`//button[text()="New workflow"]`, chromedp.BySearch),
		setValue(`select[name=group_id]`, fmt.Sprint(g.Group.Id)),
		setValue(`input[name=name]`, "nightly etl"),
		setValue(`select[name=schedule_type]`, fmt.Sprint(int32(carillonv1.ScheduleType_SCHEDULE_TYPE_NONE))),
		// An option of a closed select is never visible: ready is loaded.
		chromedp.WaitReady(`//select[@name="add_job"]/option[text()="#`+fmt.Sprint(jobs["load"].Id)+` load"]`, chromedp.BySearch),
		addNode("extract"), addNode("transform_a"), addNode("transform_b"), addNode("load"),
		tick("transform_a", "extract"), tick("transform_b", "extract"), tick("load", "transform_a"), tick("load", "transform_b"),
		chromedp.WaitVisible(`[data-testid=dag] [data-edge="transform_b->load"]`),
	)
	b.screenshot(t, "workflow-editor")
	b.run(t, "create the workflow",
		chromedp.Click(`//form[@aria-label="new workflow"]//button[text()="Create"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//a[text()="nightly etl"]`, chromedp.BySearch),
	)
	b.screenshot(t, "workflows")
	list, err := wf.ListWorkflows(ctx, &carillonv1.ListWorkflowsRequest{})
	if err != nil || len(list.Workflows) != 1 {
		t.Fatalf("workflows after creating one in the console: %v, %v", list, err)
	}
	w := list.Workflows[0]
	deps := map[string]string{}
	for _, n := range w.Nodes {
		d := slices.Clone(n.DependsOn)
		slices.Sort(d)
		deps[n.Key] = fmt.Sprintf("%d<-%s", n.JobId, strings.Join(d, ","))
	}
	want := map[string]string{
		"extract":     fmt.Sprintf("%d<-", jobs["extract"].Id),
		"transform_a": fmt.Sprintf("%d<-extract", jobs["transform_a"].Id),
		"transform_b": fmt.Sprintf("%d<-extract", jobs["transform_b"].Id),
		"load":        fmt.Sprintf("%d<-transform_a,transform_b", jobs["load"].Id),
	}
	if w.Name != "nightly etl" || w.GroupId != g.Group.Id || fmt.Sprint(deps) != fmt.Sprint(want) {
		t.Fatalf("the workflow made in the console: %q in group %d, nodes %v, want %v", w.Name, w.GroupId, deps, want)
	}

	// Its graph: a layer per depth, left to right, an arrow per dependency.
	var xs map[string]float64
	var edges int
	b.run(t, "the workflow's graph",
		chromedp.Click(`//a[text()="nightly etl"]`, chromedp.BySearch),
		chromedp.WaitVisible(`[data-testid=dag] [data-node=load]`),
		chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('[data-testid=dag] [data-node]')].map((g) => [g.dataset.node, g.getBoundingClientRect().x]))`, &xs),
		chromedp.Evaluate(`document.querySelectorAll('[data-testid=dag] [data-edge]').length`, &edges),
	)
	if !(xs["extract"] < xs["transform_a"] && xs["transform_a"] == xs["transform_b"] && xs["transform_b"] < xs["load"]) || edges != 4 {
		t.Errorf("the graph's columns %v and %d edges, want extract | transform_a, transform_b | load and 4", xs, edges)
	}

	// Run it now: the run's view opens, every node turns SUCCEEDED.
	b.run(t, "run now",
		chromedp.Click(`//button[text()="Run now"]`, chromedp.BySearch),
		chromedp.WaitVisible(`[data-testid=workflow-run] [data-testid=legend]`),
		chromedp.Poll(nodesAre("SUCCEEDED", "extract", "transform_a", "transform_b", "load")+" && "+runIs("SUCCEEDED"), nil,
			chromedp.WithPollingTimeout(30*time.Second)),
	)
	b.screenshot(t, "workflow-run")
	runs, err := wf.ListWorkflowRuns(ctx, &carillonv1.ListWorkflowRunsRequest{WorkflowId: w.Id})
	if err != nil || len(runs.WorkflowRuns) != 1 {
		t.Fatalf("workflow runs after Run now: %v, %v", runs, err)
	}
	got, err := wf.GetWorkflowRun(ctx, &carillonv1.GetWorkflowRunRequest{WorkflowRunId: runs.WorkflowRuns[0].Id})
	if err != nil {
		t.Fatal(err)
	}
	var load *carillonv1.WorkflowNodeRun
	for _, n := range got.WorkflowRun.Nodes {
		if n.Key == "load" {
			load = n
		}
	}
	if load == nil || load.RunId == 0 {
		t.Fatalf("the workflow run's nodes: %v", got.WorkflowRun.Nodes)
	}

	// A node opens its run and log.
	var hash, log string
	b.run(t, "click a node through to its run",
		chromedp.Click(`[data-testid=dag] [data-node=load] rect`),
		chromedp.WaitVisible(`[data-testid=run-detail]`),
		chromedp.Evaluate(`window.location.hash`, &hash),
		chromedp.Poll(`document.querySelector('[data-testid="run-log"]')?.textContent.includes("ok run")`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		// The run's fields come with their own answer, apart from its log's.
		chromedp.Poll(`document.querySelector('[data-testid="run-detail"]')?.textContent.includes("WORKFLOW")`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Text(`[data-testid=run-detail]`, &log),
	)
	if hash != fmt.Sprintf("#/runs?job=%d&run=%d", jobs["load"].Id, load.RunId) || !strings.Contains(log, "WORKFLOW") {
		t.Errorf("the load node opened %q, want its run %d; the detail: %q", hash, load.RunId, log)
	}
	var back string
	b.run(t, "the node's run links back to its workflow run",
		textOf(`[data-testid=workflow-run-link]`, &back),
		chromedp.Click(`[data-testid=workflow-run-link]`),
		chromedp.Poll(nodesAre("SUCCEEDED", "load")+" && "+runIs("SUCCEEDED"), nil, chromedp.WithPollingTimeout(10*time.Second)),
	)
	if want := fmt.Sprintf("%d · load", got.WorkflowRun.Id); back != want {
		t.Errorf("the node's run names its workflow run %q, want %q", back, want)
	}

	// Edit: a cycle is refused, naming its nodes; a description saved.
	var refusal string
	b.run(t, "edit the workflow",
		chromedp.Navigate(fmt.Sprintf("%s/#/workflows?id=%d", a.URL, w.Id)),
		chromedp.Click(`//button[text()="Edit"]`, chromedp.BySearch),
		tick("extract", "load"),
		chromedp.Click(`//form[@aria-label="edit workflow"]//button[text()="Save"]`, chromedp.BySearch),
		textOf(`form[aria-label="edit workflow"] [role=alert]`, &refusal),
		tick("extract", "load"),
		setValue(`input[name=description]`, "extract, transform twice, load"),
		setValue(`input[name=alarm_emails]`, "etl@example.com, ops@example.com"),
		chromedp.Click(`//form[@aria-label="edit workflow"]//button[text()="Save"]`, chromedp.BySearch),
		chromedp.WaitNotPresent(`form[aria-label="edit workflow"]`),
		chromedp.WaitVisible(`//dd[text()="extract, transform twice, load"]`, chromedp.BySearch),
	)
	if !strings.Contains(refusal, "cycle") || !strings.Contains(refusal, "extract") {
		t.Errorf("a cycle made in the editor: %q, want it refused naming its nodes", refusal)
	}
	// Its page's backfill asks BackfillWorkflow, which refuses a workflow
	// with no schedule, saying so in the dialog.
	var backfillErr string
	b.run(t, "backfill without a schedule",
		chromedp.Click(`//button[text()="Backfill…"]`, chromedp.BySearch),
		setValue(`input[name=backfill_from]`, "2026-11-01T00:00"),
		setValue(`input[name=backfill_to]`, "2026-11-02T00:00"),
		chromedp.Click(`//form[@aria-label="backfill"]//button[text()="Preview the instants"]`, chromedp.BySearch),
		textOf(`form[aria-label="backfill"] [role=alert]`, &backfillErr),
		chromedp.Click(`//form[@aria-label="backfill"]//button[text()="Cancel"]`, chromedp.BySearch),
	)
	if !strings.Contains(backfillErr, "schedule") {
		t.Errorf("backfill of a workflow with no schedule: %q, want it refused naming the schedule", backfillErr)
	}
	edited, err := wf.GetWorkflow(ctx, &carillonv1.GetWorkflowRequest{Id: w.Id})
	if err != nil || edited.Workflow.Description != "extract, transform twice, load" || len(edited.Workflow.Nodes) != 4 ||
		!slices.Equal(edited.Workflow.AlarmEmails, []string{"etl@example.com", "ops@example.com"}) {
		t.Errorf("the workflow after editing: %v, %v", edited, err)
	}
	b.noErrors(t)

	// A second browser for the rest: each has 90 s for all its steps,
	// which one browser for the whole test nears on a busy machine.
	r := newBrowser(t, a.URL)
	r.signIn(t, "admin", adminPassword)

	// A failed node: the rest is skipped, Retry runs it again and what
	// depends on it.
	flaky := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "flaky", Handler: "flaky", Schedule: none})
	slow := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "slow", Handler: "wait", Schedule: none})
	mk := func(name string, first *carillonv1.Job) *carillonv1.Workflow {
		t.Helper()
		res, err := wf.CreateWorkflow(ctx, &carillonv1.CreateWorkflowRequest{Workflow: &carillonv1.Workflow{
			GroupId: g.Group.Id, Name: name, Schedule: none, Nodes: []*carillonv1.WorkflowNode{
				{Key: "first", JobId: first.Id}, {Key: "then", JobId: jobs["load"].Id, DependsOn: []string{"first"}},
			},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Workflow
	}
	trigger := func(w *carillonv1.Workflow) string {
		t.Helper()
		res, err := wf.TriggerWorkflow(ctx, &carillonv1.TriggerWorkflowRequest{WorkflowId: w.Id})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%s/#/workflows?id=%d&run=%d", a.URL, w.Id, res.WorkflowRunId)
	}
	retried := trigger(mk("retried", flaky))
	r.run(t, "a failed node, retried",
		chromedp.Navigate(retried),
		chromedp.Poll(nodesAre("FAILED", "first")+" && "+nodesAre("SKIPPED", "then")+" && "+runIs("FAILED"), nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.ActionFunc(func(context.Context) error { fixed.Store(true); return nil }),
		// Clicked again while the run reads FAILED, as Cancel run below:
		// a busy CI machine's click once missed the button, the page left
		// at FAILED with no retry.
		chromedp.Poll(`(() => { if (!(`+runIs("FAILED")+`)) return `+nodesAre("SUCCEEDED", "first", "then")+" && "+runIs("SUCCEEDED")+`;
			[...document.querySelectorAll('button')].find((b) => b.textContent === "Retry")?.click(); return false; })()`,
			nil, chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(time.Second)),
	)

	// A running node: Cancel run kills it and skips the rest.
	cancelled := trigger(mk("cancelled", slow))
	r.run(t, "a running node, cancelled",
		chromedp.Navigate(cancelled),
		chromedp.Poll(nodesAre("RUNNING", "first"), nil, chromedp.WithPollingTimeout(30*time.Second)),
		// Clicked again while the run does not read CANCELLED: a click on
		// a button the page re-rendered at that moment does nothing (a
		// busy CI machine once timed out so).
		chromedp.Poll(`(() => { if (`+runIs("CANCELLED")+`) return `+nodesAre("SKIPPED", "then")+`;
			[...document.querySelectorAll('button')].find((b) => b.textContent === "Cancel run")?.click(); return false; })()`,
			nil, chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(time.Second)),
	)

	// Chinese: the page, the legend and the statuses, no UNSPECIFIED.
	var nav, legend, body string
	r.run(t, "Chinese",
		chromedp.Navigate(retried),
		chromedp.WaitVisible(`[data-testid=legend]`),
		chromedp.Click(`[data-testid=lang]`),
		chromedp.WaitVisible(`//button[text()="重试" or text()="立即运行"]`, chromedp.BySearch),
		textOf(`nav[aria-label=main]`, &nav),
		textOf(`[data-testid=legend]`, &legend),
		chromedp.Text(`body`, &body),
		chromedp.Click(`[data-testid=lang]`),
		chromedp.WaitVisible(`//button[text()="中文 / ZH"]`, chromedp.BySearch),
	)
	if !strings.Contains(nav, "工作流") || !strings.Contains(legend, "成功") || !strings.Contains(legend, "已跳过") ||
		!strings.Contains(body, "工作流运行") || strings.Contains(body, "UNSPECIFIED") {
		t.Errorf("Chinese: nav %q, legend %q; the page:\n%s", nav, legend, body)
	}

	// A phone: the graph and the tables scroll in their own boxes, the page
	// does not.
	r.run(t, "phone width",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(retried),
		chromedp.WaitVisible(`[data-testid=legend]`),
	)
	if !r.fitsWidth(t, "workflow-run-phone", "") {
		t.Error("a workflow run's page is wider than a phone's screen")
	}
	r.screenshot(t, "workflow-run-phone")
	r.run(t, "back to a laptop", chromedp.EmulateViewport(1280, 900))
	r.noErrors(t)

	// A VIEWER sees the workflows and their runs, and no write button.
	newUser(t, a.URL, &carillonv1.User{Username: "vera", Role: carillonv1.Role_ROLE_VIEWER})
	v := newBrowser(t, a.URL)
	v.signIn(t, "vera", "a member's password")
	writes := `//button[text()="New workflow" or text()="Run now" or text()="Start" or text()="Stop" or text()="Edit" or text()="Delete" or text()="Retry" or text()="Cancel run"]`
	var onList, onRun []*cdp.Node
	v.run(t, "viewer's workflows",
		chromedp.Navigate(a.URL+"/#/workflows"),
		chromedp.WaitVisible(`//a[text()="nightly etl"]`, chromedp.BySearch),
		chromedp.Nodes(writes, &onList, chromedp.BySearch, chromedp.AtLeast(0)),
		chromedp.Navigate(cancelled),
		chromedp.Poll(runIs("CANCELLED"), nil, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Nodes(writes, &onRun, chromedp.BySearch, chromedp.AtLeast(0)),
	)
	if len(onList) != 0 || len(onRun) != 0 {
		t.Errorf("a VIEWER sees %d write buttons on the workflows page, %d on a cancelled run's", len(onList), len(onRun))
	}
	v.screenshot(t, "workflows-viewer")
	v.noErrors(t)
}

// TestConsoleRunContext: the run detail shows a workflow node's inputs
// and what its run published (context between nodes), key = value.
func TestConsoleRunContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := startWorkflowSetup(t)
	b := newBrowser(t, w.c.url)
	j := w.jobs["context"]
	id := w.create(t, "context", node("extract", j), node("transform", j, "extract"))
	tr, err := w.wf.TriggerWorkflow(ctx, &carillonv1.TriggerWorkflowRequest{WorkflowId: id})
	if err != nil {
		t.Fatal(err)
	}
	wr := w.await(t, tr.WorkflowRunId, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SUCCEEDED)
	b.signIn(t, "admin", adminPassword)
	var inputs, outputs string
	b.run(t, "the transform node's run shows its inputs and outputs",
		chromedp.Navigate(fmt.Sprintf("%s/#/runs?job=%d&run=%d", w.c.url, j, nodeRun(wr, "transform").GetRunId())),
		textOf(`[data-testid=run-detail] [data-testid=run-inputs]`, &inputs),
		textOf(`[data-testid=run-detail] [data-testid=run-outputs]`, &outputs),
	)
	if inputs != "rows = 42" || outputs != "transform_rows = 84" {
		t.Errorf("the run detail shows inputs %q and outputs %q, want rows = 42 and transform_rows = 84", inputs, outputs)
	}
	b.screenshot(t, "run-context")
}
