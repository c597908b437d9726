package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// crashWorkflowMin is how many workflow runs a soak test must see
// succeed for its check of them to mean something. Few: under .ci/run's
// -race, beside the other soak tests on 2 cores, a crash loop saw 4 of
// about 30 instants succeed (the rest discarded behind slow runs), where
// alone, without -race, the same seed saw 17.
const crashWorkflowMin = 2

// crashWorkflow is the workflow of the soak tests: the diamond a -> (b,
// c) -> d, a job of its own for each node (handler "node", no schedule),
// so that the executors count each node's runs by fire (job, the workflow
// run's scheduled_at, shard 0).
type crashWorkflow struct {
	id   int64
	jobs map[string]int64 // by node key
}

// createCrashWorkflow stores the soak tests' workflow in group, started,
// every 3 s; an instant that comes while the previous workflow run is
// active is discarded (DISCARD_LATER), so none waits behind another.
func createCrashWorkflow(t *testing.T, mc crashClients, group int64) crashWorkflow {
	t.Helper()
	ctx := context.Background()
	w := crashWorkflow{jobs: map[string]int64{}}
	deps := map[string][]string{"a": nil, "b": {"a"}, "c": {"a"}, "d": {"b", "c"}}
	var nodes []*carillonv1.WorkflowNode
	for _, key := range []string{"a", "b", "c", "d"} {
		j, err := mc.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{
			GroupId: group, Description: "workflow node " + key, Handler: "node",
			Schedule:      &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE},
			RouteStrategy: carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN,
		}})
		if err != nil {
			t.Fatal(err)
		}
		w.jobs[key] = j.Job.Id
		nodes = append(nodes, &carillonv1.WorkflowNode{Key: key, JobId: j.Job.Id, DependsOn: deps[key]})
	}
	res, err := mc.wf.CreateWorkflow(ctx, &carillonv1.CreateWorkflowRequest{Workflow: &carillonv1.Workflow{
		GroupId: group, Name: "crash diamond", Nodes: nodes, Enabled: true,
		Schedule:      &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "*/3 * * * * ?", TimeZone: "UTC"},
		BlockStrategy: carillonv1.BlockStrategy_BLOCK_STRATEGY_DISCARD_LATER,
	}})
	if err != nil {
		t.Fatal(err)
	}
	w.id = res.Workflow.Id
	return w
}

// stop stops the workflow's schedule (before settle waits for the runs).
func (w crashWorkflow) stop(t *testing.T, mc crashClients) {
	t.Helper()
	if _, err := mc.wf.StopWorkflow(context.Background(), &carillonv1.StopWorkflowRequest{Id: w.id}); err != nil {
		t.Fatal(err)
	}
}

// checkCrashWorkflow reads the workflow runs the admins left in d and
// checks them against what the executors ran: every workflow run ended
// SUCCEEDED, or SKIPPED (discarded, or a misfire record) with none of its
// nodes run; each node of each SUCCEEDED one ran exactly once on the
// executors; and at least crashWorkflowMin succeeded. (That no fire, a
// node's included, ran twice is checkCrashLoop's.)
func checkCrashWorkflow(t *testing.T, seed uint64, d *sql.DB, ex *executions, w crashWorkflow) {
	t.Helper()
	rows, err := d.Query(`SELECT id, status, scheduled_at, message FROM workflow_runs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ex.mu.Lock()
	defer ex.mu.Unlock()
	var problems []string
	succeeded, skipped := 0, 0
	for rows.Next() {
		var id, status, scheduled int64
		var msg string
		if err := rows.Scan(&id, &status, &scheduled, &msg); err != nil {
			t.Fatal(err)
		}
		at := time.UnixMilli(scheduled)
		desc := fmt.Sprintf("workflow run %d (instant %s, %s, %q)", id, at.UTC().Format("15:04:05"), carillonv1.WorkflowRunStatus(status), msg)
		want := 1
		switch carillonv1.WorkflowRunStatus(status) {
		case carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SUCCEEDED:
			succeeded++
		case carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SKIPPED:
			skipped, want = skipped+1, 0
		default:
			problems = append(problems, desc+": want SUCCEEDED (every handler succeeds) or SKIPPED")
			continue
		}
		for key, job := range w.jobs {
			if n := ex.byFire[fireKey(job, at, 0)]; n != want {
				problems = append(problems, fmt.Sprintf("%s: node %s executed %d times, want %d", desc, key, n, want))
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("seed %d: %d workflow runs succeeded, %d skipped", seed, succeeded, skipped)
	if succeeded < crashWorkflowMin {
		problems = append(problems, fmt.Sprintf("only %d workflow runs succeeded, want at least %d", succeeded, crashWorkflowMin))
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		if len(problems) > 25 {
			problems = append(problems[:25], fmt.Sprintf("… and %d more", len(problems)-25))
		}
		t.Errorf("seed %d: %d workflow problems:\n%s", seed, len(problems), strings.Join(problems, "\n"))
	}
}
