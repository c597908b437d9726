package admin_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	xxl "github.com/xxl-job/xxl-job-executor-go"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// goExecutor is a real xxl-job-executor-go v1.2.0 executor, served on
// loopback, with what its handlers and log handler saw.
type goExecutor struct {
	address string
	mu      sync.Mutex
	runs    map[int64]*xxl.RunReq // by logId
	logReqs []xxl.LogReq
	started chan int64 // logIds of "block" runs, as they start
	ended   chan error // the context error "block" saw at its end
}

func (e *goExecutor) run(logID int64) *xxl.RunReq {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runs[logID]
}

// quietLogger discards xxl-job-executor-go's own log lines: they outlive
// the test (its registration loop never stops).
type quietLogger struct{}

func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

// startGoExecutor starts an xxl-job-executor-go executor of app that
// registers with the admin at adminURL, with handlers "ok" (returns "ok
// <param>"), "fail" (panics) and "block" (waits for its context to end).
func startGoExecutor(t *testing.T, adminURL, app string) *goExecutor {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	g := &goExecutor{address: "http://" + ln.Addr().String(), runs: map[int64]*xxl.RunReq{},
		started: make(chan int64, 8), ended: make(chan error, 8)}
	ex := xxl.NewExecutor(xxl.ServerAddr(adminURL), xxl.AccessToken(token), xxl.ExecutorIp("127.0.0.1"),
		xxl.ExecutorPort(port), xxl.RegistryKey(app), xxl.SetLogger(quietLogger{}))
	record := func(p *xxl.RunReq) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.runs[p.LogID] = p
	}
	ex.LogHandler(func(req *xxl.LogReq) *xxl.LogRes {
		g.mu.Lock()
		g.logReqs = append(g.logReqs, *req)
		g.mu.Unlock()
		return &xxl.LogRes{Code: xxl.SuccessCode, Content: xxl.LogResContent{
			FromLineNum: req.FromLineNum, ToLineNum: req.FromLineNum,
			LogContent: fmt.Sprintf("log of %d dated %d", req.LogID, req.LogDateTim), IsEnd: true,
		}}
	})
	ex.Init()
	ex.RegTask("ok", func(_ context.Context, p *xxl.RunReq) string {
		record(p)
		return "ok " + p.ExecutorParams
	})
	ex.RegTask("fail", func(_ context.Context, p *xxl.RunReq) string {
		record(p)
		panic("boom")
	})
	ex.RegTask("block", func(ctx context.Context, p *xxl.RunReq) string {
		record(p)
		g.started <- p.LogID
		<-ctx.Done()
		g.ended <- ctx.Err()
		return "stopped"
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/run", ex.RunTask)
	mux.HandleFunc("/kill", ex.KillTask)
	mux.HandleFunc("/log", ex.TaskLog)
	mux.HandleFunc("/beat", ex.Beat)
	mux.HandleFunc("/idleBeat", ex.IdleBeat)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ex.Stop() // registryRemove
		_ = srv.Close()
	})
	return g
}

// waitRuns polls the runs of job until done says they are what the test
// waits for, and fails with the last runs seen at the deadline.
func waitRuns(t *testing.T, c clients, jobID int64, done func(runs []*carillonv1.Run) error) []*carillonv1.Run {
	t.Helper()
	var runs []*carillonv1.Run
	eventually(t, c.url, 30*time.Second, func() error {
		runs = listRuns(t, c, jobID)
		if err := done(runs); err != nil {
			return fmt.Errorf("%w; runs: %v", err, describeRuns(runs))
		}
		return nil
	})
	return runs
}

func describeRuns(runs []*carillonv1.Run) string {
	var b strings.Builder
	for _, r := range runs {
		fmt.Fprintf(&b, "[%d %s %s shard %d/%d at %s: %q] ", r.Id, r.TriggerType, r.Status, r.ShardIndex, r.ShardTotal, r.ExecutorAddress, r.Message)
	}
	return b.String()
}

// TestXXLJobExecutor runs two real xxl-job-executor-go v1.2.0 executors
// against a Carillon admin, registered through its /api/registry into an
// XXL_JOB group: a cron job runs on the first, a sharding broadcast on
// both, a panicking handler fails and is retried once, a run is killed
// (KILLED, and the handler's context ended) and a run's log is read
// through the admin with the run's logId and logDateTim.
func TestXXLJobExecutor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmin(t)
	c := newClients(a.URL, http.DefaultClient)
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{
		AppName: "xxl-go", ExecutorProtocol: carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB}})
	if err != nil {
		t.Fatal(err)
	}
	e1, e2 := startGoExecutor(t, a.URL, "xxl-go"), startGoExecutor(t, a.URL, "xxl-go")
	want := []string{e1.address, e2.address}
	slices.Sort(want)
	eventually(t, a.URL, 15*time.Second, func() error {
		res, err := c.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: g.Group.Id})
		if err != nil {
			return err
		}
		if !slices.Equal(res.Group.Addresses, want) {
			return fmt.Errorf("group addresses %v, want %v", res.Group.Addresses, want)
		}
		return nil
	})
	byAddr := map[string]*goExecutor{e1.address: e1, e2.address: e2}
	none := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}

	t.Run("Cron", func(t *testing.T) {
		job := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "cron", Handler: "ok", Param: "cron",
			Schedule:      &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "*/1 * * * * ?"},
			RouteStrategy: carillonv1.RouteStrategy_ROUTE_STRATEGY_FIRST, Enabled: true})
		runs := waitRuns(t, c, job.Id, func(runs []*carillonv1.Run) error {
			for _, r := range runs {
				if r.Status == carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
					return nil
				}
			}
			return errors.New("no succeeded run yet")
		})
		if _, err := c.job.StopJob(ctx, &carillonv1.StopJobRequest{Id: job.Id}); err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
				continue
			}
			if r.ExecutorAddress != want[0] || r.Message != "ok cron" || r.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE {
				t.Errorf("run %d: executor %s message %q trigger %s, want %s, %q, SCHEDULE", r.Id, r.ExecutorAddress, r.Message, r.TriggerType, want[0], "ok cron")
			}
			p := byAddr[want[0]].run(r.Id)
			if p == nil || p.JobID != job.Id || p.ExecutorParams != "cron" || p.LogDateTime != r.ScheduledAt.AsTime().UnixMilli() ||
				p.GlueType != "BEAN" || p.BroadcastTotal != 1 || p.ExecutorBlockStrategy != "SERIAL_EXECUTION" {
				t.Errorf("run %d: the executor got %+v", r.Id, p)
			}
		}
	})

	t.Run("ShardingBroadcast", func(t *testing.T) {
		job := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "broadcast", Handler: "ok", Param: "shard",
			Schedule: none, RouteStrategy: carillonv1.RouteStrategy_ROUTE_STRATEGY_SHARDING_BROADCAST})
		if _, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: job.Id}); err != nil {
			t.Fatal(err)
		}
		runs := waitRuns(t, c, job.Id, func(runs []*carillonv1.Run) error {
			n := 0
			for _, r := range runs {
				if r.Status == carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
					n++
				}
			}
			if n != 2 {
				return fmt.Errorf("%d succeeded shards, want 2", n)
			}
			return nil
		})
		for _, r := range runs {
			ex := byAddr[r.ExecutorAddress]
			if ex == nil || r.ExecutorAddress != want[r.ShardIndex] || r.ShardTotal != 2 {
				t.Fatalf("run %d: shard %d/%d on %s, want shard i on executor i of %v", r.Id, r.ShardIndex, r.ShardTotal, r.ExecutorAddress, want)
			}
			if p := ex.run(r.Id); p == nil || p.BroadcastIndex != int64(r.ShardIndex) || p.BroadcastTotal != 2 {
				t.Errorf("run %d (shard %d/2): the executor got %+v", r.Id, r.ShardIndex, p)
			}
		}
	})

	t.Run("FailureRetried", func(t *testing.T) {
		job := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "fail", Handler: "fail", Schedule: none,
			RetryCount: 1, RetryDelaySeconds: 1})
		if _, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: job.Id}); err != nil {
			t.Fatal(err)
		}
		runs := waitRuns(t, c, job.Id, func(runs []*carillonv1.Run) error {
			failed := 0
			for _, r := range runs {
				if r.Status == carillonv1.RunStatus_RUN_STATUS_FAILED {
					failed++
				}
			}
			if failed != 2 {
				return fmt.Errorf("%d failed runs, want 2 (the run and its retry)", failed)
			}
			return nil
		})
		for _, r := range runs {
			if !strings.Contains(r.Message, "task panic:boom") {
				t.Errorf("run %d (attempt %d): message %q, want the executor's %q", r.Id, r.Attempt, r.Message, "task panic:boom")
			}
		}
	})

	t.Run("Kill", func(t *testing.T) {
		job := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "block", Handler: "block", Schedule: none})
		res, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: job.Id})
		if err != nil {
			t.Fatal(err)
		}
		run, err := c.run.GetRun(ctx, &carillonv1.GetRunRequest{Id: res.RunIds[0]})
		if err != nil {
			t.Fatal(err)
		}
		ex := byAddr[run.Run.ExecutorAddress]
		if ex == nil {
			t.Fatalf("run %d went to %q, not one of %v", run.Run.Id, run.Run.ExecutorAddress, want)
		}
		select {
		case id := <-ex.started:
			if id != run.Run.Id {
				t.Fatalf("the executor started logId %d, want %d", id, run.Run.Id)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the handler did not start in 10 s")
		}
		if _, err := c.run.KillRun(ctx, &carillonv1.KillRunRequest{RunId: run.Run.Id}); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-ex.ended:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("the handler's context ended with %v, want canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the handler's context did not end in 10 s")
		}
		// The executor reports the killed run as a success ("stopped"),
		// maybe before KillRun settled it: it stays KILLED.
		waitRuns(t, c, job.Id, func(runs []*carillonv1.Run) error {
			if len(runs) != 1 || runs[0].Status != carillonv1.RunStatus_RUN_STATUS_KILLED {
				return errors.New("want the one run KILLED")
			}
			return nil
		})
	})

	t.Run("ReadLog", func(t *testing.T) {
		job := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "log", Handler: "ok", Schedule: none})
		res, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: job.Id})
		if err != nil {
			t.Fatal(err)
		}
		runs := waitRuns(t, c, job.Id, func(runs []*carillonv1.Run) error {
			if len(runs) != 1 || runs[0].Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
				return errors.New("want the one run SUCCEEDED")
			}
			return nil
		})
		page, err := c.run.ReadRunLog(ctx, &carillonv1.ReadRunLogRequest{RunId: res.RunIds[0], FromLine: 1})
		if err != nil {
			t.Fatal(err)
		}
		at := runs[0].ScheduledAt.AsTime().UnixMilli()
		if want := fmt.Sprintf("log of %d dated %d", runs[0].Id, at); page.Content != want || !page.End || page.FromLine != 1 {
			t.Errorf("log page %+v, want %q from line 1, ended", page, want)
		}
		ex := byAddr[runs[0].ExecutorAddress]
		ex.mu.Lock()
		defer ex.mu.Unlock()
		if n := len(ex.logReqs); n == 0 || ex.logReqs[n-1].LogID != runs[0].Id || ex.logReqs[n-1].LogDateTim != at || ex.logReqs[n-1].FromLineNum != 1 {
			t.Errorf("the executor's log requests %+v, want the last for logId %d, logDateTim %d, from line 1", ex.logReqs, runs[0].Id, at)
		}
	})
}
