package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk"
)

// TestBackfill: BackfillJob of an hourly cron job (in its zone) over five
// hours runs it once for each instant, as BACKFILL runs with the instants
// as scheduled_at; the job is SERIAL_EXECUTION, so its executors (two)
// run them one at a time, oldest first. A dry run lists the instants and
// makes no run; a range of more than 1,000 instants, a job without a
// schedule of instants and a range that ends before it starts are
// refused, naming the field and saying why, and make no run.
func TestBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmin(t)
	c := newClients(a.URL, http.DefaultClient)
	var mu sync.Mutex
	var seen []time.Time // scheduled instants, in the order the handlers began
	running, most := 0, 0
	count := func(ctx context.Context, job *sdk.Job) error {
		mu.Lock()
		seen = append(seen, job.ScheduledAt)
		running++
		most = max(most, running)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond) // long enough for a second run to overlap, were it sent
		mu.Lock()
		running--
		mu.Unlock()
		return nil
	}
	for range 2 {
		startExecutor(t, a.URL, "backfill", func(ex *sdk.Executor) { ex.HandleFunc("count", count) })
	}
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "backfill"}})
	if err != nil {
		t.Fatal(err)
	}
	awaitExecutors(t, a, c, g.Group.Id, 2)
	hourly := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "0 30 * * * ?", TimeZone: "Asia/Kolkata"}
	job := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "hourly", Schedule: hourly, Handler: "count",
		RouteStrategy: carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN}) // stopped: only the backfill runs it
	// Kolkata is UTC+5:30: its xx:30 are whole UTC hours.
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(5 * time.Hour)
	req := &carillonv1.BackfillJobRequest{JobId: job.Id, From: timestamppb.New(from), To: timestamppb.New(to), DryRun: true}
	dry, err := c.job.BackfillJob(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.Instants) != 5 || len(dry.RunIds) != 0 || !dry.Instants[0].AsTime().Equal(from) || !dry.Instants[4].AsTime().Equal(from.Add(4*time.Hour)) {
		t.Fatalf("dry run: %d instants from %v to %v, runs %v; want the 5 whole hours from %v, no run",
			len(dry.Instants), dry.Instants[0].AsTime(), dry.Instants[len(dry.Instants)-1].AsTime(), dry.RunIds, from)
	}
	if runs := listRuns(t, c, job.Id); len(runs) != 0 {
		t.Fatalf("a dry run made %d runs", len(runs))
	}

	req.DryRun = false
	res, err := c.job.BackfillJob(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.RunIds) != 5 {
		t.Fatalf("backfill made runs %v, want 5", res.RunIds)
	}
	eventually(t, a.URL, 20*time.Second, func() error {
		done := 0
		for _, r := range listRuns(t, c, job.Id) {
			if r.Status == carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
				done++
			}
		}
		if done != 5 {
			return fmt.Errorf("%d backfill runs succeeded, want 5", done)
		}
		return nil
	})
	mu.Lock()
	if most != 1 || len(seen) != 5 {
		t.Errorf("the executors ran %d runs, at most %d at once; want 5, one at a time", len(seen), most)
	}
	for i, at := range seen {
		if want := from.Add(time.Duration(i) * time.Hour); !at.Equal(want) {
			t.Errorf("run %d began for instant %v, want %v (oldest first)", i, at, want)
		}
	}
	mu.Unlock()
	for _, id := range res.RunIds {
		r, err := c.run.GetRun(ctx, &carillonv1.GetRunRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		if r.Run.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_BACKFILL {
			t.Errorf("run %d: trigger %s, want BACKFILL", id, r.Run.TriggerType)
		}
	}

	none := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "manual", Handler: "count",
		Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}})
	before := len(listRuns(t, c, job.Id))
	for _, bad := range []struct {
		name string
		req  *carillonv1.BackfillJobRequest
		says string
	}{
		{"1,001 instants", &carillonv1.BackfillJobRequest{JobId: job.Id, From: timestamppb.New(from), To: timestamppb.New(from.Add(1001 * time.Hour))},
			"to: [from, to) holds 1001 instants of job"},
		{"no schedule", &carillonv1.BackfillJobRequest{JobId: none.Id, From: timestamppb.New(from), To: timestamppb.New(to)},
			"job_id: job " + fmt.Sprint(none.Id) + " has a NONE schedule"},
		{"to before from", &carillonv1.BackfillJobRequest{JobId: job.Id, From: timestamppb.New(to), To: timestamppb.New(from)},
			"to: must be after from"},
	} {
		_, err := c.job.BackfillJob(ctx, bad.req)
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%s: %v; want invalid_argument saying %q", bad.name, err, bad.says)
		}
	}
	if after := len(listRuns(t, c, job.Id)) + len(listRuns(t, c, none.Id)); after != before {
		t.Errorf("refused backfills made runs: %d, were %d", after, before)
	}

	// 1,000 instants are admitted in one call; the log says how long.
	began := time.Now()
	big, err := c.job.BackfillJob(ctx, &carillonv1.BackfillJobRequest{JobId: job.Id, From: timestamppb.New(to), To: timestamppb.New(to.Add(1000 * time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a backfill of %d instants took %s", len(big.RunIds), time.Since(began))
	if len(big.RunIds) != 1000 {
		t.Errorf("backfill of 1,000 hours: %d runs", len(big.RunIds))
	}
}

// TestBackfillWorkflow: BackfillWorkflow of a SERIAL_EXECUTION workflow
// over three fixed-rate instants makes three BACKFILL workflow runs, with
// the instants as scheduled_at, which run one after the other; a dry run
// lists the instants and makes none.
func TestBackfillWorkflow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := startWorkflowSetup(t)
	j, err := w.c.job.GetJob(ctx, &carillonv1.GetJobRequest{Id: w.jobs["journal"]})
	if err != nil {
		t.Fatal(err)
	}
	created, err := w.wf.CreateWorkflow(ctx, &carillonv1.CreateWorkflowRequest{Workflow: &carillonv1.Workflow{
		GroupId: j.Job.GroupId, Name: "backfilled", Nodes: []*carillonv1.WorkflowNode{node("n", w.jobs["journal"])},
		Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 3600},
	}})
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	req := &carillonv1.BackfillWorkflowRequest{WorkflowId: created.Workflow.Id, From: timestamppb.New(from), To: timestamppb.New(from.Add(3 * time.Hour)), DryRun: true}
	dry, err := w.wf.BackfillWorkflow(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.Instants) != 3 || len(dry.WorkflowRunIds) != 0 {
		t.Fatalf("dry run: %d instants, workflow runs %v; want 3, none", len(dry.Instants), dry.WorkflowRunIds)
	}
	req.DryRun = false
	res, err := w.wf.BackfillWorkflow(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.WorkflowRunIds) != 3 {
		t.Fatalf("workflow runs %v, want 3", res.WorkflowRunIds)
	}
	for i, id := range res.WorkflowRunIds {
		wr := w.await(t, id, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SUCCEEDED)
		if want := from.Add(time.Duration(i) * time.Hour); !wr.ScheduledAt.AsTime().Equal(want) {
			t.Errorf("workflow run %d: scheduled at %v, want %v", id, wr.ScheduledAt.AsTime(), want)
		}
	}
	w.log.mu.Lock()
	defer w.log.mu.Unlock()
	if got := strings.Join(w.log.events, ","); got != "start n,end n,start n,end n,start n,end n" {
		t.Errorf("the node's runs: %s; want one after the other", got)
	}
}
