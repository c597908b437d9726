package server_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestResultsCheckedAgainstRun: a result from an executor process other
// than the one registered where its run was sent is refused for that run
// (permission_denied), and the real executor's result settles it after;
// an executor that declared CAPABILITY_INSTANCE_RESULTS takes no result
// without an instance for its runs; where nothing tells the executor apart
// (no registration, no instance registered) the result is taken; finished
// at is clamped to [triggered_at, the admin's now].
func TestResultsCheckedAgainstRun(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "")
		now := b.clock.Now()
		const a, c = "http://10.0.0.1:9999", "http://10.0.0.3:9999"
		g, j := appJob(t, b)
		for _, reg := range []*carillonv1.RegisterRequest{
			{AppName: "app", Address: a, InstanceId: "instance-a", Capabilities: []carillonv1.Capability{carillonv1.Capability_CAPABILITY_INSTANCE_RESULTS}},
			{AppName: "app", Address: c, InstanceId: "instance-c"}, // an executor that predates instance_id in results
		} {
			if _, err := b.registry.Register(ctx, reg); err != nil {
				t.Fatal(err)
			}
		}
		// sentTo returns a new run, running, recorded as sent to address.
		sentTo := func(address string) store.Run {
			t.Helper()
			runs, err := b.store.Runs.Insert(ctx, []store.Run{{JobID: j.ID, GroupID: g.ID, ExecutorAddress: address, ShardTotal: 1,
				TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, ScheduledAt: now, TriggeredAt: now,
				Status: carillonv1.RunStatus_RUN_STATUS_RUNNING}})
			if err != nil {
				t.Fatal(err)
			}
			return runs[0]
		}
		// route's route is recorded before its call, not its dispatch; none's
		// neither.
		forged, missing, predates, manual, route, none := sentTo(a), sentTo(a), sentTo(c), sentTo("http://10.0.0.2:9999"), sentTo(""), sentTo("")
		if got, err := b.store.Runs.Route(ctx, []store.Route{{RunID: route.ID, Address: a}}); err != nil || !got[route.ID] {
			t.Fatalf("route: %v %v", got, err)
		}
		result := func(r store.Run, status carillonv1.RunStatus, msg string) *carillonv1.RunResult {
			return &carillonv1.RunResult{RunId: r.ID, Status: status, Message: msg, FinishedAt: timestamppb.New(now)}
		}
		succeeded, failed := carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, carillonv1.RunStatus_RUN_STATUS_FAILED
		report := func(instance string, results ...*carillonv1.RunResult) []*carillonv1.ResultOutcome {
			t.Helper()
			res, err := b.registry.ReportResults(ctx, &carillonv1.ReportResultsRequest{InstanceId: instance, Results: results})
			if err != nil {
				t.Fatalf("ReportResults: %v, want the call to succeed", err)
			}
			return res.GetOutcomes()
		}

		// Another process: refused for the runs sent to a, taken for the others.
		out := report("instance-b", result(forged, succeeded, "forged"), result(predates, succeeded, "c's"),
			result(manual, succeeded, "manual"), result(route, succeeded, "forged"), result(none, succeeded, "unrouted"))
		for i, want := range []string{"permission_denied", "permission_denied", "", "permission_denied", ""} {
			if out[i].Code != want {
				t.Errorf("outcome %d from another process: %q %q, want code %q", i, out[i].Code, out[i].Message, want)
			}
		}
		if !strings.Contains(out[0].Message, "was sent to "+a) || !strings.Contains(out[1].Message, "was sent to "+c) {
			t.Errorf("refusals %q, %q: want them to name where the run was sent", out[0].Message, out[1].Message)
		}
		// No instance: refused where the executor declared it sends one.
		out = report("", result(missing, succeeded, "anonymous"), result(predates, failed, "c's own"))
		if out[0].Code != "permission_denied" || !strings.Contains(out[0].Message, "instance_id") || out[1].Code != "" {
			t.Errorf("outcomes without an instance: %v, want the run on a refused, the one on c taken", out)
		}
		// The real executor's results settle the runs the forged ones did not.
		if out = report("instance-a", result(forged, failed, "real"), result(missing, failed, "real"), result(route, failed, "real")); out[0].Code != "" || out[1].Code != "" || out[2].Code != "" {
			t.Errorf("outcomes of the real executor: %v, want all taken", out)
		}
		for _, w := range []struct {
			run    store.Run
			status carillonv1.RunStatus
			msg    string
		}{
			{forged, failed, "real"}, {missing, failed, "real"}, {route, failed, "real"},
			{predates, failed, "c's own"}, {manual, succeeded, "manual"}, {none, succeeded, "unrouted"},
		} {
			if got, err := b.store.Runs.Get(ctx, w.run.ID); err != nil || got.Status != w.status || got.Message != w.msg {
				t.Errorf("run %d: %s %q (%v), want %s %q", w.run.ID, got.Status, got.Message, err, w.status, w.msg)
			}
		}

		// finished_at: at most the admin's now, at least the run's send.
		future, past, unset := sentTo(a), sentTo(a), sentTo(a)
		at := func(r store.Run, ts time.Time) *carillonv1.RunResult {
			res := result(r, succeeded, "")
			res.FinishedAt = timestamppb.New(ts)
			if ts.IsZero() {
				res.FinishedAt = nil
			}
			return res
		}
		b.clock.Add(time.Minute)
		report("instance-a", at(future, now.Add(24*time.Hour)), at(past, now.Add(-24*time.Hour)), at(unset, time.Time{}))
		for _, w := range []struct {
			run  store.Run
			want time.Time
		}{{future, now.Add(time.Minute)}, {past, now}, {unset, now.Add(time.Minute)}} {
			if got, _ := b.store.Runs.Get(ctx, w.run.ID); !got.FinishedAt.Equal(w.want) {
				t.Errorf("run %d finished at %v, want %v", w.run.ID, got.FinishedAt, w.want)
			}
		}
	})
}

// TestResultsFromExecutorRestartedElsewhere: over PostgreSQL, an executor
// that restarted and registered through another admin, which this admin
// has not followed yet, has its results taken at once: this admin's
// cache of the registrations (read by an earlier result) is read again
// before it refuses a result, and the process the executor replaced is
// refused.
func TestResultsFromExecutorRestartedElsewhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, dbtest.Postgres, "")
	now := b.clock.Now()
	const a = "http://10.0.0.1:9999"
	g, j := appJob(t, b)
	register := func(st *store.Store, instance string) {
		t.Helper()
		if _, err := st.Registry.Register(ctx, "app", a, instance, 0, now); err != nil {
			t.Fatal(err)
		}
	}
	register(b.store, "before")
	runs, err := b.store.Runs.Insert(ctx, slices.Repeat([]store.Run{{JobID: j.ID, GroupID: g.ID, ExecutorAddress: a, ShardTotal: 1,
		TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, ScheduledAt: now, TriggeredAt: now,
		Status: carillonv1.RunStatus_RUN_STATUS_RUNNING}}, 3))
	if err != nil {
		t.Fatal(err)
	}
	report := func(instance string, r store.Run) string {
		t.Helper()
		res, err := b.registry.ReportResults(ctx, &carillonv1.ReportResultsRequest{InstanceId: instance, Results: []*carillonv1.RunResult{
			{RunId: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: timestamppb.New(now)}}})
		if err != nil {
			t.Fatalf("ReportResults: %v", err)
		}
		return res.GetOutcomes()[0].GetCode()
	}
	if code := report("before", runs[0]); code != "" {
		t.Fatalf("the registered process's result: %q, want it taken", code)
	}
	register(dbtest.Open(t, b.db), "after") // through another admin
	if code := report("after", runs[1]); code != "" {
		t.Errorf("the restarted process's result: %q, want it taken", code)
	}
	if code := report("before", runs[2]); code != "permission_denied" {
		t.Errorf("the replaced process's result: %q, want permission_denied", code)
	}
}

// appJob stores a group of app name "app" and a job of it that is never
// scheduled.
func appJob(t *testing.T, b *bundle) (store.Group, store.Job) {
	t.Helper()
	ctx, now := context.Background(), b.clock.Now()
	g, err := b.store.Groups.Create(ctx, store.Group{AppName: "app", Title: "app"}, now)
	if err != nil {
		t.Fatal(err)
	}
	j, err := b.store.Jobs.Create(ctx, store.Job{GroupID: g.ID, Description: "j", Handler: "h",
		ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}, now)
	if err != nil {
		t.Fatal(err)
	}
	return g, j
}
