package store_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// diamond stores a job with retries and the workflow extract ->
// (transform_a, transform_b) -> load, plus an independent node, other.
func diamond(t *testing.T, s *store.Store, b *bundle, retries int32) (store.Workflow, store.Job) {
	t.Helper()
	ctx := context.Background()
	j := newJob(b.group.ID, time.Time{})
	j.ScheduleType, j.RetryCount = carillonv1.ScheduleType_SCHEDULE_TYPE_NONE, retries
	j, err := s.Jobs.Create(ctx, j, t0)
	if err != nil {
		t.Fatal(err)
	}
	nodeParam := "node's param"
	w, err := s.Workflows.Create(ctx, store.Workflow{GroupID: b.group.ID, Name: "etl", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE,
		Nodes: []store.WorkflowNode{
			{Key: "extract", JobID: j.ID},
			{Key: "transform_a", JobID: j.ID, DependsOn: []string{"extract"}, Param: &nodeParam},
			{Key: "transform_b", JobID: j.ID, DependsOn: []string{"extract"}},
			{Key: "load", JobID: j.ID, DependsOn: []string{"transform_a", "transform_b"}},
			{Key: "other", JobID: j.ID},
		}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	return w, j
}

// triggerDiamond stores the diamond workflow (with retries) in a new
// store of be and triggers it by hand at t0.
func triggerDiamond(t *testing.T, be dbtest.Backend, retries int32) (*store.Store, store.WorkflowChange) {
	t.Helper()
	s, b := setup(t, be.DB(t))
	w, _ := diamond(t, s, b, retries)
	ch, err := s.Workflows.Trigger(context.Background(), w.ID, carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	return s, ch
}

// aJob stores a job of b's group, without a schedule.
func aJob(t *testing.T, s *store.Store, b *bundle) store.Job {
	t.Helper()
	j, err := s.Jobs.Create(context.Background(), newJob(b.group.ID, time.Time{}), t0)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// nodesOf returns the keys of runs, sorted.
func nodesOf(runs []store.Run) []string {
	var keys []string
	for _, r := range runs {
		keys = append(keys, r.WorkflowNode)
	}
	slices.Sort(keys)
	return keys
}

// settleNode claims a node's pending run and settles it with status.
func settleNode(t *testing.T, s *store.Store, r store.Run, status carillonv1.RunStatus, at time.Time) store.Settled {
	t.Helper()
	got, ok, err := claimRun(context.Background(), s, r.ID, r.TriggerType, at)
	if err != nil || !ok {
		t.Fatalf("claim run %d (%s): ok %v err %v", r.ID, r.WorkflowNode, ok, err)
	}
	return settle(t, s, got, status, at)
}

// byNode returns the run of node key among runs.
func byNode(t *testing.T, runs []store.Run, key string) store.Run {
	t.Helper()
	for _, r := range runs {
		if r.WorkflowNode == key {
			return r
		}
	}
	t.Fatalf("no run of node %s among %v", key, nodesOf(runs))
	return store.Run{}
}

func workflowRun(t *testing.T, s *store.Store, id int64) store.WorkflowRun {
	t.Helper()
	wr, err := s.Workflows.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return wr
}

func nodeStatus(wr store.WorkflowRun) map[string]carillonv1.RunStatus {
	out := map[string]carillonv1.RunStatus{}
	for _, n := range wr.Nodes {
		out[n.Key] = n.Status
	}
	return out
}

// TestWorkflowFanIn: a workflow run starts its roots; the fan-out starts
// after extract; load starts only once both transforms succeeded, in the
// transaction that settles the second; the workflow run then succeeds.
// Every node's run carries the workflow run's scheduled_at.
func TestWorkflowFanIn(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		s, ch := triggerDiamond(t, be, 0)
		if got := nodesOf(ch.FollowUps); !slices.Equal(got, []string{"extract", "other"}) {
			t.Fatalf("started %v, want the roots extract and other", got)
		}
		for _, r := range ch.FollowUps {
			if r.Status != carillonv1.RunStatus_RUN_STATUS_PENDING || r.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_WORKFLOW ||
				!r.ScheduledAt.Equal(t0) || r.WorkflowRunID != ch.WorkflowRunID {
				t.Fatalf("root run %+v: want PENDING, WORKFLOW, scheduled at %v, of workflow run %d", r, t0, ch.WorkflowRunID)
			}
		}
		other := byNode(t, ch.FollowUps, "other")
		if out := settleNode(t, s, other, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0.Add(time.Second)); len(out.FollowUps) != 0 {
			t.Fatalf("other's success started %v, want nothing", nodesOf(out.FollowUps))
		}
		out := settleNode(t, s, byNode(t, ch.FollowUps, "extract"), carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0.Add(2*time.Second))
		if got := nodesOf(out.FollowUps); !slices.Equal(got, []string{"transform_a", "transform_b"}) {
			t.Fatalf("extract's success started %v, want both transforms", got)
		}
		if a := byNode(t, out.FollowUps, "transform_a"); a.Param != "node's param" || !a.ScheduledAt.Equal(t0) {
			t.Fatalf("transform_a's run has param %q, scheduled at %v; want the node's param, %v", a.Param, a.ScheduledAt, t0)
		}
		first := settleNode(t, s, byNode(t, out.FollowUps, "transform_a"), carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0.Add(3*time.Second))
		if len(first.FollowUps) != 0 {
			t.Fatalf("one transform started %v; load must wait for both", nodesOf(first.FollowUps))
		}
		second := settleNode(t, s, byNode(t, out.FollowUps, "transform_b"), carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0.Add(4*time.Second))
		if got := nodesOf(second.FollowUps); !slices.Equal(got, []string{"load"}) {
			t.Fatalf("both transforms started %v, want load", got)
		}
		if wr := workflowRun(t, s, ch.WorkflowRunID); wr.Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING {
			t.Fatalf("workflow run is %s before load ended", wr.Status)
		}
		settleNode(t, s, second.FollowUps[0], carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0.Add(5*time.Second))
		wr := workflowRun(t, s, ch.WorkflowRunID)
		if wr.Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SUCCEEDED || !wr.FinishedAt.Equal(t0.Add(5*time.Second)) {
			t.Fatalf("workflow run %s finished at %v, want SUCCEEDED at %v", wr.Status, wr.FinishedAt, t0.Add(5*time.Second))
		}
		for _, n := range wr.Nodes {
			if n.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED || n.RunID == 0 {
				t.Errorf("node %s: %s, run %d", n.Key, n.Status, n.RunID)
			}
		}
	})
}

// TestWorkflowFailure: a node that fails after its job's retries skips
// its dependents (upstream failed) while the other branch goes on; the
// workflow run ends FAILED once nothing more runs. WorkflowStore.RetryRun then
// runs the failed node again, and what it skipped, in the same workflow
// run, and the nodes that succeeded are not run again.
func TestWorkflowFailure(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, b := setup(t, be.DB(t))
		w, _ := diamond(t, s, b, 1)
		ch, err := s.Workflows.Trigger(ctx, w.ID, carillonv1.TriggerType_TRIGGER_TYPE_API, nil, t0)
		if err != nil {
			t.Fatal(err)
		}
		settleNode(t, s, byNode(t, ch.FollowUps, "other"), carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0)
		out := settleNode(t, s, byNode(t, ch.FollowUps, "extract"), carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0)
		// transform_a fails: its job's retry comes first, as the node's run.
		retry := settleNode(t, s, byNode(t, out.FollowUps, "transform_a"), carillonv1.RunStatus_RUN_STATUS_FAILED, t0.Add(time.Second))
		if len(retry.FollowUps) != 1 || retry.FollowUps[0].TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_RETRY ||
			retry.FollowUps[0].WorkflowNode != "transform_a" {
			t.Fatalf("a failed attempt made %+v, want the job's retry of transform_a", retry.FollowUps)
		}
		if st := nodeStatus(workflowRun(t, s, ch.WorkflowRunID)); st["transform_a"] != carillonv1.RunStatus_RUN_STATUS_RUNNING || st["load"] != carillonv1.RunStatus_RUN_STATUS_PENDING {
			t.Fatalf("after a retried failure: %v, want transform_a RUNNING and load waiting", st)
		}
		settleNode(t, s, retry.FollowUps[0], carillonv1.RunStatus_RUN_STATUS_FAILED, t0.Add(2*time.Second))
		wr := workflowRun(t, s, ch.WorkflowRunID)
		if st := nodeStatus(wr); st["transform_a"] != carillonv1.RunStatus_RUN_STATUS_FAILED || st["load"] != carillonv1.RunStatus_RUN_STATUS_SKIPPED {
			t.Fatalf("after the last attempt failed: %v, want transform_a FAILED and load SKIPPED", st)
		}
		if wr.Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING {
			t.Fatalf("workflow run is %s while transform_b runs", wr.Status)
		}
		if wr.Nodes[3].Message != "upstream failed: transform_a" {
			t.Fatalf("load's message %q", wr.Nodes[3].Message)
		}
		if _, err := s.Workflows.RetryRun(ctx, ch.WorkflowRunID, t0); !errors.Is(err, store.ErrWorkflowRunState) {
			t.Fatalf("retry of a running workflow run: %v, want ErrWorkflowRunState", err)
		}
		b2 := settleNode(t, s, byNode(t, out.FollowUps, "transform_b"), carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0.Add(3*time.Second))
		if len(b2.FollowUps) != 0 {
			t.Fatalf("transform_b's success started %v", nodesOf(b2.FollowUps))
		}
		if wr := workflowRun(t, s, ch.WorkflowRunID); wr.Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_FAILED ||
			wr.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_PENDING {
			t.Fatalf("workflow run is %s, alarm %s once nothing more can run, want FAILED with its alarm PENDING", wr.Status, wr.AlarmStatus)
		}
		if len(b2.WorkflowRunsEnded) != 1 || b2.WorkflowRunsEnded[0].ID != ch.WorkflowRunID ||
			b2.WorkflowRunsEnded[0].Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_FAILED {
			t.Fatalf("settling the last node ended %+v, want the workflow run FAILED", b2.WorkflowRunsEnded)
		}
		due, err := s.Alarms.PendingWorkflows(ctx, time.Now(), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(due) != 1 || due[0].ID != ch.WorkflowRunID || len(due[0].Nodes) != 5 {
			t.Fatalf("pending workflow alarms %+v, want the failed workflow run with its 5 nodes", due)
		}
		if err := s.Alarms.RecordWorkflow(ctx, ch.WorkflowRunID, carillonv1.AlarmStatus_ALARM_STATUS_SENT, "webhook: sent"); err != nil {
			t.Fatal(err)
		}
		if due, err := s.Alarms.PendingWorkflows(ctx, time.Now(), 10); err != nil || len(due) != 0 {
			t.Fatalf("pending workflow alarms after delivery: %d, %v", len(due), err)
		}
		if wr := workflowRun(t, s, ch.WorkflowRunID); wr.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_SENT || wr.AlarmMessage != "webhook: sent" {
			t.Fatalf("recorded alarm %s %q", wr.AlarmStatus, wr.AlarmMessage)
		}

		again, err := s.Workflows.RetryRun(ctx, ch.WorkflowRunID, t0.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if got := nodesOf(again.FollowUps); !slices.Equal(got, []string{"transform_a"}) {
			t.Fatalf("retry started %v, want transform_a only", got)
		}
		wr = workflowRun(t, s, ch.WorkflowRunID)
		if wr.Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING || wr.Attempt != 1 || wr.Nodes[1].Attempt != 1 || wr.Nodes[3].Attempt != 0 {
			t.Fatalf("retried workflow run: %s attempt %d, transform_a attempt %d, load attempt %d", wr.Status, wr.Attempt, wr.Nodes[1].Attempt, wr.Nodes[3].Attempt)
		}
		out = settleNode(t, s, again.FollowUps[0], carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0.Add(2*time.Minute))
		if got := nodesOf(out.FollowUps); !slices.Equal(got, []string{"load"}) {
			t.Fatalf("the retried node's success started %v, want load", got)
		}
		settleNode(t, s, out.FollowUps[0], carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0.Add(3*time.Minute))
		if wr := workflowRun(t, s, ch.WorkflowRunID); wr.Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SUCCEEDED ||
			wr.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED {
			t.Fatalf("workflow run is %s, alarm %s after the retry, want SUCCEEDED with no alarm", wr.Status, wr.AlarmStatus)
		}
	})
}

// TestWorkflowCancel: cancelling skips the waiting nodes and the pending
// runs, returns the running runs to kill, and a result that comes for one
// afterwards starts nothing and retries nothing.
func TestWorkflowCancel(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, ch := triggerDiamond(t, be, 3)
		extract, ok, err := claimRun(ctx, s, byNode(t, ch.FollowUps, "extract").ID, carillonv1.TriggerType_TRIGGER_TYPE_WORKFLOW, t0)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		cancel, err := s.Workflows.CancelRun(ctx, ch.WorkflowRunID, t0.Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if len(cancel.Kill) != 1 || cancel.Kill[0].ID != extract.ID {
			t.Fatalf("cancel returned %+v to kill, want extract's run %d", cancel.Kill, extract.ID)
		}
		other, err := s.Runs.Get(ctx, byNode(t, ch.FollowUps, "other").ID)
		if err != nil || other.Status != carillonv1.RunStatus_RUN_STATUS_SKIPPED {
			t.Fatalf("other's pending run: %s, %v; want SKIPPED", other.Status, err)
		}
		out := settle(t, s, extract, carillonv1.RunStatus_RUN_STATUS_FAILED, t0.Add(2*time.Second))
		if len(out.FollowUps) != 0 {
			t.Fatalf("a result after the cancel made %v", out.FollowUps)
		}
		wr := workflowRun(t, s, ch.WorkflowRunID)
		st := nodeStatus(wr)
		if wr.Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_CANCELLED || st["extract"] != carillonv1.RunStatus_RUN_STATUS_KILLED ||
			st["load"] != carillonv1.RunStatus_RUN_STATUS_SKIPPED {
			t.Fatalf("cancelled workflow run: %s, nodes %v", wr.Status, st)
		}
		if _, err := s.Workflows.CancelRun(ctx, ch.WorkflowRunID, t0); !errors.Is(err, store.ErrWorkflowRunState) {
			t.Fatalf("second cancel: %v, want ErrWorkflowRunState", err)
		}
	})
}

// TestWorkflowBlockStrategy: a workflow run made while an earlier one is
// active waits (SERIAL) and starts in the transaction that ends the
// earlier one, or is SKIPPED (DISCARD_LATER), or cancels the earlier one
// (COVER_EARLY).
func TestWorkflowBlockStrategy(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, b := setup(t, be.DB(t))
		j := aJob(t, s, b)
		for _, tt := range []struct {
			strategy carillonv1.BlockStrategy
			first    carillonv1.WorkflowRunStatus // the earlier one's, after the second is made
			second   carillonv1.WorkflowRunStatus
		}{
			{carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_PENDING},
			{carillonv1.BlockStrategy_BLOCK_STRATEGY_DISCARD_LATER, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SKIPPED},
			{carillonv1.BlockStrategy_BLOCK_STRATEGY_COVER_EARLY, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_CANCELLED, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING},
		} {
			w, err := s.Workflows.Create(ctx, store.Workflow{GroupID: b.group.ID, Name: tt.strategy.String(), BlockStrategy: tt.strategy,
				ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE, Nodes: []store.WorkflowNode{{Key: "only", JobID: j.ID}}}, t0)
			if err != nil {
				t.Fatal(err)
			}
			first, err := s.Workflows.Trigger(ctx, w.ID, carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, nil, t0)
			if err != nil {
				t.Fatal(err)
			}
			second, err := s.Workflows.Trigger(ctx, w.ID, carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, nil, t0.Add(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if got := workflowRun(t, s, first.WorkflowRunID).Status; got != tt.first {
				t.Errorf("%s: the first workflow run is %s, want %s", tt.strategy, got, tt.first)
			}
			if got := workflowRun(t, s, second.WorkflowRunID).Status; got != tt.second {
				t.Errorf("%s: the second workflow run is %s, want %s", tt.strategy, got, tt.second)
			}
			if tt.strategy != carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL {
				continue
			}
			if len(second.FollowUps) != 0 {
				t.Fatalf("SERIAL: the waiting workflow run started %v", nodesOf(second.FollowUps))
			}
			out := settleNode(t, s, first.FollowUps[0], carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0.Add(2*time.Second))
			if len(out.FollowUps) != 1 || out.FollowUps[0].WorkflowRunID != second.WorkflowRunID {
				t.Fatalf("SERIAL: ending the first started %+v, want the second's root", out.FollowUps)
			}
			if got := workflowRun(t, s, second.WorkflowRunID).Status; got != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING {
				t.Fatalf("SERIAL: the second workflow run is %s once the first ended, want RUNNING", got)
			}
		}
	})
}

// TestWorkflowDefinitions: a workflow keeps its nodes in order through an
// update; a name is unique in its group; a job that is a node cannot be
// deleted; a missing job is ErrNotFound naming the node.
func TestWorkflowDefinitions(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, b := setup(t, be.DB(t))
		w, j := diamond(t, s, b, 0)
		got, err := s.Workflows.Get(ctx, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Nodes) != 5 || got.Nodes[3].Key != "load" || !slices.Equal(got.Nodes[3].DependsOn, []string{"transform_a", "transform_b"}) ||
			got.Nodes[1].Param == nil || got.Nodes[2].Param != nil {
			t.Fatalf("stored nodes %+v", got.Nodes)
		}
		if _, err := s.Workflows.Create(ctx, store.Workflow{GroupID: b.group.ID, Name: "etl", Nodes: got.Nodes}, t0); !errors.Is(err, store.ErrAlreadyExists) {
			t.Fatalf("a second workflow named etl: %v, want ErrAlreadyExists", err)
		}
		if err := s.Jobs.Delete(ctx, j.ID); !errors.Is(err, store.ErrInUse) {
			t.Fatalf("delete a node's job: %v, want ErrInUse", err)
		}
		g2, err := s.Groups.Create(ctx, store.Group{AppName: "other", Title: "Other", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Workflows.Create(ctx, store.Workflow{GroupID: g2.ID, Name: "elsewhere", Nodes: got.Nodes[:1]}, t0); err != nil {
			t.Fatal(err)
		}
		if err := s.Groups.Delete(ctx, g2.ID); !errors.Is(err, store.ErrInUse) || !strings.Contains(err.Error(), "1 workflows") {
			t.Fatalf("delete a workflow's group: %v, want ErrInUse naming its workflows", err)
		}
		got.Nodes = got.Nodes[:1]
		got.Description = "changed"
		if _, err := s.Workflows.Update(ctx, got, false, t0.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if again, err := s.Workflows.Get(ctx, w.ID); err != nil || len(again.Nodes) != 1 || again.Description != "changed" {
			t.Fatalf("updated workflow %+v, %v", again, err)
		}
		got.Nodes = append(got.Nodes, store.WorkflowNode{Key: "ghost", JobID: j.ID + 100})
		if _, err := s.Workflows.Update(ctx, got, false, t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a node of a missing job: %v, want ErrNotFound", err)
		}
		if err := s.Workflows.Delete(ctx, w.ID); err != nil {
			t.Fatal(err)
		}
		others, err := s.Workflows.List(ctx, store.WorkflowFilter{GroupID: g2.ID})
		if err != nil || len(others) != 1 {
			t.Fatalf("workflows of the other group: %v, %v", others, err)
		}
		if err := s.Workflows.Delete(ctx, others[0].ID); err != nil {
			t.Fatal(err)
		}
		if err := s.Jobs.Delete(ctx, j.ID); err != nil {
			t.Fatalf("delete the job once no workflow has it: %v", err)
		}
	})
}

// TestWorkflowShardedNode: a node whose run became a broadcast of two
// shards succeeds once both shards have; only then do its dependents
// start, with the outputs of both as inputs (in shard order).
func TestWorkflowShardedNode(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, b := setup(t, be.DB(t))
		j := aJob(t, s, b)
		w, err := s.Workflows.Create(ctx, store.Workflow{GroupID: b.group.ID, Name: "sharded", Nodes: []store.WorkflowNode{
			{Key: "broadcast", JobID: j.ID}, {Key: "after", JobID: j.ID, DependsOn: []string{"broadcast"}}}}, t0)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := s.Workflows.Trigger(ctx, w.ID, carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, nil, t0)
		if err != nil {
			t.Fatal(err)
		}
		// As the router does for a SHARDING_BROADCAST fire of two executors.
		shard0, ok, err := claimRun(ctx, s, ch.FollowUps[0].ID, carillonv1.TriggerType_TRIGGER_TYPE_WORKFLOW, t0)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		if err := s.Runs.SetShardTotals(ctx, map[int64]int32{shard0.ID: 2}); err != nil {
			t.Fatal(err)
		}
		shard0.ShardTotal = 2
		extra := shard0
		extra.ID, extra.ShardIndex = 0, 1
		shards, err := s.Runs.Insert(ctx, []store.Run{extra})
		if err != nil {
			t.Fatal(err)
		}
		// Shard 1 ends first; its outputs still win over shard 0's (shard
		// order) in the inputs of the node after.
		if out := settleWith(t, s, shards[0], carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, map[string]string{"n": "1"}, t0.Add(time.Second)); len(out.FollowUps) != 0 {
			t.Fatalf("one shard of two started %v", nodesOf(out.FollowUps))
		}
		out := settleWith(t, s, shard0, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, map[string]string{"n": "0", "s0": "x"}, t0.Add(2*time.Second))
		if got := nodesOf(out.FollowUps); !slices.Equal(got, []string{"after"}) {
			t.Fatalf("both shards started %v, want after", got)
		}
		if got, want := out.FollowUps[0].Inputs, map[string]string{"n": "1", "s0": "x"}; !maps.Equal(got, want) {
			t.Errorf("after's inputs %v, want %v (the shards' outputs, merged in shard order)", got, want)
		}
	})
}

// TestWorkflowFanInConcurrent settles a node's last two dependencies at
// once, in two transactions: the node starts exactly once (over
// PostgreSQL, two admins' settles would otherwise each miss the other's).
func TestWorkflowFanInConcurrent(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, b := setup(t, be.DB(t))
		w, j := diamond(t, s, b, 0)
		for range 10 {
			ch, err := s.Workflows.Trigger(ctx, w.ID, carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, nil, t0)
			if err != nil {
				t.Fatal(err)
			}
			settleNode(t, s, byNode(t, ch.FollowUps, "other"), carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0)
			out := settleNode(t, s, byNode(t, ch.FollowUps, "extract"), carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0)
			var running []store.Run
			for _, key := range []string{"transform_a", "transform_b"} {
				r, ok, err := claimRun(ctx, s, byNode(t, out.FollowUps, key).ID, carillonv1.TriggerType_TRIGGER_TYPE_WORKFLOW, t0)
				if err != nil || !ok {
					t.Fatal(ok, err)
				}
				running = append(running, r)
			}
			errs := make(chan error, len(running))
			for _, r := range running {
				go func() {
					_, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: t0}})
					errs <- err
				}()
			}
			for range running {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			runs, err := s.Runs.List(ctx, store.RunFilter{JobID: j.ID, Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			var loads []store.Run
			for _, r := range runs {
				if r.WorkflowRunID == ch.WorkflowRunID && r.WorkflowNode == "load" {
					loads = append(loads, r)
				}
			}
			if len(loads) != 1 {
				t.Fatalf("workflow run %d: load has %d runs, want 1", ch.WorkflowRunID, len(loads))
			}
			// Ends the workflow run, so that the next one starts (SERIAL).
			settleNode(t, s, loads[0], carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0)
			if wr := workflowRun(t, s, ch.WorkflowRunID); wr.Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SUCCEEDED {
				t.Fatalf("workflow run %d is %s, want SUCCEEDED", wr.ID, wr.Status)
			}
		}
	})
}

// TestWorkflowSerialStartsOnItsInstant: a workflow run claimed ahead of
// its instant while the one before it still runs waits (SERIAL), and when
// that one ends before the instant, it starts on its instant: its root
// nodes' runs are due then, not at the end of the one before (they once
// ran up to a second early).
func TestWorkflowSerialStartsOnItsInstant(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, b := setup(t, be.DB(t))
		j := aJob(t, s, b)
		first, second := t0.Add(time.Minute), t0.Add(time.Minute+time.Second)
		w, err := s.Workflows.Create(ctx, store.Workflow{GroupID: b.group.ID, Name: "every second", Enabled: true, NextFireAt: first,
			ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "* * * * * ?",
			BlockStrategy: carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL,
			Nodes:         []store.WorkflowNode{{Key: "only", JobID: j.ID}}}, t0)
		if err != nil {
			t.Fatal(err)
		}
		claim := func(at, now time.Time) store.WorkflowChange {
			t.Helper()
			ch, err := s.Workflows.ClaimFires(ctx, []store.WorkflowClaim{{WorkflowID: w.ID, Due: at, Next: at.Add(time.Second),
				Fires: []store.WorkflowFire{{At: at, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE}}}}, now)
			if err != nil {
				t.Fatal(err)
			}
			return ch
		}
		ch := claim(first, first.Add(-time.Second))
		if len(ch.FollowUps) != 1 {
			t.Fatalf("the first claim started %d runs, want 1", len(ch.FollowUps))
		}
		if waiting := claim(second, first.Add(50*time.Millisecond)); len(waiting.FollowUps) != 0 {
			t.Fatalf("the second instant, claimed while the first runs, started %+v; want it waiting (SERIAL)", waiting.FollowUps)
		}
		end := first.Add(100 * time.Millisecond) // before the second instant
		out := settleNode(t, s, ch.FollowUps[0], carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, end)
		if len(out.FollowUps) != 1 || !out.FollowUps[0].DueAt.Equal(second) || !out.FollowUps[0].ScheduledAt.Equal(second) {
			t.Fatalf("the first workflow run's end at %v started %+v; want the second's root run due and scheduled at %v", end, out.FollowUps, second)
		}
	})
}

// TestWorkflowFixDelay: a FIX_DELAY workflow's claimed instant makes its
// workflow run and leaves no next instant; the workflow run's end sets it
// to the end plus the interval, in the transaction that ends it.
func TestWorkflowFixDelay(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, b := setup(t, be.DB(t))
		j := aJob(t, s, b)
		due := t0.Add(time.Minute)
		w, err := s.Workflows.Create(ctx, store.Workflow{GroupID: b.group.ID, Name: "delay", Enabled: true, NextFireAt: due,
			ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY, IntervalSeconds: 30,
			Nodes: []store.WorkflowNode{{Key: "only", JobID: j.ID}}}, t0)
		if err != nil {
			t.Fatal(err)
		}
		claim := store.WorkflowClaim{WorkflowID: w.ID, Due: due,
			Fires: []store.WorkflowFire{{At: due, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE}}}
		ch, err := s.Workflows.ClaimFires(ctx, []store.WorkflowClaim{claim}, due.Add(-time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if len(ch.FollowUps) != 1 || !ch.FollowUps[0].DueAt.Equal(due) || !ch.FollowUps[0].ScheduledAt.Equal(due) {
			t.Fatalf("claim started %+v, want the root's run due and scheduled at %v", ch.FollowUps, due)
		}
		if again, err := s.Workflows.ClaimFires(ctx, []store.WorkflowClaim{claim}, due); err != nil || len(again.FollowUps) != 0 {
			t.Fatalf("the same claim again: %+v, %v; want nothing (claimed once)", again.FollowUps, err)
		}
		if got, err := s.Workflows.Get(ctx, w.ID); err != nil || !got.NextFireAt.IsZero() || !got.LastFireAt.Equal(due) {
			t.Fatalf("while its run runs: next %v, last %v, %v; want none, %v", got.NextFireAt, got.LastFireAt, err, due)
		}
		end := due.Add(5 * time.Second)
		if out := settleNode(t, s, ch.FollowUps[0], carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, end); !out.Rescheduled {
			t.Fatal("the workflow run's end did not reschedule the workflow")
		}
		if got, err := s.Workflows.Get(ctx, w.ID); err != nil || !got.NextFireAt.Equal(end.Add(30*time.Second)) {
			t.Fatalf("after its run: next %v, %v; want %v", got.NextFireAt, err, end.Add(30*time.Second))
		}
	})
}

// TestWorkflowStoredWhole: every field of a workflow is stored by Create
// and Update and read back by Get as List reads it; Update keeps the
// enabled state and the times of creation and last fire. Start and Stop
// switch the schedule, and name a missing workflow ErrNotFound, as Delete
// does; deleting a job names the workflows that have it as a node. The
// statements are sqlc's (queries/workflow.sql), one text over both
// databases.
func TestWorkflowStoredWhole(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, b := setup(t, be.DB(t))
		j, k := aJob(t, s, b), aJob(t, s, b)
		param := "node's param"
		w := store.Workflow{GroupID: b.group.ID, Name: "whole", Description: "all of it",
			ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, Cron: "0 * * * * ?", IntervalSeconds: 7, TimeZone: "Europe/Paris",
			MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW, BlockStrategy: carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL,
			Enabled: true, LastFireAt: t0.Add(-time.Minute), NextFireAt: t0.Add(time.Minute),
			Nodes:       []store.WorkflowNode{{Key: "a", JobID: j.ID, Param: &param}, {Key: "b", JobID: k.ID, DependsOn: []string{"a"}}},
			AlarmEmails: []string{"ops@example.com", "dev@example.com"}, AlarmWebhookURL: "https://hooks.example.com/w"}
		created, err := s.Workflows.Create(ctx, w, t0)
		if err != nil {
			t.Fatal(err)
		}
		want := w
		want.ID, want.CreatedAt, want.UpdatedAt = created.ID, t0, t0
		if diff := cmp.Diff(want, created); diff != "" {
			t.Errorf("the workflow as created (-want +got):\n%s", diff)
		}
		check := func(what string, want store.Workflow) {
			t.Helper()
			got, err := s.Workflows.Get(ctx, want.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s, as Get reads it (-want +got):\n%s", what, diff)
			}
			listed, err := s.Workflows.List(ctx, store.WorkflowFilter{ID: want.ID})
			if err != nil || len(listed) != 1 {
				t.Fatalf("%s, listed: %v, %v", what, listed, err)
			}
			if diff := cmp.Diff(listed[0], got); diff != "" {
				t.Errorf("%s: Get and List differ (-List +Get):\n%s", what, diff)
			}
		}
		check("the created workflow", want)

		g2, err := s.Groups.Create(ctx, store.Group{AppName: "second", Title: "Second", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, t0)
		if err != nil {
			t.Fatal(err)
		}
		up := store.Workflow{ID: created.ID, GroupID: g2.ID, Name: "whole again", Description: "changed",
			ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "30 * * * * ?", IntervalSeconds: 9, TimeZone: "UTC",
			MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING, BlockStrategy: carillonv1.BlockStrategy_BLOCK_STRATEGY_COVER_EARLY,
			NextFireAt:  t0.Add(2 * time.Minute),
			Nodes:       []store.WorkflowNode{{Key: "c", JobID: k.ID}, {Key: "d", JobID: j.ID, DependsOn: []string{"c"}, Param: &param}},
			AlarmEmails: []string{"new@example.com"}, AlarmWebhookURL: "https://hooks.example.com/w2"}
		updated, err := s.Workflows.Update(ctx, up, true, t0.Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		want = up
		want.Enabled, want.LastFireAt, want.CreatedAt, want.UpdatedAt = true, w.LastFireAt, t0, t0.Add(time.Second)
		if diff := cmp.Diff(want, updated); diff != "" {
			t.Errorf("the workflow as updated (-want +got):\n%s", diff)
		}
		check("the updated workflow", want)

		stopped, err := s.Workflows.Stop(ctx, created.ID, t0.Add(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if stopped.Enabled || !stopped.NextFireAt.IsZero() || !stopped.UpdatedAt.Equal(t0.Add(2*time.Second)) {
			t.Errorf("stopped: enabled %v, next %v, updated %v", stopped.Enabled, stopped.NextFireAt, stopped.UpdatedAt)
		}
		started, err := s.Workflows.Start(ctx, created.ID, t0.Add(time.Hour), t0.Add(3*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if !started.Enabled || !started.NextFireAt.Equal(t0.Add(time.Hour)) || !started.UpdatedAt.Equal(t0.Add(3*time.Second)) {
			t.Errorf("started: enabled %v, next %v, updated %v", started.Enabled, started.NextFireAt, started.UpdatedAt)
		}
		missing := created.ID + 100
		if _, err := s.Workflows.Start(ctx, missing, t0, t0); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("start a missing workflow: %v, want ErrNotFound", err)
		}
		if _, err := s.Workflows.Stop(ctx, missing, t0); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("stop a missing workflow: %v, want ErrNotFound", err)
		}
		if _, err := s.Workflows.Get(ctx, missing); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("get a missing workflow: %v, want ErrNotFound", err)
		}

		other, err := s.Workflows.Create(ctx, store.Workflow{GroupID: b.group.ID, Name: "other", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE,
			Nodes: []store.WorkflowNode{{Key: "only", JobID: j.ID}}}, t0)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Jobs.Delete(ctx, j.ID)
		if wantMsg := fmt.Sprintf(`workflow %d ("whole again"), workflow %d ("other")`, created.ID, other.ID); !errors.Is(err, store.ErrInUse) ||
			!strings.Contains(err.Error(), wantMsg) {
			t.Errorf("delete a job two workflows have: %v, want ErrInUse naming %s", err, wantMsg)
		}
		if err := s.Workflows.Delete(ctx, created.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.Workflows.Delete(ctx, created.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete it again: %v, want ErrNotFound", err)
		}
		if _, err := s.Workflows.Get(ctx, created.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("get a deleted workflow: %v, want ErrNotFound", err)
		}
	})
}

// TestWorkflowRunStoredWhole: a workflow run and its nodes are stored
// when it is made and read back by Run (its row as Runs reads it); a
// node's run is its job's retry once there is one; a cancel ends the
// workflow run and starts the oldest one waiting behind it (SERIAL); a
// retry runs it again keeping its first start; DeleteRuns deletes the
// ended ones, oldest first, never an active one. The statements are
// sqlc's (queries/workflowrun.sql).
func TestWorkflowRunStoredWhole(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, b := setup(t, be.DB(t))
		w, j := diamond(t, s, b, 1)
		param := "the run's param"
		ch, err := s.Workflows.Trigger(ctx, w.ID, carillonv1.TriggerType_TRIGGER_TYPE_API, &param, t0)
		if err != nil {
			t.Fatal(err)
		}
		got := workflowRun(t, s, ch.WorkflowRunID)
		want := store.WorkflowRun{ID: ch.WorkflowRunID, WorkflowID: w.ID, Status: carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING,
			ScheduledAt: t0, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_API, Param: &param, CreatedAt: t0, StartedAt: t0}
		if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(store.WorkflowRun{}, "Nodes")); diff != "" {
			t.Errorf("the workflow run as made (-want +got):\n%s", diff)
		}
		listed, err := s.Workflows.Runs(ctx, store.WorkflowRunFilter{WorkflowID: w.ID})
		if err != nil || len(listed) != 1 {
			t.Fatalf("workflow runs: %v, %v", listed, err)
		}
		if diff := cmp.Diff(listed[0], got, cmpopts.IgnoreFields(store.WorkflowRun{}, "Nodes")); diff != "" {
			t.Errorf("Run and Runs differ (-Runs +Run):\n%s", diff)
		}
		extract := byNode(t, ch.FollowUps, "extract")
		wantNodes := make([]store.WorkflowNodeRun, len(w.Nodes))
		for i, n := range w.Nodes {
			wantNodes[i] = store.WorkflowNodeRun{WorkflowNode: n, Status: carillonv1.RunStatus_RUN_STATUS_PENDING}
		}
		wantNodes[0].Status, wantNodes[0].RunID, wantNodes[0].FirstRunID, wantNodes[0].StartedAt = carillonv1.RunStatus_RUN_STATUS_RUNNING, extract.ID, extract.ID, t0
		other := byNode(t, ch.FollowUps, "other")
		wantNodes[4].Status, wantNodes[4].RunID, wantNodes[4].FirstRunID, wantNodes[4].StartedAt = carillonv1.RunStatus_RUN_STATUS_RUNNING, other.ID, other.ID, t0
		if diff := cmp.Diff(wantNodes, got.Nodes); diff != "" {
			t.Errorf("the workflow run's nodes (-want +got):\n%s", diff)
		}

		// extract fails, and its job's retry becomes the node's run; then
		// that fails too, and the node ends with it.
		retried := settleNode(t, s, extract, carillonv1.RunStatus_RUN_STATUS_FAILED, t0.Add(10*time.Second))
		if len(retried.FollowUps) != 1 {
			t.Fatalf("extract's failure made %+v, want its job's retry", retried.FollowUps)
		}
		retry := retried.FollowUps[0]
		n := workflowRun(t, s, ch.WorkflowRunID).Nodes[0]
		if n.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING || n.RunID != retry.ID || n.FirstRunID != extract.ID {
			t.Errorf("the retried node: %+v, want RUNNING, run %d, first run %d", n, retry.ID, extract.ID)
		}
		failed := t0.Add(30 * time.Second)
		settleNode(t, s, retry, carillonv1.RunStatus_RUN_STATUS_FAILED, failed)
		n = workflowRun(t, s, ch.WorkflowRunID).Nodes[0]
		if n.Status != carillonv1.RunStatus_RUN_STATUS_FAILED || n.RunID != retry.ID || n.FirstRunID != extract.ID ||
			!n.FinishedAt.Equal(failed) || !n.StartedAt.Equal(t0) {
			t.Errorf("the failed node: %+v, want FAILED, run %d, first run %d, started %v, finished %v", n, retry.ID, extract.ID, t0, failed)
		}

		if _, err := s.Workflows.CancelRun(ctx, ch.WorkflowRunID, t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		got = workflowRun(t, s, ch.WorkflowRunID)
		want.Status, want.Message, want.FinishedAt = carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_CANCELLED, "cancelled by CancelWorkflowRun", t0.Add(time.Minute)
		if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(store.WorkflowRun{}, "Nodes")); diff != "" {
			t.Errorf("the cancelled workflow run (-want +got):\n%s", diff)
		}
		if _, err := s.Workflows.RetryRun(ctx, ch.WorkflowRunID, t0.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		got = workflowRun(t, s, ch.WorkflowRunID)
		if got.Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING || got.Message != "" || got.Attempt != 1 ||
			!got.FinishedAt.IsZero() || !got.StartedAt.Equal(t0) {
			t.Errorf("retried: %+v, want RUNNING, attempt 1, started at %v still, not finished", got, t0)
		}
		if n := got.Nodes[0]; n.Attempt != 1 || n.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING || !n.StartedAt.Equal(t0.Add(2*time.Minute)) {
			t.Errorf("the retried node: %+v, want attempt 1, RUNNING since %v", n, t0.Add(2*time.Minute))
		}

		// Three workflow runs of a SERIAL workflow: the two made while the
		// first runs wait, and each cancel starts the oldest one waiting.
		// They end an hour apart; a fourth stays active.
		w2, err := s.Workflows.Create(ctx, store.Workflow{GroupID: b.group.ID, Name: "ended", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE,
			BlockStrategy: carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL, Nodes: []store.WorkflowNode{{Key: "only", JobID: j.ID}}}, t0)
		if err != nil {
			t.Fatal(err)
		}
		var ended []int64
		for range 3 {
			ch, err := s.Workflows.Trigger(ctx, w2.ID, carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, nil, t0)
			if err != nil {
				t.Fatal(err)
			}
			ended = append(ended, ch.WorkflowRunID)
		}
		for i, id := range ended {
			for k, other := range ended {
				wr := workflowRun(t, s, other)
				if wantSt := activeStatus(k, i); wr.Status != wantSt {
					t.Fatalf("before cancelling workflow run %d: workflow run %d is %s, want %s", id, other, wr.Status, wantSt)
				}
				if k == i && i > 0 && (wr.Message != "" || !wr.StartedAt.Equal(t0.Add(time.Duration(i)*time.Hour))) {
					t.Errorf("workflow run %d, started by the cancel before it: message %q, started %v; want none, %v",
						other, wr.Message, wr.StartedAt, t0.Add(time.Duration(i)*time.Hour))
				}
			}
			if _, err := s.Workflows.CancelRun(ctx, id, t0.Add(time.Duration(i+1)*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		active, err := s.Workflows.Trigger(ctx, w2.ID, carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, nil, t0)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			before time.Time
			limit  int
			want   int64
			gone   []int64
		}{
			{t0.Add(150 * time.Minute), 1, 1, ended[:1]},
			{t0.Add(150 * time.Minute), 10, 1, ended[:2]},
			{t0.Add(150 * time.Minute), 10, 0, ended[:2]},
			{t0.Add(24 * time.Hour), 10, 1, ended},
		} {
			n, err := s.Workflows.DeleteRuns(ctx, tt.before, tt.limit)
			if err != nil || n != tt.want {
				t.Fatalf("delete workflow runs ended before %v, up to %d: %d, %v; want %d", tt.before, tt.limit, n, err, tt.want)
			}
			for _, id := range ended {
				_, err := s.Workflows.Run(ctx, id)
				if gone := slices.Contains(tt.gone, id); gone != errors.Is(err, store.ErrNotFound) {
					t.Errorf("after deleting those ended before %v: workflow run %d: %v (deleted: %v)", tt.before, id, err, gone)
				}
			}
		}
		for _, id := range []int64{ch.WorkflowRunID, active.WorkflowRunID} {
			if _, err := s.Workflows.Run(ctx, id); err != nil {
				t.Errorf("active workflow run %d: %v, want it kept", id, err)
			}
		}
	})
}

// activeStatus is the status of the kth of SERIAL workflow runs made one
// after the other while the first i of them were cancelled in order.
func activeStatus(k, i int) carillonv1.WorkflowRunStatus {
	switch {
	case k < i:
		return carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_CANCELLED
	case k == i:
		return carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING
	}
	return carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_PENDING
}

// TestWorkflowSkippedFire: a claim's fire that records missed instants
// (DO_NOTHING) makes a SKIPPED workflow run of the instant, ended when
// made, and starts nothing.
func TestWorkflowSkippedFire(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, b := setup(t, be.DB(t))
		j := aJob(t, s, b)
		due := t0.Add(time.Minute)
		w, err := s.Workflows.Create(ctx, store.Workflow{GroupID: b.group.ID, Name: "missed", Enabled: true, NextFireAt: due,
			ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 60,
			MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING,
			Nodes:           []store.WorkflowNode{{Key: "only", JobID: j.ID}}}, t0)
		if err != nil {
			t.Fatal(err)
		}
		now := due.Add(time.Hour)
		ch, err := s.Workflows.ClaimFires(ctx, []store.WorkflowClaim{{WorkflowID: w.ID, Due: due, Next: now.Add(time.Minute),
			Fires: []store.WorkflowFire{{At: due, Skipped: "missed 60 instants"}}}}, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(ch.FollowUps) != 0 || len(ch.Ended) != 1 || ch.Ended[0].Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SKIPPED {
			t.Fatalf("the claim started %d runs and ended %+v, want nothing started and one SKIPPED", len(ch.FollowUps), ch.Ended)
		}
		runs, err := s.Workflows.Runs(ctx, store.WorkflowRunFilter{WorkflowID: w.ID})
		if err != nil || len(runs) != 1 {
			t.Fatalf("workflow runs: %v, %v", runs, err)
		}
		want := store.WorkflowRun{ID: runs[0].ID, WorkflowID: w.ID, Status: carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SKIPPED,
			ScheduledAt: due, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Message: "missed 60 instants", CreatedAt: now, FinishedAt: now}
		if diff := cmp.Diff(want, runs[0]); diff != "" {
			t.Errorf("the skipped workflow run (-want +got):\n%s", diff)
		}
	})
}
