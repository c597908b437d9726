package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk"
)

// routing is an admin with n real executors of one AUTO group.
type routing struct {
	c     clients
	group int64
	addrs []string // sorted
}

func startRouting(t *testing.T, n int, setup ...func(*sdk.Executor)) *routing {
	t.Helper()
	a := startAdmin(t)
	r := &routing{c: newClients(a.URL, http.DefaultClient)}
	g, err := r.c.group.CreateGroup(context.Background(), &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "routing"}})
	if err != nil {
		t.Fatal(err)
	}
	r.group = g.Group.Id
	for range n {
		r.addrs = append(r.addrs, startExecutor(t, a.URL, "routing", setup...))
	}
	slices.Sort(r.addrs)
	eventually(t, r.c.url, 10*time.Second, func() error {
		res, err := r.c.group.GetGroup(context.Background(), &carillonv1.GetGroupRequest{Id: r.group})
		if err != nil {
			return err
		}
		if !slices.Equal(res.Group.Addresses, r.addrs) {
			return fmt.Errorf("group lists %v, want %v", res.Group.Addresses, r.addrs)
		}
		return nil
	})
	return r
}

func (r *routing) job(t *testing.T, j *carillonv1.Job) *carillonv1.Job {
	t.Helper()
	j.GroupId, j.Description = r.group, cmpOr(j.Description, "routing test")
	if j.Schedule == nil {
		j.Schedule = &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
	}
	return createJob(t, r.c, j)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (r *routing) trigger(t *testing.T, req *carillonv1.TriggerJobRequest) []*carillonv1.Run {
	t.Helper()
	res, err := r.c.job.TriggerJob(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var runs []*carillonv1.Run
	for _, id := range res.RunIds {
		got, err := r.c.run.GetRun(context.Background(), &carillonv1.GetRunRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, got.Run)
	}
	return runs
}

func TestRoundRobinAcrossExecutors(t *testing.T) {
	t.Parallel()
	r := startRouting(t, 3)
	j := r.job(t, &carillonv1.Job{Handler: "ok", RouteStrategy: carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN})
	counts := map[string]int{}
	for range 9 {
		for _, run := range r.trigger(t, &carillonv1.TriggerJobRequest{JobId: j.Id}) {
			if run.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_MANUAL {
				t.Errorf("run %d trigger type %s, want MANUAL", run.Id, run.TriggerType)
			}
			counts[run.ExecutorAddress]++
		}
	}
	for _, a := range r.addrs {
		if counts[a] != 3 {
			t.Errorf("executor %s ran %d of 9, want 3 (counts %v)", a, counts[a], counts)
		}
	}
}

func TestManualOverrides(t *testing.T) {
	t.Parallel()
	r := startRouting(t, 2)
	j := r.job(t, &carillonv1.Job{Handler: "ok", Param: "stored"})
	param := "override"
	runs := r.trigger(t, &carillonv1.TriggerJobRequest{JobId: j.Id, Param: &param, Addresses: []string{r.addrs[1]}})
	if len(runs) != 1 || runs[0].ExecutorAddress != r.addrs[1] || runs[0].Param != "override" {
		t.Fatalf("override run = %v, want param override on %s (FIRST of the override list, not of the group)", runs, r.addrs[1])
	}
	runs = r.trigger(t, &carillonv1.TriggerJobRequest{JobId: j.Id})
	if runs[0].ExecutorAddress != r.addrs[0] || runs[0].Param != "stored" {
		t.Fatalf("plain run = %v, want the stored param on %s", runs[0], r.addrs[0])
	}
}

func TestBroadcastThenChildOnce(t *testing.T) {
	t.Parallel()
	r := startRouting(t, 3, func(ex *sdk.Executor) {
		ex.HandleFunc("shard", func(ctx context.Context, job *sdk.Job) error {
			if job.ShardTotal != 3 {
				return fmt.Errorf("shard total %d, want 3", job.ShardTotal)
			}
			return nil
		})
	})
	child := r.job(t, &carillonv1.Job{Handler: "ok", Description: "child"})
	parent := r.job(t, &carillonv1.Job{Handler: "shard", RouteStrategy: carillonv1.RouteStrategy_ROUTE_STRATEGY_SHARDING_BROADCAST,
		ChildJobIds: []int64{child.Id}})

	runs := r.trigger(t, &carillonv1.TriggerJobRequest{JobId: parent.Id})
	if len(runs) != 3 {
		t.Fatalf("%d runs, want one per executor", len(runs))
	}
	for i, run := range runs {
		if run.ShardIndex != int32(i) || run.ShardTotal != 3 || run.ExecutorAddress != r.addrs[i] || !run.ScheduledAt.AsTime().Equal(runs[0].ScheduledAt.AsTime()) {
			t.Errorf("shard run %d = index %d of %d on %s at %v; want %d of 3 on %s, one shared instant",
				i, run.ShardIndex, run.ShardTotal, run.ExecutorAddress, run.ScheduledAt.AsTime(), i, r.addrs[i])
		}
	}
	eventually(t, r.c.url, 10*time.Second, func() error {
		for _, run := range listRuns(t, r.c, parent.Id) {
			if run.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
				return fmt.Errorf("shard run %d is %s", run.Id, run.Status)
			}
		}
		childRuns := listRuns(t, r.c, child.Id)
		if len(childRuns) != 1 || childRuns[0].Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
			return fmt.Errorf("child runs %v, want one that succeeded", childRuns)
		}
		if childRuns[0].TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_PARENT {
			t.Fatalf("child run trigger type %s, want PARENT", childRuns[0].TriggerType)
		}
		return nil
	})
}

func TestFailoverSkipsDeadExecutor(t *testing.T) {
	t.Parallel()
	r := startRouting(t, 1)
	dead := "http://127.0.0.1:1" // nothing listens on port 1; sorts before the live one
	g, err := r.c.group.CreateGroup(context.Background(), &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{
		AppName: "manual", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_MANUAL, Addresses: []string{r.addrs[0], dead}}})
	if err != nil {
		t.Fatal(err)
	}
	j := createJob(t, r.c, &carillonv1.Job{GroupId: g.Group.Id, Description: "failover", Handler: "ok",
		Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}, RouteStrategy: carillonv1.RouteStrategy_ROUTE_STRATEGY_FAILOVER})
	run := r.trigger(t, &carillonv1.TriggerJobRequest{JobId: j.Id})[0]
	if run.ExecutorAddress != r.addrs[0] {
		t.Fatalf("FAILOVER chose %q, want the live %s", run.ExecutorAddress, r.addrs[0])
	}
	if !strings.Contains(run.TriggerMessage, "beat "+dead) {
		t.Errorf("trigger message %q does not show the failed beat of %s", run.TriggerMessage, dead)
	}
}

func TestBusyoverSkipsBusyExecutor(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	r := startRouting(t, 2, func(ex *sdk.Executor) {
		ex.HandleFunc("block", func(ctx context.Context, job *sdk.Job) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		})
	})
	defer close(release)
	j := r.job(t, &carillonv1.Job{Handler: "block", RouteStrategy: carillonv1.RouteStrategy_ROUTE_STRATEGY_BUSYOVER})
	first := r.trigger(t, &carillonv1.TriggerJobRequest{JobId: j.Id})[0]
	if first.ExecutorAddress != r.addrs[0] {
		t.Fatalf("first run went to %s, want the first idle executor %s", first.ExecutorAddress, r.addrs[0])
	}
	second := r.trigger(t, &carillonv1.TriggerJobRequest{JobId: j.Id})[0]
	if second.ExecutorAddress != r.addrs[1] {
		t.Fatalf("second run went to %s while %s was busy, want %s (trigger message %q)",
			second.ExecutorAddress, r.addrs[0], r.addrs[1], second.TriggerMessage)
	}
}

// TestRetryAfterDelay: a failed run is retried after its delay, as many
// times as the job says, each retry a run of its own with the same param;
// the handler sees each attempt's number and the same logical time (the
// first run's scheduled instant) in every attempt.
func TestRetryAfterDelay(t *testing.T) {
	t.Parallel()
	type seen struct {
		attempt int
		at      time.Time
	}
	var mu sync.Mutex
	var calls []seen
	r := startRouting(t, 1, func(ex *sdk.Executor) {
		ex.HandleFunc("attempts", func(ctx context.Context, job *sdk.Job) error {
			mu.Lock()
			calls = append(calls, seen{job.Attempt, job.ScheduledAt})
			mu.Unlock()
			return fmt.Errorf("boom: %s", job.Param)
		})
	})
	j := r.job(t, &carillonv1.Job{Handler: "attempts", Param: "again", RetryCount: 2, RetryDelaySeconds: 1})
	r.trigger(t, &carillonv1.TriggerJobRequest{JobId: j.Id})
	eventually(t, r.c.url, 15*time.Second, func() error {
		runs := listRuns(t, r.c, j.Id)
		if len(runs) != 3 {
			return fmt.Errorf("%d runs, want the first and 2 retries", len(runs))
		}
		slices.Reverse(runs) // oldest first
		for i, run := range runs {
			if run.Status != carillonv1.RunStatus_RUN_STATUS_FAILED {
				return fmt.Errorf("attempt %d is %s", i, run.Status)
			}
			if run.Attempt != int32(i) || run.Param != "again" {
				t.Fatalf("run %d: attempt %d param %q, want attempt %d with the same param", run.Id, run.Attempt, run.Param, i)
			}
			if i > 0 {
				if run.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_RETRY {
					t.Errorf("retry %d trigger type %s", i, run.TriggerType)
				}
				if wait := run.TriggeredAt.AsTime().Sub(runs[i-1].FinishedAt.AsTime()); wait < time.Second {
					t.Errorf("retry %d dispatched %s after the failure, want at least the 1 s delay", i, wait)
				}
			}
		}
		return nil
	})
	first := listRuns(t, r.c, j.Id)[2].ScheduledAt.AsTime() // newest first
	mu.Lock()
	defer mu.Unlock()
	for i, c := range calls {
		if c.attempt != i || !c.at.Equal(first) {
			t.Errorf("call %d of the handler: attempt %d, scheduled at %v; want attempt %d, at %v (the first run's instant)", i, c.attempt, c.at, i, first)
		}
	}
	if len(calls) != 3 {
		t.Errorf("the handler ran %d times, want 3", len(calls))
	}
}
