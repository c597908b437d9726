package server_test

import (
	"context"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// flowOf is a workflow of group with one node per job, in a chain.
func flowOf(group int64, name string, jobs ...int64) *carillonv1.Workflow {
	w := &carillonv1.Workflow{GroupId: group, Name: name}
	for i, j := range jobs {
		n := &carillonv1.WorkflowNode{Key: "n" + string(rune('0'+i)), JobId: j}
		if i > 0 {
			n.DependsOn = []string{w.Nodes[i-1].Key}
		}
		w.Nodes = append(w.Nodes, n)
	}
	return w
}

// wantCode fails the test unless err is a Connect error of code whose
// message contains msg.
func wantCode(t *testing.T, what string, err error, code connect.Code, msg string) {
	t.Helper()
	if connect.CodeOf(err) != code || !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: %v, want %s saying %q", what, err, code, msg)
	}
}

// TestWorkflowValidation: a cycle, an unknown or duplicate key and a
// missing job are invalid_argument naming the node.
func TestWorkflowValidation(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		f := newFixture(t, be)
		adm := f.as["admin"].flow
		for _, tt := range []struct {
			name  string
			nodes []*carillonv1.WorkflowNode
			want  string
		}{
			{"Cycle", []*carillonv1.WorkflowNode{{Key: "a", JobId: f.jobA, DependsOn: []string{"b"}}, {Key: "b", JobId: f.jobA, DependsOn: []string{"a"}}},
				`workflow.nodes[0].depends_on: node "a": workflow: the dependencies form a cycle: a -> b -> a`},
			{"UnknownKey", []*carillonv1.WorkflowNode{{Key: "a", JobId: f.jobA, DependsOn: []string{"nope"}}},
				`workflow.nodes[0].depends_on: node "a": no node has the key "nope"`},
			{"DuplicateKey", []*carillonv1.WorkflowNode{{Key: "a", JobId: f.jobA}, {Key: "a", JobId: f.jobA}},
				`workflow.nodes[1].key: node "a": duplicate key`},
			{"MissingJob", []*carillonv1.WorkflowNode{{Key: "a", JobId: f.jobA}, {Key: "ghost", JobId: 999}},
				`workflow.nodes[1].job_id: node "ghost": job 999 does not exist`},
			{"NoNodes", nil, "at least one node"},
		} {
			_, err := adm.CreateWorkflow(ctx, &carillonv1.CreateWorkflowRequest{Workflow: &carillonv1.Workflow{GroupId: f.groupA, Name: tt.name, Nodes: tt.nodes}})
			wantCode(t, tt.name, err, connect.CodeInvalidArgument, tt.want)
		}
	})
}

// TestWorkflowPermissions: a MEMBER writes a workflow of their group only
// when they may trigger every node's job; VIEWERs and MEMBERs of the group
// read it, other MEMBERs neither see nor list it; writes are audited.
func TestWorkflowPermissions(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		f := newFixture(t, be)
		memberA, memberB, viewer := f.as["memberA"].flow, f.as["memberB"].flow, f.as["viewer"].flow

		own, err := memberA.CreateWorkflow(ctx, &carillonv1.CreateWorkflowRequest{Workflow: flowOf(f.groupA, "own", f.jobA)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = memberA.CreateWorkflow(ctx, &carillonv1.CreateWorkflowRequest{Workflow: flowOf(f.groupA, "mixed", f.jobA, f.jobB)})
		wantCode(t, "a MEMBER's workflow with a node of another group's job", err, connect.CodePermissionDenied, `nodes[1] ("n1").job_id`)
		foreign, err := f.as["admin"].flow.CreateWorkflow(ctx, &carillonv1.CreateWorkflowRequest{Workflow: flowOf(f.groupA, "foreign", f.jobB)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = memberA.TriggerWorkflow(ctx, &carillonv1.TriggerWorkflowRequest{WorkflowId: foreign.Workflow.Id})
		wantCode(t, "a MEMBER triggers a workflow of a job they may not trigger", err, connect.CodePermissionDenied, "job_id")

		tr, err := memberA.TriggerWorkflow(ctx, &carillonv1.TriggerWorkflowRequest{WorkflowId: own.Workflow.Id})
		if err != nil {
			t.Fatal(err)
		}
		_, err = viewer.TriggerWorkflow(ctx, &carillonv1.TriggerWorkflowRequest{WorkflowId: own.Workflow.Id})
		wantCode(t, "a VIEWER triggers", err, connect.CodePermissionDenied, "VIEWER")
		if _, err := viewer.GetWorkflowRun(ctx, &carillonv1.GetWorkflowRunRequest{WorkflowRunId: tr.WorkflowRunId}); err != nil {
			t.Errorf("a VIEWER reads a workflow run: %v", err)
		}
		_, err = memberB.GetWorkflow(ctx, &carillonv1.GetWorkflowRequest{Id: own.Workflow.Id})
		wantCode(t, "another group's MEMBER reads", err, connect.CodePermissionDenied, "not one of yours")
		_, err = memberB.CancelWorkflowRun(ctx, &carillonv1.CancelWorkflowRunRequest{WorkflowRunId: tr.WorkflowRunId})
		wantCode(t, "another group's MEMBER cancels", err, connect.CodePermissionDenied, "not one of yours")
		if list, err := memberB.ListWorkflows(ctx, &carillonv1.ListWorkflowsRequest{}); err != nil || len(list.Workflows) != 0 {
			t.Errorf("another group's MEMBER lists %v, %v; want none", list.GetWorkflows(), err)
		}
		if runs, err := memberB.ListWorkflowRuns(ctx, &carillonv1.ListWorkflowRunsRequest{}); err != nil || len(runs.WorkflowRuns) != 0 {
			t.Errorf("another group's MEMBER lists runs %v, %v; want none", runs.GetWorkflowRuns(), err)
		}
		if list, err := viewer.ListWorkflows(ctx, &carillonv1.ListWorkflowsRequest{}); err != nil || len(list.Workflows) != 2 {
			t.Errorf("a VIEWER lists %d workflows, %v; want 2", len(list.GetWorkflows()), err)
		}

		secret := "token=hunter2"
		if _, err := f.as["admin"].flow.TriggerWorkflow(ctx, &carillonv1.TriggerWorkflowRequest{WorkflowId: foreign.Workflow.Id, Param: &secret}); err != nil {
			t.Fatal(err)
		}
		res, err := f.as["admin"].user.ListAuditLog(ctx, &carillonv1.ListAuditLogRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Entries) == 0 || res.Entries[0].Action != "WorkflowService.TriggerWorkflow" || strings.Contains(res.Entries[0].Detail, "hunter2") {
			t.Errorf("newest audit entry %v, want the TriggerWorkflow without its param", res.Entries[:min(1, len(res.Entries))])
		}
	})
}
