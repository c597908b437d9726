package admin_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk"
)

// handlerGate is a "slow" handler that runs until the test lets one run
// end (release), counting, as the executors see it, how many runs are
// running at once and the most ever.
type handlerGate struct {
	release chan struct{}
	mu      sync.Mutex
	running int
	most    int
	started int
}

func (g *handlerGate) handle(ctx context.Context, _ *sdk.Job) error {
	g.mu.Lock()
	g.running++
	g.started++
	g.most = max(g.most, g.running)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.running--
		g.mu.Unlock()
	}()
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// counts returns how many runs are running, the most ever, and how many
// started.
func (g *handlerGate) counts() (running, most, started int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running, g.most, g.started
}

// awaitExecutors waits until group id of admin a has n executors
// registered.
func awaitExecutors(t *testing.T, a *testAdmin, c clients, id int64, n int) {
	t.Helper()
	eventually(t, a.URL, 15*time.Second, func() error {
		res, err := c.group.GetGroup(context.Background(), &carillonv1.GetGroupRequest{Id: id})
		if err != nil {
			return err
		}
		if len(res.Group.Addresses) != n {
			return fmt.Errorf("%d executors registered, want %d", len(res.Group.Addresses), n)
		}
		return nil
	})
}

// TestConcurrencyCap: a job with max_concurrency 2 triggered four times
// at once over four executors runs at most two at any moment, as the
// executors count them; the other two wait PENDING, saying so, and start
// as runs end. A DISCARD_LATER job with cap 1 records a trigger at its
// cap SKIPPED.
func TestConcurrencyCap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmin(t)
	c := newClients(a.URL, http.DefaultClient)
	gate := &handlerGate{release: make(chan struct{})}
	for range 4 { // serial on each executor: one run of the job at a time there
		startExecutor(t, a.URL, "caps", func(ex *sdk.Executor) { ex.HandleFunc("slow", gate.handle) })
	}
	t.Cleanup(func() { close(gate.release) })
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "caps"}})
	if err != nil {
		t.Fatal(err)
	}
	awaitExecutors(t, a, c, g.Group.Id, 4)
	none := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
	job := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "capped", Schedule: none, Handler: "slow",
		RouteStrategy: carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN, MaxConcurrency: 2, Enabled: true})
	for range 4 {
		if _, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: job.Id}); err != nil {
			t.Fatal(err)
		}
	}
	byStatus := func() map[carillonv1.RunStatus][]*carillonv1.Run {
		out := map[carillonv1.RunStatus][]*carillonv1.Run{}
		for _, r := range listRuns(t, c, job.Id) {
			out[r.Status] = append(out[r.Status], r)
		}
		return out
	}
	for released := 0; released <= 4; released++ {
		eventually(t, a.URL, 15*time.Second, func() error {
			running, _, started := gate.counts()
			runs := byStatus()
			wantRunning, wantStarted := min(2, 4-released), min(4, 2+released)
			if running != wantRunning || started != wantStarted || len(runs[carillonv1.RunStatus_RUN_STATUS_SUCCEEDED]) != released {
				return fmt.Errorf("%d released: executors run %d, started %d; %d runs SUCCEEDED; want %d, %d, %d",
					released, running, started, len(runs[carillonv1.RunStatus_RUN_STATUS_SUCCEEDED]), wantRunning, wantStarted, released)
			}
			waiting := runs[carillonv1.RunStatus_RUN_STATUS_PENDING]
			if len(waiting) != 4-released-wantRunning {
				return fmt.Errorf("%d released: %d runs PENDING, want %d", released, len(waiting), 4-released-wantRunning)
			}
			for _, r := range waiting {
				if !strings.HasPrefix(r.Message, "waiting for a concurrency slot") {
					return fmt.Errorf("pending run %d says %q", r.Id, r.Message)
				}
			}
			return nil
		})
		if released < 4 {
			gate.release <- struct{}{}
		}
	}
	if _, most, _ := gate.counts(); most != 2 {
		t.Errorf("the executors ran at most %d runs of the job at once; want 2", most)
	}
	for _, r := range listRuns(t, c, job.Id) {
		if r.StartedAt == nil || r.StartedAt.AsTime().After(r.FinishedAt.AsTime()) {
			t.Errorf("run %d: started at %v, finished at %v; want when its handler began", r.Id, r.StartedAt, r.FinishedAt)
		}
	}

	discard := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "discard", Schedule: none, Handler: "slow",
		BlockStrategy: carillonv1.BlockStrategy_BLOCK_STRATEGY_DISCARD_LATER, MaxConcurrency: 1, Enabled: true})
	first, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: discard.Id})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, a.URL, 15*time.Second, func() error {
		if running, _, _ := gate.counts(); running != 1 {
			return fmt.Errorf("the executors run %d runs, want the first of the DISCARD_LATER job", running)
		}
		return nil
	})
	second, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: discard.Id})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, a.URL, 15*time.Second, func() error {
		res, err := c.run.GetRun(ctx, &carillonv1.GetRunRequest{Id: second.RunIds[0]})
		if err != nil {
			return err
		}
		if res.Run.Status != carillonv1.RunStatus_RUN_STATUS_SKIPPED {
			return fmt.Errorf("the second run at the cap: %s %q, want SKIPPED", res.Run.Status, res.Run.Message)
		}
		if want := fmt.Sprintf("concurrency cap 1 of job %d reached", discard.Id); !strings.Contains(res.Run.Message, want) {
			return errors.New("message " + res.Run.Message + ", want " + want)
		}
		return nil
	})
	gate.release <- struct{}{}
	eventually(t, a.URL, 15*time.Second, func() error {
		res, err := c.run.GetRun(ctx, &carillonv1.GetRunRequest{Id: first.RunIds[0]})
		if err != nil {
			return err
		}
		if res.Run.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
			return fmt.Errorf("the first run: %s", res.Run.Status)
		}
		return nil
	})
}
