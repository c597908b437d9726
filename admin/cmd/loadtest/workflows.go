package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk"
)

// nodeHandlerName is the handler of the workflows' nodes (--workflows).
const nodeHandlerName = "wfnode"

// nodeReceipt is one workflow node run that reached a handler: its param
// ("workflow/key"), the workflow run's instant and when the handler began
// and ended.
type nodeReceipt struct {
	param      string
	at         int64 // unix milliseconds
	start, end int64 // unix nanoseconds
}

// nodeRecorder keeps every node receipt. It is safe for concurrent use.
type nodeRecorder struct {
	mu       sync.Mutex
	receipts []nodeReceipt
}

// handle is the nodes' no-op handler: it records the run and succeeds.
func (r *nodeRecorder) handle(_ context.Context, job *sdk.Job) error {
	start := time.Now().UnixNano()
	rc := nodeReceipt{param: job.Param, at: job.ScheduledAt.UnixMilli(), start: start, end: time.Now().UnixNano()}
	r.mu.Lock()
	r.receipts = append(r.receipts, rc)
	r.mu.Unlock()
	return nil
}

func (r *nodeRecorder) snapshot() []nodeReceipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.receipts)
}

// dag is the shape of the measured workflows: node keys in order and the
// dependencies of each. With k nodes: root, then up to 50 in parallel,
// then (k over 52) a join and the rest in parallel, then a sink, so that
// 5 nodes are a diamond (root, 3, sink) and 100 a fan-out of 50, a fan-in,
// a fan-out of 47 and a fan-in.
type dag struct {
	keys []string
	deps map[string][]string
}

func dagOf(k int) dag {
	d := dag{deps: map[string][]string{}}
	add := func(key string, deps ...string) {
		d.keys = append(d.keys, key)
		d.deps[key] = deps
	}
	add("root")
	layer := func(prefix string, n int, after string) []string {
		var keys []string
		for i := range n {
			key := fmt.Sprintf("%s%02d", prefix, i+1)
			add(key, after)
			keys = append(keys, key)
		}
		return keys
	}
	first := min(k-2, 50)
	last := layer("a", first, "root")
	if k-2 > first {
		add("join", last...)
		last = []string{"join"}
		if rest := k - 3 - first; rest > 0 {
			last = layer("b", rest, "join")
		}
	}
	add("sink", last...)
	return d
}

// workflowLoad is the workflows of --workflows: their IDs by index.
type workflowLoad struct {
	shape dag
	ids   []int64
	cron  string
}

// createWorkflows creates a job for the nodes in group and c.workflows
// enabled workflows of c.workflowNodes nodes on c.workflowCron, each
// node's param "workflow index/key".
func createWorkflows(ctx context.Context, a *api, c *config, group int64) (*workflowLoad, error) {
	job, err := a.jobs.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{
		GroupId: group, Description: "loadtest workflow node", Handler: nodeHandlerName,
		Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE},
	}})
	if err != nil {
		return nil, fmt.Errorf("create the workflow nodes' job: %w", err)
	}
	wl := &workflowLoad{shape: dagOf(c.workflowNodes), cron: c.workflowCron}
	for i := range c.workflows {
		var nodes []*carillonv1.WorkflowNode
		for _, key := range wl.shape.keys {
			param := fmt.Sprintf("%d/%s", i, key)
			nodes = append(nodes, &carillonv1.WorkflowNode{Key: key, JobId: job.Job.Id, DependsOn: wl.shape.deps[key], Param: &param})
		}
		res, err := a.workflows.CreateWorkflow(ctx, &carillonv1.CreateWorkflowRequest{Workflow: &carillonv1.Workflow{
			GroupId: group, Name: fmt.Sprintf("loadtest %d", i), Nodes: nodes, Enabled: true,
			Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: c.workflowCron},
		}})
		if err != nil {
			return nil, fmt.Errorf("create workflow %d of %d: %w", i+1, c.workflows, err)
		}
		wl.ids = append(wl.ids, res.Workflow.Id)
	}
	return wl, nil
}

// workflowInfo is what --workflows measured, over the workflow runs whose
// instant is in the window.
type workflowInfo struct {
	Workflows int `json:"workflows"`
	Nodes     int `json:"nodes"`
	// Expected workflow runs have their instant in the window; Complete
	// ran each of their nodes exactly once; NodeRunsMissing and
	// NodeRunsDuplicated count the node runs of the window's workflow runs
	// that never reached an executor, and extra ones.
	Expected           int     `json:"expected_runs"`
	Complete           int     `json:"complete_runs"`
	PerMinute          float64 `json:"complete_per_minute"`
	NodeRunsMissing    int     `json:"node_runs_missing"`
	NodeRunsDuplicated int     `json:"node_runs_duplicated"`
	// RootLateness is how late each root node's handler began after the
	// workflow run's instant; NodeStart how long after the last of its
	// dependencies' handlers ended each other node's handler began (the
	// result's way to the admin, its settle, the dependents' claim and
	// send), ms.
	RootLateness latenessInfo `json:"root_lateness_ms"`
	NodeStart    latenessInfo `json:"node_start_after_dependencies_ms"`
	NodeStarts   int          `json:"node_starts"`
}

// expectedNodes returns the node runs the window's workflow runs make, by
// param and instant.
func (wl *workflowLoad) expectedNodes(ctx context.Context, a *api, start, end time.Time) (map[nodeKey]bool, int, error) {
	instants, err := preview(ctx, a, &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: wl.cron}, start, end)
	if err != nil {
		return nil, 0, err
	}
	want := map[nodeKey]bool{}
	for i := range wl.ids {
		for _, at := range instants {
			for _, key := range wl.shape.keys {
				want[nodeKey{fmt.Sprintf("%d/%s", i, key), at.UnixMilli()}] = true
			}
		}
	}
	return want, len(wl.ids) * len(instants), nil
}

// nodeKey names one node run of one workflow run.
type nodeKey struct {
	param string
	at    int64
}

// awaitNodes waits until every node run of want reached an executor, or
// until deadline.
func awaitNodes(ctx context.Context, rec *nodeRecorder, want map[nodeKey]bool, deadline time.Time) error {
	for time.Now().Before(deadline) {
		got := 0
		for _, r := range rec.snapshot() {
			if want[nodeKey{r.param, r.at}] {
				got++
			}
		}
		if got >= len(want) {
			return nil
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// measureWorkflows sums up the node receipts of the window's workflow
// runs.
func (wl *workflowLoad) measure(want map[nodeKey]bool, runs int, receipts []nodeReceipt, minutes float64) *workflowInfo {
	info := &workflowInfo{Workflows: len(wl.ids), Nodes: len(wl.shape.keys), Expected: runs}
	byKey := map[nodeKey][]nodeReceipt{}
	for _, r := range receipts {
		k := nodeKey{r.param, r.at}
		if want[k] {
			byKey[k] = append(byKey[k], r)
		}
	}
	var roots, starts []float64
	for i := range wl.ids {
		for at := range instantsOf(want, i) {
			complete := true
			for _, key := range wl.shape.keys {
				got := byKey[nodeKey{fmt.Sprintf("%d/%s", i, key), at}]
				switch {
				case len(got) == 0:
					info.NodeRunsMissing++
					complete = false
					continue
				case len(got) > 1:
					info.NodeRunsDuplicated += len(got) - 1
					complete = false
				}
				deps := wl.shape.deps[key]
				if len(deps) == 0 {
					roots = append(roots, float64(got[0].start-at*int64(time.Millisecond))/1e6)
					continue
				}
				var last int64
				for _, dep := range deps {
					d := byKey[nodeKey{fmt.Sprintf("%d/%s", i, dep), at}]
					if len(d) == 0 {
						last = 0
						break
					}
					last = max(last, d[0].end)
				}
				if last > 0 {
					starts = append(starts, float64(got[0].start-last)/1e6)
				}
			}
			if complete {
				info.Complete++
			}
		}
	}
	slices.Sort(roots)
	slices.Sort(starts)
	info.RootLateness, info.NodeStart, info.NodeStarts = quantiles(roots), quantiles(starts), len(starts)
	if minutes > 0 {
		info.PerMinute = round(float64(info.Complete) / minutes)
	}
	return info
}

// instantsOf returns the instants of workflow i's runs in want.
func instantsOf(want map[nodeKey]bool, i int) map[int64]bool {
	prefix := fmt.Sprintf("%d/root", i)
	out := map[int64]bool{}
	for k := range want {
		if k.param == prefix {
			out[k.at] = true
		}
	}
	return out
}
