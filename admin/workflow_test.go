package admin_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/client"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
	"github.com/carillonhq/carillon/sdk"
)

// journal records what an executor's handlers did, by param (the node's
// key): each start and end, in order.
type journal struct {
	mu     sync.Mutex
	events []string
}

func (j *journal) add(event string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, event)
}

// count returns how many times the node with key started.
func (j *journal) count(key string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for _, e := range j.events {
		if e == "start "+key {
			n++
		}
	}
	return n
}

// index returns the position of event in the journal, -1 if absent.
func (j *journal) index(event string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Index(j.events, event)
}

// workflowSetup is an admin, an executor of app "wf" with a journal, and
// a job of each of its handlers.
type workflowSetup struct {
	c    clients
	a    *testAdmin
	wf   carillonv1connect.WorkflowServiceClient
	jobs map[string]int64 // by handler
	log  *journal
	// failing makes the "flaky" handler fail for the param it holds.
	failing atomic.Value
	// release ends the "block" handler's runs.
	release chan struct{}
	// blocked is signalled when a "block" run started.
	blocked chan struct{}
	// inputs are what each "context" run got in Job.Inputs, by param.
	inputs sync.Map
}

// startWorkflowSetup starts the admin and executor, and makes the group
// and a job each for the handlers "ok" (journaled), "flaky" (fails for
// the param in failing) and "block" (waits for release or its kill).
func startWorkflowSetup(t *testing.T) *workflowSetup {
	t.Helper()
	return startWorkflowSetupWith(t, admin.Config{})
}

// startWorkflowSetupWith is startWorkflowSetup with the admin's cfg.
func startWorkflowSetupWith(t *testing.T, cfg admin.Config) *workflowSetup {
	t.Helper()
	ctx := context.Background()
	a := startAdminWith(t, cfg, http.DefaultClient)
	w := &workflowSetup{c: newClients(a.URL, http.DefaultClient), a: a, log: &journal{}, jobs: map[string]int64{},
		release: make(chan struct{}), blocked: make(chan struct{}, 8)}
	w.failing.Store("")
	tok, _ := credentials.Load(a.URL)
	w.wf = carillonv1connect.NewWorkflowServiceClient(http.DefaultClient, a.URL, client.WithToken(tok.(string)))
	addr := startExecutor(t, a.URL, "wf", func(ex *sdk.Executor) {
		ex.HandleFunc("journal", func(ctx context.Context, job *sdk.Job) error {
			w.log.add("start " + job.Param)
			time.Sleep(20 * time.Millisecond) // long enough that a dependent started too early would overlap
			w.log.add("end " + job.Param)
			return nil
		})
		ex.HandleFunc("flaky", func(ctx context.Context, job *sdk.Job) error {
			w.log.add("start " + job.Param)
			if w.failing.Load().(string) == job.Param {
				return fmt.Errorf("flaky: %s fails", job.Param)
			}
			w.log.add("end " + job.Param)
			return nil
		})
		ex.HandleFunc("context", func(ctx context.Context, job *sdk.Job) error {
			w.inputs.Store(job.Param, job.Inputs)
			if job.Param == "extract" {
				return job.SetOutput("rows", "42")
			}
			rows, err := strconv.Atoi(job.Inputs["rows"])
			if err != nil {
				return fmt.Errorf("input rows: %w", err)
			}
			return job.SetOutput(job.Param+"_rows", strconv.Itoa(2*rows))
		})
		ex.HandleFunc("block", func(ctx context.Context, job *sdk.Job) error {
			w.log.add("start " + job.Param)
			w.blocked <- struct{}{}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-w.release:
				return nil
			}
		})
	})
	g, err := w.c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "wf"}})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, w.c.url, 10*time.Second, func() error {
		res, err := w.c.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: g.Group.Id})
		if err != nil {
			return err
		}
		if !slices.Contains(res.Group.Addresses, addr) {
			return fmt.Errorf("group addresses %v, want %s", res.Group.Addresses, addr)
		}
		return nil
	})
	for _, h := range []string{"journal", "flaky", "block", "context"} {
		res, err := w.c.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{
			GroupId: g.Group.Id, Description: h, Handler: h, Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE},
		}})
		if err != nil {
			t.Fatal(err)
		}
		w.jobs[h] = res.Job.Id
	}
	return w
}

// node is a workflow node whose param is its key, which the handlers
// journal.
func node(key string, job int64, deps ...string) *carillonv1.WorkflowNode {
	return &carillonv1.WorkflowNode{Key: key, JobId: job, DependsOn: deps, Param: &key}
}

// create stores a workflow of nodes in the setup's group.
func (w *workflowSetup) create(t *testing.T, name string, nodes ...*carillonv1.WorkflowNode) int64 {
	t.Helper()
	j, err := w.c.job.GetJob(context.Background(), &carillonv1.GetJobRequest{Id: w.jobs["journal"]})
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.wf.CreateWorkflow(context.Background(), &carillonv1.CreateWorkflowRequest{Workflow: &carillonv1.Workflow{
		GroupId: j.Job.GroupId, Name: name, Nodes: nodes,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Workflow.Id
}

// await polls workflow run id until it has status, for at most 30 s, and
// returns it.
func (w *workflowSetup) await(t *testing.T, id int64, status carillonv1.WorkflowRunStatus) *carillonv1.WorkflowRun {
	t.Helper()
	var wr *carillonv1.WorkflowRun
	eventually(t, w.c.url, 30*time.Second, func() error {
		res, err := w.wf.GetWorkflowRun(context.Background(), &carillonv1.GetWorkflowRunRequest{WorkflowRunId: id})
		if err != nil {
			return err
		}
		wr = res.WorkflowRun
		if wr.Status != status {
			return fmt.Errorf("workflow run %d is %s (%s), want %s", id, wr.Status, wr.Message, status)
		}
		return nil
	})
	return wr
}

func nodeRun(wr *carillonv1.WorkflowRun, key string) *carillonv1.WorkflowNodeRun {
	for _, n := range wr.Nodes {
		if n.Key == key {
			return n
		}
	}
	return nil
}

// TestWorkflowEndToEnd runs extract -> (transform_a, transform_b) -> load
// on a real SDK executor: each node runs once, load only after both
// transforms ended, and every node's run is a WORKFLOW run carrying the
// workflow run's scheduled_at.
func TestWorkflowEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := startWorkflowSetup(t)
	j := w.jobs["journal"]
	id := w.create(t, "etl", node("extract", j), node("transform_a", j, "extract"), node("transform_b", j, "extract"),
		node("load", j, "transform_a", "transform_b"))
	tr, err := w.wf.TriggerWorkflow(ctx, &carillonv1.TriggerWorkflowRequest{WorkflowId: id})
	if err != nil {
		t.Fatal(err)
	}
	wr := w.await(t, tr.WorkflowRunId, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SUCCEEDED)
	for _, key := range []string{"extract", "transform_a", "transform_b", "load"} {
		if n := w.log.count(key); n != 1 {
			t.Errorf("%s ran %d times, want once", key, n)
		}
		n := nodeRun(wr, key)
		run, err := w.c.run.GetRun(ctx, &carillonv1.GetRunRequest{Id: n.GetRunId()})
		if err != nil {
			t.Fatal(err)
		}
		if run.Run.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_WORKFLOW || !run.Run.ScheduledAt.AsTime().Equal(wr.ScheduledAt.AsTime()) ||
			run.Run.WorkflowRunId != wr.Id || run.Run.WorkflowNode != key || run.Run.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
			t.Errorf("run of %s: %v", key, run.Run)
		}
	}
	load := w.log.index("start load")
	for _, dep := range []string{"end transform_a", "end transform_b"} {
		if i := w.log.index(dep); i < 0 || i > load {
			t.Errorf("load started at %d of the journal, %q at %d: %v", load, dep, i, w.log.events)
		}
	}
	if i, e := w.log.index("end extract"), w.log.index("start transform_a"); i > e {
		t.Errorf("transform_a started before extract ended: %v", w.log.events)
	}
}

// TestWorkflowContext: extract publishes rows=42 (Job.SetOutput);
// transform gets it in Job.Inputs and publishes what it made of it; load,
// after both, gets the merged outputs of its dependencies. GetRun shows
// each run's outputs and inputs.
func TestWorkflowContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := startWorkflowSetup(t)
	j := w.jobs["context"]
	id := w.create(t, "context", node("extract", j), node("transform", j, "extract"), node("load", j, "extract", "transform"))
	tr, err := w.wf.TriggerWorkflow(ctx, &carillonv1.TriggerWorkflowRequest{WorkflowId: id})
	if err != nil {
		t.Fatal(err)
	}
	wr := w.await(t, tr.WorkflowRunId, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SUCCEEDED)
	for key, want := range map[string]map[string]string{
		"extract":   nil,
		"transform": {"rows": "42"},
		"load":      {"rows": "42", "transform_rows": "84"},
	} {
		got, _ := w.inputs.Load(key)
		if got, _ := got.(map[string]string); !maps.Equal(got, want) {
			t.Errorf("%s's handler got inputs %v, want %v", key, got, want)
		}
		run, err := w.c.run.GetRun(ctx, &carillonv1.GetRunRequest{Id: nodeRun(wr, key).GetRunId()})
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(run.Run.Inputs, want) {
			t.Errorf("GetRun of %s: inputs %v, want %v", key, run.Run.Inputs, want)
		}
		if key == "extract" && !maps.Equal(run.Run.Outputs, map[string]string{"rows": "42"}) {
			t.Errorf("GetRun of extract: outputs %v, want rows=42", run.Run.Outputs)
		}
	}
}

// TestWorkflowFailureAndRetry: a failing branch skips its dependents
// (upstream failed) while the other branch goes on; the workflow run ends
// FAILED; RetryWorkflowRun reruns only the failed node and what it
// skipped, and the workflow run then succeeds.
func TestWorkflowFailureAndRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := startWorkflowSetup(t)
	f := w.jobs["flaky"]
	id := w.create(t, "etl", node("extract", f), node("transform_a", f, "extract"), node("transform_b", f, "extract"),
		node("after_a", f, "transform_a"), node("load", f, "transform_a", "transform_b"))
	w.failing.Store("transform_b")
	tr, err := w.wf.TriggerWorkflow(ctx, &carillonv1.TriggerWorkflowRequest{WorkflowId: id})
	if err != nil {
		t.Fatal(err)
	}
	wr := w.await(t, tr.WorkflowRunId, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_FAILED)
	want := map[string]carillonv1.RunStatus{
		"extract": carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "transform_a": carillonv1.RunStatus_RUN_STATUS_SUCCEEDED,
		"transform_b": carillonv1.RunStatus_RUN_STATUS_FAILED, "after_a": carillonv1.RunStatus_RUN_STATUS_SUCCEEDED,
		"load": carillonv1.RunStatus_RUN_STATUS_SKIPPED,
	}
	for key, st := range want {
		if n := nodeRun(wr, key); n.GetStatus() != st {
			t.Errorf("node %s is %s (%s), want %s", key, n.GetStatus(), n.GetMessage(), st)
		}
	}
	if n := nodeRun(wr, "load"); n.GetMessage() != "upstream failed: transform_b" || n.GetRunId() != 0 {
		t.Errorf("load: run %d, message %q; want no run, upstream failed: transform_b", n.GetRunId(), n.GetMessage())
	}

	w.failing.Store("")
	if _, err := w.wf.RetryWorkflowRun(ctx, &carillonv1.RetryWorkflowRunRequest{WorkflowRunId: tr.WorkflowRunId}); err != nil {
		t.Fatal(err)
	}
	wr = w.await(t, tr.WorkflowRunId, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SUCCEEDED)
	for key, runs := range map[string]int{"extract": 1, "transform_a": 1, "after_a": 1, "transform_b": 2, "load": 1} {
		if n := w.log.count(key); n != runs {
			t.Errorf("%s ran %d times, want %d", key, n, runs)
		}
	}
	if wr.Attempt != 1 || nodeRun(wr, "transform_b").GetAttempt() != 1 || nodeRun(wr, "extract").GetAttempt() != 0 {
		t.Errorf("after the retry: workflow run attempt %d, transform_b's %d, extract's %d; want 1, 1, 0",
			wr.Attempt, nodeRun(wr, "transform_b").GetAttempt(), nodeRun(wr, "extract").GetAttempt())
	}
}

// TestWorkflowCancel: cancelling kills the running node on its executor
// and skips the rest; nothing after it runs.
func TestWorkflowCancel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := startWorkflowSetup(t)
	id := w.create(t, "slow", node("first", w.jobs["block"]), node("second", w.jobs["journal"], "first"))
	tr, err := w.wf.TriggerWorkflow(ctx, &carillonv1.TriggerWorkflowRequest{WorkflowId: id})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.blocked:
	case <-time.After(30 * time.Second):
		t.Fatal("the first node did not start within 30 s")
	}
	res, err := w.wf.CancelWorkflowRun(ctx, &carillonv1.CancelWorkflowRunRequest{WorkflowRunId: tr.WorkflowRunId})
	if err != nil {
		t.Fatal(err)
	}
	if res.WorkflowRun.Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_CANCELLED {
		t.Fatalf("cancelled workflow run is %s", res.WorkflowRun.Status)
	}
	if n := nodeRun(res.WorkflowRun, "second"); n.GetStatus() != carillonv1.RunStatus_RUN_STATUS_SKIPPED {
		t.Errorf("second is %s, want SKIPPED", n.GetStatus())
	}
	first := nodeRun(res.WorkflowRun, "first").GetRunId()
	eventually(t, w.c.url, 30*time.Second, func() error {
		r, err := w.c.run.GetRun(ctx, &carillonv1.GetRunRequest{Id: first})
		if err != nil {
			return err
		}
		if r.Run.Status != carillonv1.RunStatus_RUN_STATUS_KILLED {
			return fmt.Errorf("first's run is %s, want KILLED", r.Run.Status)
		}
		return nil
	})
	if n := w.log.count("second"); n != 0 {
		t.Errorf("second ran %d times after the cancel", n)
	}
}

// TestWorkflowCoverEarly: a COVER_EARLY workflow triggered while its
// previous workflow run runs cancels that run, whose running node is
// killed on its executor, and starts the new one.
func TestWorkflowCoverEarly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := startWorkflowSetup(t)
	j, err := w.c.job.GetJob(ctx, &carillonv1.GetJobRequest{Id: w.jobs["block"]})
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.wf.CreateWorkflow(ctx, &carillonv1.CreateWorkflowRequest{Workflow: &carillonv1.Workflow{
		GroupId: j.Job.GroupId, Name: "cover", BlockStrategy: carillonv1.BlockStrategy_BLOCK_STRATEGY_COVER_EARLY,
		Nodes: []*carillonv1.WorkflowNode{node("slow", w.jobs["block"])},
	}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := w.wf.TriggerWorkflow(ctx, &carillonv1.TriggerWorkflowRequest{WorkflowId: res.Workflow.Id})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.blocked:
	case <-time.After(30 * time.Second):
		t.Fatal("the first workflow run's node did not start within 30 s")
	}
	second, err := w.wf.TriggerWorkflow(ctx, &carillonv1.TriggerWorkflowRequest{WorkflowId: res.Workflow.Id})
	if err != nil {
		t.Fatal(err)
	}
	covered := w.await(t, first.WorkflowRunId, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_CANCELLED)
	eventually(t, w.c.url, 30*time.Second, func() error {
		r, err := w.c.run.GetRun(ctx, &carillonv1.GetRunRequest{Id: nodeRun(covered, "slow").GetRunId()})
		if err != nil {
			return err
		}
		if r.Run.Status != carillonv1.RunStatus_RUN_STATUS_KILLED {
			return fmt.Errorf("the covered node's run is %s, want KILLED", r.Run.Status)
		}
		return nil
	})
	select {
	case <-w.blocked:
	case <-time.After(30 * time.Second):
		t.Fatal("the second workflow run's node did not start within 30 s")
	}
	close(w.release)
	w.await(t, second.WorkflowRunId, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SUCCEEDED)
}
