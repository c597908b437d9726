package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/carillonhq/carillon/admin/client"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// TestTriggerJobRunAt: TriggerJob with run_at stores one PENDING run due
// then, with that instant as its scheduled time and the param override;
// KillRun cancels it before it starts (KILLED, once: a second KillRun is
// refused), but not a workflow node's pending run; run_at in the past, more than 366 days ahead or with addresses
// is refused naming run_at, and creates no run.
func TestTriggerJobRunAt(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "")
		now := b.clock.Now()
		job := runningRuns(t, b.store, now, "http://unused:1")().JobID
		jobs := carillonv1connect.NewJobServiceClient(http.DefaultClient, b.url, client.WithToken(b.admin))
		runs := carillonv1connect.NewRunServiceClient(http.DefaultClient, b.url, client.WithToken(b.admin))

		at := now.Add(90 * time.Minute)
		res, err := jobs.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: job, RunAt: timestamppb.New(at), Param: new("later")})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.RunIds) != 1 {
			t.Fatalf("run ids %v, want one", res.RunIds)
		}
		got, err := runs.GetRun(ctx, &carillonv1.GetRunRequest{Id: res.RunIds[0]})
		if err != nil {
			t.Fatal(err)
		}
		r := got.Run
		if r.Status != carillonv1.RunStatus_RUN_STATUS_PENDING || !r.ScheduledAt.AsTime().Equal(at) || !r.DueAt.AsTime().Equal(at) ||
			r.TriggeredAt != nil || r.Param != "later" || r.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_API {
			t.Errorf("the run of run_at %v: %s scheduled %v due %v triggered %v param %q %s; want PENDING, scheduled and due then, not triggered, param later, API (an API token's call)",
				at, r.Status, r.ScheduledAt.AsTime(), r.DueAt.AsTime(), r.TriggeredAt, r.Param, r.TriggerType)
		}

		if _, err := runs.KillRun(ctx, &carillonv1.KillRunRequest{RunId: r.Id}); err != nil {
			t.Fatalf("KillRun of a pending run: %v", err)
		}
		got, err = runs.GetRun(ctx, &carillonv1.GetRunRequest{Id: r.Id})
		if err != nil {
			t.Fatal(err)
		}
		if got.Run.Status != carillonv1.RunStatus_RUN_STATUS_KILLED || !strings.Contains(got.Run.Message, "before it started") {
			t.Errorf("after KillRun: %s %q, want KILLED, cancelled before it started", got.Run.Status, got.Run.Message)
		}
		if _, err := runs.KillRun(ctx, &carillonv1.KillRunRequest{RunId: r.Id}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Errorf("a second KillRun: %v, want failed_precondition", err)
		}

		// A workflow node's pending run: its workflow run would wait for it,
		// so KillRun refuses it, naming the way, and changes nothing.
		node, err := b.store.Runs.Insert(ctx, []store.Run{{JobID: job, GroupID: r.GroupId, ShardTotal: 1, WorkflowRunID: 7, WorkflowNode: "load",
			TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_WORKFLOW, ScheduledAt: at, Status: carillonv1.RunStatus_RUN_STATUS_PENDING}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := runs.KillRun(ctx, &carillonv1.KillRunRequest{RunId: node[0].ID}); connect.CodeOf(err) != connect.CodeFailedPrecondition ||
			!strings.Contains(err.Error(), "CancelWorkflowRun") {
			t.Errorf("KillRun of a workflow node's pending run: %v, want failed_precondition naming CancelWorkflowRun", err)
		}
		if got, _ := b.store.Runs.Get(ctx, node[0].ID); got.Status != carillonv1.RunStatus_RUN_STATUS_PENDING {
			t.Errorf("the node's run after a refused KillRun: %s, want PENDING", got.Status)
		}

		before, err := b.store.Runs.MaxID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			req  *carillonv1.TriggerJobRequest
			says string
		}{
			{"past", &carillonv1.TriggerJobRequest{JobId: job, RunAt: timestamppb.New(now.Add(-time.Second))}, "run_at: must be in the future"},
			{"now", &carillonv1.TriggerJobRequest{JobId: job, RunAt: timestamppb.New(now)}, "run_at: must be in the future"},
			{"far", &carillonv1.TriggerJobRequest{JobId: job, RunAt: timestamppb.New(now.Add(367 * 24 * time.Hour))}, "run_at: must be at most 366 days ahead"},
			{"addresses", &carillonv1.TriggerJobRequest{JobId: job, RunAt: timestamppb.New(at), Addresses: []string{"http://unused:1"}},
				"run_at: cannot be combined with addresses"},
		} {
			_, err := jobs.TriggerJob(ctx, c.req)
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), c.says) {
				t.Errorf("%s: %v, want invalid_argument saying %q", c.name, err, c.says)
			}
		}
		if after, err := b.store.Runs.MaxID(ctx); err != nil || after != before {
			t.Errorf("refused triggers made runs: max run id %d, was %d (%v)", after, before, err)
		}
	})
}
