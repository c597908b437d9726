package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// claimRun claims one pending run with ClaimRuns; ok is false when it was
// not pending.
func claimRun(ctx context.Context, s *store.Store, id int64, trigger carillonv1.TriggerType, now time.Time) (store.Run, bool, error) {
	runs, err := s.Fires.ClaimRuns(ctx, []store.RunClaim{{RunID: id, TriggerType: trigger}}, now)
	if err != nil || len(runs) == 0 {
		return store.Run{}, false, err
	}
	return runs[0], true, nil
}

// running claims a pending run of j for instant at and returns it running.
func running(t *testing.T, s *store.Store, j store.Job, at time.Time, shard, total int32) store.Run {
	t.Helper()
	r := *pendingRun(j, at)
	r.ShardIndex, r.ShardTotal = shard, total
	runs, err := s.Runs.Insert(context.Background(), []store.Run{r})
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := claimRun(context.Background(), s, runs[0].ID, carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, at)
	if err != nil || !ok {
		t.Fatalf("claim: ok %v err %v", ok, err)
	}
	return got
}

func settle(t *testing.T, s *store.Store, r store.Run, status carillonv1.RunStatus, at time.Time) store.Settled {
	t.Helper()
	out, err := s.Runs.Settle(context.Background(), followup.Policy{}, []store.Result{{RunID: r.ID, Status: status, FinishedAt: at, Message: status.String()}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRetries(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()
			s, b := setup(t, newDB(t))
			j := newJob(b.group.ID, time.Time{})
			j.RetryCount, j.RetryDelaySeconds, j.RetryBackoff = 3, 5, true
			j.AlarmEmails = []string{"ops@example.com"}
			j, _ = s.Jobs.Create(ctx, j, t0)

			r := running(t, s, j, t0, 0, 1)
			finish := t0
			for attempt, wantDelay := range []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second} {
				finish = finish.Add(time.Minute)
				out := settle(t, s, r, carillonv1.RunStatus_RUN_STATUS_FAILED, finish)
				if len(out.FollowUps) != 1 {
					t.Fatalf("attempt %d: %d follow-ups, want one retry", attempt, len(out.FollowUps))
				}
				retry := out.FollowUps[0]
				if retry.Attempt != int32(attempt+1) || retry.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_RETRY ||
					retry.Status != carillonv1.RunStatus_RUN_STATUS_PENDING || !retry.ScheduledAt.Equal(t0) ||
					!retry.DueAt.Equal(finish.Add(wantDelay)) {
					t.Fatalf("retry after attempt %d = %+v; want attempt %d, RETRY, PENDING, scheduled %v, due %v",
						attempt, retry, attempt+1, t0, finish.Add(wantDelay))
				}
				if got, _ := s.Runs.Get(ctx, r.ID); got.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED {
					t.Errorf("attempt %d (retried) has alarm %s, want none", attempt, got.AlarmStatus)
				}
				got, ok, err := claimRun(ctx, s, retry.ID, carillonv1.TriggerType_TRIGGER_TYPE_RETRY, retry.DueAt)
				if err != nil || !ok {
					t.Fatal(err)
				}
				r = got
			}
			// The last attempt fails for good: no retry, an alarm.
			out := settle(t, s, r, carillonv1.RunStatus_RUN_STATUS_TIMED_OUT, finish.Add(time.Hour))
			if len(out.FollowUps) != 0 {
				t.Fatalf("after the last attempt: %d follow-ups, want none", len(out.FollowUps))
			}
			alarms, _ := s.Alarms.Pending(ctx, finish.Add(time.Hour), 10)
			if len(alarms) != 1 || alarms[0].ID != r.ID {
				t.Errorf("pending alarms = %v, want only the last attempt %d", alarms, r.ID)
			}
		})
	}
}

// TestRetriesTogether: the retries of runs settled in one batch, of jobs
// of both kinds of store (FIX_DELAY's at once, the others together), are
// each their run's next attempt, stored whole and due after its delay;
// the FIX_DELAY job waits for its retry.
func TestRetriesTogether(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			var runs []store.Run
			for i, kind := range []carillonv1.ScheduleType{carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY,
				carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE} {
				j := newJob(b.group.ID, time.Time{})
				j.ScheduleType, j.RetryCount, j.RetryDelaySeconds, j.Param = kind, 2, int32(i+1), fmt.Sprintf("param %d", i)
				j, err := s.Jobs.Create(ctx, j, t0)
				if err != nil {
					t.Fatal(err)
				}
				r := *pendingRun(j, t0)
				r.Param = j.Param
				stored, err := s.Runs.Insert(ctx, []store.Run{r})
				if err != nil {
					t.Fatal(err)
				}
				got, ok, err := claimRun(ctx, s, stored[0].ID, carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, t0)
				if err != nil || !ok {
					t.Fatalf("claim: ok %v err %v", ok, err)
				}
				runs = append(runs, got)
			}
			finish := t0.Add(time.Minute)
			results := make([]store.Result, len(runs))
			for i, r := range runs {
				results[i] = store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_FAILED, FinishedAt: finish, Message: "exit 1"}
			}
			out, err := s.Runs.Settle(ctx, followup.Policy{}, results)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.FollowUps) != len(runs) {
				t.Fatalf("%d follow-ups, want a retry of each of %d runs", len(out.FollowUps), len(runs))
			}
			byRun := map[int64]store.Run{}
			for _, retry := range out.FollowUps {
				stored, err := s.Runs.Get(ctx, retry.ID)
				if err != nil {
					t.Fatalf("retry %d not stored: %v", retry.ID, err)
				}
				for _, r := range runs {
					if r.JobID == retry.JobID {
						byRun[r.ID] = stored
					}
				}
			}
			for i, r := range runs {
				retry, ok := byRun[r.ID]
				if !ok {
					t.Errorf("no retry of run %d", r.ID)
					continue
				}
				if retry.ID <= r.ID || retry.Attempt != 1 || retry.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_RETRY ||
					retry.Status != carillonv1.RunStatus_RUN_STATUS_PENDING || retry.Param != r.Param || retry.Handler != r.Handler ||
					!retry.ScheduledAt.Equal(r.ScheduledAt) || !retry.DueAt.Equal(finish.Add(time.Duration(i+1)*time.Second)) ||
					retry.Message != "" || !retry.FinishedAt.IsZero() {
					t.Errorf("retry of run %d = %+v; want attempt 1, RETRY, PENDING, its param, scheduled %v, due %v", r.ID, retry, r.ScheduledAt,
						finish.Add(time.Duration(i+1)*time.Second))
				}
			}
			if j, err := s.Jobs.Get(ctx, runs[1].JobID); err != nil || !j.NextFireAt.IsZero() {
				t.Errorf("FIX_DELAY job with its retry pending: next fire %v (%v), want none", j.NextFireAt, err)
			}
		})
	}
}

// TestFollowUpsTogether: the runs that follow a batch, children of two
// parents and a retry, are stored together, each as it would be alone.
func TestFollowUpsTogether(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			create := func(edit func(*store.Job)) store.Job {
				t.Helper()
				j := newJob(b.group.ID, time.Time{})
				edit(&j)
				j, err := s.Jobs.Create(ctx, j, t0)
				if err != nil {
					t.Fatal(err)
				}
				return j
			}
			var children []int64
			for range 4 {
				children = append(children, create(func(*store.Job) {}).ID)
			}
			parents := []store.Job{
				create(func(j *store.Job) { j.ChildJobIDs = children[:2] }),
				create(func(j *store.Job) { j.ChildJobIDs = children[2:] }),
			}
			failing := create(func(j *store.Job) { j.RetryCount = 1 })
			runs := []store.Run{running(t, s, parents[0], t0, 0, 1), running(t, s, parents[1], t0, 0, 1), running(t, s, failing, t0, 0, 1)}
			finish := t0.Add(time.Minute)
			out, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{
				{RunID: runs[0].ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: finish},
				{RunID: runs[1].ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: finish},
				{RunID: runs[2].ID, Status: carillonv1.RunStatus_RUN_STATUS_FAILED, FinishedAt: finish},
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.FollowUps) != 5 {
				t.Fatalf("%d follow-ups, want four children and a retry: %+v", len(out.FollowUps), out.FollowUps)
			}
			got := map[int64]store.Run{}
			for _, f := range out.FollowUps {
				r, err := s.Runs.Get(ctx, f.ID)
				if err != nil {
					t.Fatalf("follow-up %d not stored: %v", f.ID, err)
				}
				got[r.JobID] = r
			}
			for i, child := range children {
				parent := runs[i/2]
				r := got[child]
				if r.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_PARENT || r.Status != carillonv1.RunStatus_RUN_STATUS_PENDING ||
					r.TriggerMessage != fmt.Sprintf("child of job %d, run %d", parent.JobID, parent.ID) || !r.DueAt.Equal(finish) {
					t.Errorf("run of child job %d = %+v; want a PENDING PARENT run of run %d, due at its finish", child, r, parent.ID)
				}
			}
			if r := got[failing.ID]; r.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_RETRY || r.Attempt != 1 {
				t.Errorf("retry = %+v, want attempt 1 of job %d", r, failing.ID)
			}
		})
	}
}

// TestUnalarmed: a run that fails for good with no one to alarm (its job
// names no recipient, the admin none) is recorded so as it settles, with
// no alarm left to send; with the admin's own recipient it alarms.
func TestUnalarmed(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			j, err := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
			if err != nil {
				t.Fatal(err)
			}
			quiet, alarmed := running(t, s, j, t0, 0, 1), running(t, s, j, t0.Add(time.Second), 0, 1)
			for _, tc := range []struct {
				run    store.Run
				policy followup.Policy
			}{{quiet, followup.Policy{}}, {alarmed, followup.Policy{AdminAlarms: true}}} {
				if _, err := s.Runs.Settle(ctx, tc.policy, []store.Result{{RunID: tc.run.ID, Status: carillonv1.RunStatus_RUN_STATUS_FAILED,
					FinishedAt: t0.Add(time.Minute), Message: "exit 1"}}); err != nil {
					t.Fatal(err)
				}
			}
			if got, _ := s.Runs.Get(ctx, quiet.ID); got.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED || got.AlarmMessage != store.NoAlarmMessage {
				t.Errorf("run with no one to alarm: alarm %s %q, want UNSPECIFIED %q", got.AlarmStatus, got.AlarmMessage, store.NoAlarmMessage)
			}
			alarms, err := s.Alarms.Pending(ctx, t0.Add(time.Hour), 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(alarms) != 1 || alarms[0].ID != alarmed.ID {
				t.Errorf("pending alarms = %v, want run %d alone (the admin's recipient)", alarms, alarmed.ID)
			}
		})
	}
}

// TestRetryRendersAgain: the retry of a run whose template param was
// rendered carries the template, not the rendering: it is rendered again,
// for its own attempt.
func TestRetryRendersAgain(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			j := newJob(b.group.ID, time.Time{})
			j.RetryCount, j.ParamTemplate, j.Param = 1, true, "attempt {{.Attempt}}"
			j, err := s.Jobs.Create(ctx, j, t0)
			if err != nil {
				t.Fatal(err)
			}
			r := running(t, s, j, t0, 0, 1)
			if err := s.Runs.RenderParams(ctx, []store.Rendered{{RunID: r.ID, Param: "attempt 0"}}); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Runs.Get(ctx, r.ID); got.SentParam() != "attempt 0" {
				t.Fatalf("the first attempt's param %q, want its rendering", got.SentParam())
			}
			out := settle(t, s, r, carillonv1.RunStatus_RUN_STATUS_FAILED, t0.Add(time.Minute))
			if len(out.FollowUps) != 1 {
				t.Fatalf("%d follow-ups, want one retry", len(out.FollowUps))
			}
			retry, err := s.Runs.Get(ctx, out.FollowUps[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			if retry.RenderedParam != nil || retry.Param != r.Param || retry.Attempt != 1 {
				t.Errorf("the retry: param %q, rendered %v, attempt %d; want the first attempt's param (%q), not rendered yet, attempt 1",
					retry.Param, retry.RenderedParam, retry.Attempt, r.Param)
			}
		})
	}
}

// TestRetryIsTheRunAnew: a retry is its run as it was sent (job, group,
// handler, param, shard), read whole although a settle returns only
// some of a run's columns, with nothing of how it ran: no executor, start,
// outputs or messages.
func TestRetryIsTheRunAnew(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			j := newJob(b.group.ID, time.Time{})
			j.RetryCount, j.Handler = 1, "export"
			j, err := s.Jobs.Create(ctx, j, t0)
			if err != nil {
				t.Fatal(err)
			}
			r := *pendingRun(j, t0)
			r.Param, r.ShardIndex, r.ShardTotal = "--all", 1, 3
			stored, err := s.Runs.Insert(ctx, []store.Run{r})
			if err != nil {
				t.Fatal(err)
			}
			if r, _, err = claimRun(ctx, s, stored[0].ID, carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, t0); err != nil {
				t.Fatal(err)
			}
			out, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_FAILED,
				Message: "disk full", FinishedAt: t0.Add(time.Minute), StartedAt: t0.Add(time.Second), Outputs: map[string]string{"rows": "7"},
				Dispatch: &store.Dispatch{RunID: r.ID, ExecutorAddress: "http://127.0.0.1:9999", TriggerMessage: "routed FIRST", TimeoutSeconds: 30}}})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.FollowUps) != 1 {
				t.Fatalf("%d follow-ups, want one retry", len(out.FollowUps))
			}
			retry, err := s.Runs.Get(ctx, out.FollowUps[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			if retry.JobID != j.ID || retry.GroupID != b.group.ID || retry.Handler != "export" || retry.Param != "--all" ||
				retry.ShardIndex != 1 || retry.ShardTotal != 3 || !retry.ScheduledAt.Equal(t0) {
				t.Errorf("the retry: job %d, group %d, handler %q, param %q, shard %d/%d, scheduled %v; want the run's (%d, %d, export, --all, 1/3, %v)",
					retry.JobID, retry.GroupID, retry.Handler, retry.Param, retry.ShardIndex, retry.ShardTotal, retry.ScheduledAt,
					j.ID, b.group.ID, t0)
			}
			if retry.ExecutorAddress != "" || !retry.StartedAt.IsZero() || retry.Outputs != nil || retry.Message != "" || retry.TriggerMessage != "" {
				t.Errorf("the retry: executor %q, started %v, outputs %v, message %q, trigger message %q; want none of the first attempt's",
					retry.ExecutorAddress, retry.StartedAt, retry.Outputs, retry.Message, retry.TriggerMessage)
			}
			settled, err := s.Runs.Get(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if settled.Outputs["rows"] != "7" || settled.ExecutorAddress != "http://127.0.0.1:9999" || !settled.StartedAt.Equal(t0.Add(time.Second)) {
				t.Errorf("the settled run: outputs %v, executor %q, started %v; want its result's", settled.Outputs, settled.ExecutorAddress, settled.StartedAt)
			}
		})
	}
}

func TestKilledRunIsNotRetried(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			s, b := setup(t, newDB(t))
			j := newJob(b.group.ID, time.Time{})
			j.RetryCount = 2
			j, _ = s.Jobs.Create(context.Background(), j, t0)
			out := settle(t, s, running(t, s, j, t0, 0, 1), carillonv1.RunStatus_RUN_STATUS_KILLED, t0)
			if len(out.FollowUps) != 0 {
				t.Errorf("a killed run got %d follow-ups, want none", len(out.FollowUps))
			}
		})
	}
}

func TestChildrenAfterAllShards(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()
			s, b := setup(t, newDB(t))
			child, _ := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
			parent := newJob(b.group.ID, time.Time{})
			parent.ChildJobIDs, parent.RetryCount = []int64{child.ID}, 1
			parent, _ = s.Jobs.Create(ctx, parent, t0)

			shards := []store.Run{running(t, s, parent, t0, 0, 3), running(t, s, parent, t0, 1, 3), running(t, s, parent, t0, 2, 3)}
			if out := settle(t, s, shards[0], carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0); len(out.FollowUps) != 0 {
				t.Fatalf("children fired after 1 of 3 shards")
			}
			out := settle(t, s, shards[1], carillonv1.RunStatus_RUN_STATUS_FAILED, t0)
			if len(out.FollowUps) != 1 || out.FollowUps[0].TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_RETRY {
				t.Fatalf("failed shard: follow-ups %v, want its retry", out.FollowUps)
			}
			retry, _, _ := claimRun(ctx, s, out.FollowUps[0].ID, carillonv1.TriggerType_TRIGGER_TYPE_RETRY, t0)
			if out := settle(t, s, shards[2], carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0); len(out.FollowUps) != 0 {
				t.Fatalf("children fired while shard 1 was being retried")
			}
			out = settle(t, s, retry, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0.Add(time.Second))
			if len(out.FollowUps) != 1 {
				t.Fatalf("after every shard succeeded: %d follow-ups, want the child's run", len(out.FollowUps))
			}
			c := out.FollowUps[0]
			if c.JobID != child.ID || c.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_PARENT || c.Status != carillonv1.RunStatus_RUN_STATUS_PENDING {
				t.Errorf("child run = %+v, want a pending PARENT run of job %d", c, child.ID)
			}
		})
	}
}

// TestChildrenOnceWhenShardsSettleTogether settles every shard of a fire in
// one call (one executor's batch of results): the child job still gets one
// run, and a result repeated in the batch counts once.
func TestChildrenOnceWhenShardsSettleTogether(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()
			s, b := setup(t, newDB(t))
			child, _ := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
			parent := newJob(b.group.ID, time.Time{})
			parent.ChildJobIDs = []int64{child.ID}
			parent, _ = s.Jobs.Create(ctx, parent, t0)

			var results []store.Result
			for i := range int32(3) {
				r := running(t, s, parent, t0, i, 3)
				results = append(results, store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: t0.Add(time.Second)})
			}
			dup := results[1]
			dup.Status, dup.Message = carillonv1.RunStatus_RUN_STATUS_FAILED, "a later, different result"
			results = append(results, dup)
			out, err := s.Runs.Settle(ctx, followup.Policy{}, results)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Runs) != 3 {
				t.Errorf("settled %d runs, want the 3 shards once each", len(out.Runs))
			}
			for _, r := range out.Runs {
				if r.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
					t.Errorf("run %d (shard %d) settled %s, want the first result SUCCEEDED", r.ID, r.ShardIndex, r.Status)
				}
			}
			if len(out.FollowUps) != 1 || out.FollowUps[0].JobID != child.ID {
				t.Fatalf("follow-ups = %+v, want one run of child job %d", out.FollowUps, child.ID)
			}
		})
	}
}

func TestDeleteRuns(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()
			s, b := setup(t, newDB(t))
			j, _ := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
			for i := range 10 {
				settle(t, s, running(t, s, j, t0.Add(time.Duration(i)*time.Hour), 0, 1), carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0)
			}
			live := running(t, s, j, t0.Add(-time.Hour), 0, 1) // running: never deleted

			// A dry run counts what the deletes below delete, and deletes nothing.
			for _, tt := range []struct {
				sel  store.RunSelection
				want int64
			}{
				{store.RunSelection{JobID: j.ID, Before: t0.Add(3 * time.Hour)}, 3},
				{store.RunSelection{JobID: j.ID, KeepLast: 4}, 6},
				{store.RunSelection{JobID: j.ID, Before: t0.Add(3 * time.Hour), KeepLast: 8}, 2},
				{store.RunSelection{JobID: j.ID + 1}, 0},
			} {
				if n, err := s.Runs.CountSelection(ctx, tt.sel); err != nil || n != tt.want {
					t.Errorf("count %+v: %d, %v; want %d", tt.sel, n, err, tt.want)
				}
			}
			if runs, _ := s.Runs.List(ctx, store.RunFilter{JobID: j.ID}); len(runs) != 11 {
				t.Fatalf("%d runs after counting, want 11", len(runs))
			}

			n, err := s.Runs.Delete(ctx, store.RunSelection{JobID: j.ID, Before: t0.Add(3 * time.Hour)}, 2)
			if err != nil || n != 2 {
				t.Fatalf("first batch: %d, %v; want 2", n, err)
			}
			n, _ = s.Runs.Delete(ctx, store.RunSelection{JobID: j.ID, Before: t0.Add(3 * time.Hour)}, 100)
			if n != 1 {
				t.Fatalf("second batch: %d, want the 1 left before the cutoff", n)
			}
			n, _ = s.Runs.Delete(ctx, store.RunSelection{JobID: j.ID, KeepLast: 4}, 100)
			if n != 3 {
				t.Fatalf("keep last 4 of 7 settled: deleted %d, want 3", n)
			}
			runs, _ := s.Runs.List(ctx, store.RunFilter{JobID: j.ID})
			if len(runs) != 5 {
				t.Fatalf("%d runs left, want 4 kept plus the running one", len(runs))
			}
			if _, err := s.Runs.Get(ctx, live.ID); err != nil {
				t.Errorf("the running run was deleted: %v", err)
			}
		})
	}
}

func TestFixDelayWaitsForEveryShard(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()
			s, b := setup(t, newDB(t))
			j := newJob(b.group.ID, t0)
			j.ScheduleType, j.IntervalSeconds = carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY, 30
			j, _ = s.Jobs.Create(ctx, j, t0)
			if _, err := s.Fires.Claim(ctx, []store.Claim{{JobID: j.ID, Due: t0}}); err != nil { // next: none until the fire is done
				t.Fatal(err)
			}
			shards := []store.Run{running(t, s, j, t0, 0, 2), running(t, s, j, t0, 1, 2)}
			settle(t, s, shards[0], carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0.Add(5*time.Second))
			if got, _ := s.Jobs.Get(ctx, j.ID); !got.NextFireAt.IsZero() {
				t.Fatalf("next fire %v after 1 of 2 shards, want none yet", got.NextFireAt)
			}
			last := t0.Add(9 * time.Second)
			settle(t, s, shards[1], carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, last)
			if got, _ := s.Jobs.Get(ctx, j.ID); !got.NextFireAt.Equal(last.Add(30 * time.Second)) {
				t.Errorf("next fire %v, want the last shard's finish + 30 s = %v", got.NextFireAt, last.Add(30*time.Second))
			}
		})
	}
}

// TestSettleRecordsDispatch: a result may carry its run's dispatch, which
// is stored in the same write; without one, the recorded dispatch stays.
func TestSettleRecordsDispatch(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()
			s, b := setup(t, newDB(t))
			j, _ := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
			with, without := running(t, s, j, t0, 0, 1), running(t, s, j, t0.Add(time.Second), 0, 1)
			if _, err := s.Runs.RecordDispatches(ctx, followup.Policy{}, []store.Dispatch{{RunID: without.ID, ExecutorAddress: "http://before", ShardTotal: 1,
				TriggerMessage: "recorded", TimeoutSeconds: 3}}); err != nil {
				t.Fatal(err)
			}
			_, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{
				{RunID: with.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: t0,
					Dispatch: &store.Dispatch{RunID: with.ID, ExecutorAddress: "http://with", TriggerMessage: "sent with \"quotes\"", TimeoutSeconds: 9}},
				{RunID: without.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: t0},
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, tt := range []struct {
				id        int64
				addr, msg string
				timeout   int32
			}{{with.ID, "http://with", "sent with \"quotes\"", 9}, {without.ID, "http://before", "recorded", 3}} {
				r, _ := s.Runs.Get(ctx, tt.id)
				if r.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED || r.ExecutorAddress != tt.addr || r.TriggerMessage != tt.msg || r.TimeoutSeconds != tt.timeout {
					t.Errorf("run %d: %s on %q, %q, timeout %d; want SUCCEEDED on %q, %q, timeout %d",
						tt.id, r.Status, r.ExecutorAddress, r.TriggerMessage, r.TimeoutSeconds, tt.addr, tt.msg, tt.timeout)
				}
			}
		})
	}
}

// TestLateResult: a result from the executor replaces the admin's own
// settlement of a run (LOST here): the run takes the reported status and
// says what it replaced, the retry the admin's guess made is dropped
// before it runs, the alarm not sent yet is cancelled, and a success fires
// the children. A second result, or another guess of the admin's, changes
// nothing.
func TestLateResult(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()
			s, b := setup(t, newDB(t))
			child, _ := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
			j := newJob(b.group.ID, time.Time{})
			j.RetryCount, j.AlarmEveryFailure, j.ChildJobIDs = 1, true, []int64{child.ID}
			j.AlarmWebhookURL = "https://hooks.example.com/alarms"
			j, _ = s.Jobs.Create(ctx, j, t0)
			r := running(t, s, j, t0, 0, 1)

			lost, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_LOST, ByAdmin: true,
				Message: "lost: executor gone", FinishedAt: t0.Add(time.Minute)}})
			if err != nil {
				t.Fatal(err)
			}
			if len(lost.FollowUps) != 1 || lost.FollowUps[0].TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_RETRY {
				t.Fatalf("the admin's LOST made follow-ups %+v, want one retry", lost.FollowUps)
			}
			retry := lost.FollowUps[0]
			if got, _ := s.Runs.Get(ctx, r.ID); !got.AdminSettled || got.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_PENDING {
				t.Fatalf("after the admin's LOST: admin settled %v, alarm %s; want true, PENDING", got.AdminSettled, got.AlarmStatus)
			}

			late, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED,
				Message: "done", FinishedAt: t0.Add(2 * time.Minute)}})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := s.Runs.Get(ctx, r.ID)
			if got.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED || !got.LateResult || got.AdminSettled ||
				got.Message != "done (reported after the admin had settled the run LOST: lost: executor gone)" ||
				got.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED {
				t.Errorf("after the late result: %s %q late=%v admin=%v alarm %s; want SUCCEEDED, saying it replaced LOST, no alarm",
					got.Status, got.Message, got.LateResult, got.AdminSettled, got.AlarmStatus)
			}
			if got, _ := s.Runs.Get(ctx, retry.ID); got.Status != carillonv1.RunStatus_RUN_STATUS_SKIPPED {
				t.Errorf("the admin's retry is %s, want SKIPPED: the run did not fail", got.Status)
			}
			if len(late.FollowUps) != 1 || late.FollowUps[0].JobID != child.ID {
				t.Errorf("follow-ups of the late success %+v, want the child's run", late.FollowUps)
			}

			for _, again := range []store.Result{
				{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_FAILED, FinishedAt: t0.Add(3 * time.Minute)},
				{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_LOST, ByAdmin: true, FinishedAt: t0.Add(3 * time.Minute)},
			} {
				if _, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{again}); err != nil {
					t.Fatal(err)
				}
				if got, _ := s.Runs.Get(ctx, r.ID); got.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
					t.Errorf("result %+v after the late result changed the run to %s", again, got.Status)
				}
			}
		})
	}
}

// TestResultChecked: a result's finished at is never before its run was
// sent (the run's triggered_at, or the instant the dispatch recorded with
// the result says), and a later result that says something else than the
// settled run is noted in its message, once, where a repeat is not.
func TestResultChecked(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			j, _ := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
			early, late := running(t, s, j, t0, 0, 1), running(t, s, j, t0.Add(time.Second), 0, 1)
			sent := t0.Add(10 * time.Second) // the late run's send, recorded with its result
			succeeded := carillonv1.RunStatus_RUN_STATUS_SUCCEEDED
			if _, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{
				{RunID: early.ID, Status: succeeded, Message: "ok", FinishedAt: t0.Add(-time.Hour)},
				{RunID: late.ID, Status: succeeded, Message: "ok", FinishedAt: t0.Add(5 * time.Second),
					Dispatch: &store.Dispatch{RunID: late.ID, ExecutorAddress: "http://e", TriggeredAt: sent}},
			}); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Runs.Get(ctx, early.ID); !got.FinishedAt.Equal(early.TriggeredAt) {
				t.Errorf("finished an hour before its send: finished at %v, want its triggered_at %v", got.FinishedAt, early.TriggeredAt)
			}
			if got, _ := s.Runs.Get(ctx, late.ID); !got.FinishedAt.Equal(sent) {
				t.Errorf("finished before the send its dispatch recorded: finished at %v, want %v", got.FinishedAt, sent)
			}

			// Repeats of the result change nothing; a different result is
			// noted once; what would outgrow the message is not.
			failed := store.Result{RunID: early.ID, Status: carillonv1.RunStatus_RUN_STATUS_FAILED, Message: "boom",
				FinishedAt: t0.Add(time.Minute)}
			note := " [a later result was not applied: FAILED at " + t0.Add(time.Minute).Format(time.RFC3339Nano) + ": boom]"
			for i, tt := range []struct {
				res  store.Result
				want string
			}{
				{store.Result{RunID: early.ID, Status: succeeded, Message: "ok", FinishedAt: t0.Add(time.Minute)}, "ok"},
				{failed, "ok" + note},
				{failed, "ok" + note},
				{store.Result{RunID: early.ID, Status: succeeded, Message: "ok", FinishedAt: t0.Add(time.Minute)}, "ok" + note},
				{store.Result{RunID: early.ID, Status: carillonv1.RunStatus_RUN_STATUS_LOST, ByAdmin: true, FinishedAt: t0.Add(time.Minute)}, "ok" + note},
				{store.Result{RunID: early.ID, Status: succeeded, Message: "ok, but " + strings.Repeat("x", 300)},
					"ok" + note + " [a later result was not applied: SUCCEEDED: ok, but " + strings.Repeat("x", 192) + "…]"},
			} {
				if _, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{tt.res}); err != nil {
					t.Fatal(err)
				}
				got, _ := s.Runs.Get(ctx, early.ID)
				if got.Status != succeeded || got.Message != tt.want || !got.FinishedAt.Equal(early.TriggeredAt) {
					t.Errorf("after result %d: %s %q finished %v; want SUCCEEDED %q finished %v", i, got.Status, got.Message, got.FinishedAt, tt.want, early.TriggeredAt)
				}
			}
			// A message near its bound takes no more notes.
			full := running(t, s, j, t0.Add(2*time.Second), 0, 1)
			long := strings.Repeat("z", 16300)
			settle(t, s, full, succeeded, t0.Add(time.Minute)) // message "RUN_STATUS_SUCCEEDED"
			if _, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: full.ID, Status: carillonv1.RunStatus_RUN_STATUS_FAILED, Message: long}}); err != nil {
				t.Fatal(err)
			}
			got, _ := s.Runs.Get(ctx, full.ID)
			if !strings.HasPrefix(got.Message, "RUN_STATUS_SUCCEEDED [a later result was not applied: FAILED: zzz") || len(got.Message) > 300 {
				t.Fatalf("a later result's note: %.300q, want its message cut to %d characters", got.Message, 200)
			}
			for i := range 100 {
				if _, err := s.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: full.ID, Status: carillonv1.RunStatus_RUN_STATUS_FAILED,
					Message: fmt.Sprintf("%d %s", i, long)}}); err != nil {
					t.Fatal(err)
				}
			}
			if got, _ := s.Runs.Get(ctx, full.ID); len([]rune(got.Message)) > 16384 || len([]rune(got.Message)) < 16000 {
				t.Errorf("after 100 different later results the message has %d characters, want notes up to 16,384", len([]rune(got.Message)))
			}
		})
	}
}

// TestLastRuns: the newest run of each job asked for, of a group when
// one is named; none for a job without runs.
func TestLastRuns(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			j1, _ := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
			j2, _ := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
			j3, _ := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
			settle(t, s, running(t, s, j1, t0, 0, 1), carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0)
			failed := running(t, s, j1, t0.Add(time.Hour), 0, 1)
			settle(t, s, failed, carillonv1.RunStatus_RUN_STATUS_FAILED, t0.Add(time.Hour))
			live := running(t, s, j2, t0, 0, 1)
			last, err := s.Runs.Last(ctx, []int64{j1.ID, j2.ID, j3.ID}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(last) != 2 || last[j1.ID].ID != failed.ID || last[j1.ID].Status != carillonv1.RunStatus_RUN_STATUS_FAILED ||
				last[j2.ID].ID != live.ID || last[j2.ID].Status != carillonv1.RunStatus_RUN_STATUS_RUNNING {
				t.Errorf("last runs: %+v", last)
			}
			if last, err := s.Runs.Last(ctx, []int64{j1.ID}, b.group.ID+1); err != nil || len(last) != 0 {
				t.Errorf("last runs in another group: %v, %v", last, err)
			}
		})
	}
}

// TestSettleManyAtOnce settles 85 results in one call (over SQLite, in
// statements of 64, 16, 4 and 1 results), one of them twice: each run
// takes its own result, message, finish, outputs and start, and each is
// returned once.
func TestSettleManyAtOnce(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			j, _ := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
			const n = 85
			var results []store.Result
			for i := range n {
				r := running(t, s, j, t0.Add(time.Duration(i)*time.Second), 0, 1)
				status := carillonv1.RunStatus_RUN_STATUS_SUCCEEDED
				if i%3 == 0 {
					status = carillonv1.RunStatus_RUN_STATUS_FAILED
				}
				results = append(results, store.Result{RunID: r.ID, Status: status, Message: fmt.Sprintf("result %d", i),
					FinishedAt: t0.Add(time.Hour + time.Duration(i)*time.Millisecond), StartedAt: t0.Add(time.Duration(i) * time.Second),
					Outputs: map[string]string{"i": fmt.Sprint(i)}})
			}
			results = append(results, results[7]) // twice
			settled, err := s.Runs.Settle(ctx, followup.Policy{}, results)
			if err != nil {
				t.Fatal(err)
			}
			if len(settled.Runs) != n {
				t.Fatalf("%d runs settled, want %d", len(settled.Runs), n)
			}
			for _, res := range results[:n] {
				r, err := s.Runs.Get(ctx, res.RunID)
				if err != nil {
					t.Fatal(err)
				}
				if r.Status != res.Status || r.Message != res.Message || !r.FinishedAt.Equal(res.FinishedAt) ||
					!r.StartedAt.Equal(res.StartedAt) || r.Outputs["i"] != res.Outputs["i"] {
					t.Errorf("run %d: %s %q finished %v started %v outputs %v; want %s %q %v %v %v", r.ID, r.Status, r.Message,
						r.FinishedAt, r.StartedAt, r.Outputs, res.Status, res.Message, res.FinishedAt, res.StartedAt, res.Outputs)
				}
			}
		})
	}
}
