package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestAlarmRetry: a failed try keeps the alarm PENDING, out of
// AlarmStore.Pending until its retry is due, then back with its tries and the
// channels that took it; the final outcome ends it.
func TestAlarmRetry(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, j := backendJob(t, be, time.Time{})
			r := pendingRun(j, t0)
			r.Status, r.AlarmStatus = carillonv1.RunStatus_RUN_STATUS_FAILED, carillonv1.AlarmStatus_ALARM_STATUS_PENDING
			runs, err := s.Runs.Insert(ctx, []store.Run{*r})
			if err != nil {
				t.Fatal(err)
			}
			id := runs[0].ID
			due := func(at time.Time) []store.PendingAlarm {
				t.Helper()
				pas, err := s.Alarms.Pending(ctx, at, 10)
				if err != nil {
					t.Fatal(err)
				}
				return pas
			}
			if pas := due(t0); len(pas) != 1 || pas[0].ID != id || pas[0].Try.Attempts != 0 || len(pas[0].Try.Sent) != 0 {
				t.Fatalf("due at first: %+v, want run %d with no tries", pas, id)
			}
			retryAt := t0.Add(time.Minute)
			try := store.AlarmTry{Attempts: 1, Sent: []string{"email"}}
			if err := s.Alarms.Retry(ctx, id, try, retryAt, "webhook: answered 500; retry 2 of 5 at 00:01"); err != nil {
				t.Fatal(err)
			}
			if pas := due(retryAt.Add(-time.Millisecond)); len(pas) != 0 {
				t.Fatalf("due before the retry's instant: %+v", pas)
			}
			run, err := s.Runs.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if run.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_PENDING || run.AlarmMessage != "webhook: answered 500; retry 2 of 5 at 00:01" {
				t.Errorf("run between tries: %s %q, want PENDING with the failure", run.AlarmStatus, run.AlarmMessage)
			}
			pas := due(retryAt)
			if len(pas) != 1 || pas[0].Try.Attempts != 1 || !slices.Equal(pas[0].Try.Sent, []string{"email"}) {
				t.Fatalf("due at the retry: %+v, want 1 try with email sent", pas)
			}
			if err := s.Alarms.Record(ctx, id, carillonv1.AlarmStatus_ALARM_STATUS_FAILED, "given up"); err != nil {
				t.Fatal(err)
			}
			if pas := due(retryAt.Add(time.Hour)); len(pas) != 0 {
				t.Fatalf("due after the final outcome: %+v", pas)
			}
			// A retry recorded after the final outcome (a second admin's
			// late try) does not bring the alarm back.
			if err := s.Alarms.Retry(ctx, id, try, retryAt, "late"); err != nil {
				t.Fatal(err)
			}
			if pas := due(retryAt.Add(time.Hour)); len(pas) != 0 {
				t.Fatalf("due after a late retry: %+v", pas)
			}
		})
	}
}

// TestAlarmRecordAll: RecordAll ends the alarms of the runs it names with
// one outcome, and no other.
func TestAlarmRecordAll(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, j := backendJob(t, be, time.Time{})
			var pending []store.Run
			for i := range 4 {
				r := pendingRun(j, t0.Add(time.Duration(i)*time.Second))
				r.Status, r.AlarmStatus = carillonv1.RunStatus_RUN_STATUS_FAILED, carillonv1.AlarmStatus_ALARM_STATUS_PENDING
				pending = append(pending, *r)
			}
			runs, err := s.Runs.Insert(ctx, pending)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Alarms.RecordAll(ctx, nil, carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED, "none"); err != nil {
				t.Fatal(err)
			}
			const msg = "no alarm: the job has no alarm e-mail or webhook, and the admin none"
			if err := s.Alarms.RecordAll(ctx, []int64{runs[0].ID, runs[2].ID, runs[3].ID}, carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED, msg); err != nil {
				t.Fatal(err)
			}
			pas, err := s.Alarms.Pending(ctx, t0.Add(time.Hour), 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(pas) != 1 || pas[0].ID != runs[1].ID {
				t.Errorf("pending after RecordAll: %+v, want run %d alone", pas, runs[1].ID)
			}
			for _, r := range []store.Run{runs[0], runs[2], runs[3]} {
				got, err := s.Runs.Get(ctx, r.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED || got.AlarmMessage != msg {
					t.Errorf("run %d: alarm %s %q, want UNSPECIFIED %q", r.ID, got.AlarmStatus, got.AlarmMessage, msg)
				}
			}
		})
	}
}

// TestWorkflowAlarmRetry is TestAlarmRetry for a workflow run's alarm
// (RetryWorkflow, RecordWorkflow), over both databases.
func TestWorkflowAlarmRetry(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, b := setup(t, be.DB(t))
		j := aJob(t, s, b)
		w, err := s.Workflows.Create(ctx, store.Workflow{GroupID: b.group.ID, Name: "one", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE,
			Nodes: []store.WorkflowNode{{Key: "only", JobID: j.ID}}}, t0)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := s.Workflows.Trigger(ctx, w.ID, carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, nil, t0)
		if err != nil {
			t.Fatal(err)
		}
		settleNode(t, s, byNode(t, ch.FollowUps, "only"), carillonv1.RunStatus_RUN_STATUS_FAILED, t0)
		id := ch.WorkflowRunID
		due := func(at time.Time) []store.PendingWorkflowAlarm {
			t.Helper()
			pas, err := s.Alarms.PendingWorkflows(ctx, at, 10)
			if err != nil {
				t.Fatal(err)
			}
			return pas
		}
		if pas := due(t0); len(pas) != 1 || pas[0].ID != id || pas[0].Try.Attempts != 0 || len(pas[0].Try.Sent) != 0 {
			t.Fatalf("due at first: %+v, want workflow run %d with no tries", pas, id)
		}
		retryAt := t0.Add(time.Minute)
		try := store.AlarmTry{Attempts: 2, Sent: []string{"email", "webhook"}}
		if err := s.Alarms.RetryWorkflow(ctx, id, try, retryAt, "chat: answered 500"); err != nil {
			t.Fatal(err)
		}
		if pas := due(retryAt.Add(-time.Millisecond)); len(pas) != 0 {
			t.Fatalf("due before the retry's instant: %+v", pas)
		}
		if wr := workflowRun(t, s, id); wr.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_PENDING || wr.AlarmMessage != "chat: answered 500" {
			t.Errorf("workflow run between tries: %s %q, want PENDING with the failure", wr.AlarmStatus, wr.AlarmMessage)
		}
		pas := due(retryAt)
		if len(pas) != 1 || pas[0].Try.Attempts != 2 || !slices.Equal(pas[0].Try.Sent, try.Sent) {
			t.Fatalf("due at the retry: %+v, want 2 tries with email and webhook sent", pas)
		}
		if err := s.Alarms.RecordWorkflow(ctx, id, carillonv1.AlarmStatus_ALARM_STATUS_FAILED, "given up"); err != nil {
			t.Fatal(err)
		}
		if wr := workflowRun(t, s, id); wr.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_FAILED || wr.AlarmMessage != "given up" {
			t.Errorf("recorded alarm: %s %q, want FAILED, given up", wr.AlarmStatus, wr.AlarmMessage)
		}
		// A retry recorded after the final outcome leaves it.
		if err := s.Alarms.RetryWorkflow(ctx, id, try, retryAt, "late"); err != nil {
			t.Fatal(err)
		}
		if pas := due(retryAt.Add(time.Hour)); len(pas) != 0 {
			t.Fatalf("due after a late retry: %+v", pas)
		}
		if wr := workflowRun(t, s, id); wr.AlarmMessage != "given up" {
			t.Errorf("alarm message after a late retry: %q, want given up", wr.AlarmMessage)
		}
	})
}

// TestJobWebhookFormat: a job's alarm webhook format, secret and template
// are stored, read back and replaced by UpdateJob.
func TestJobWebhookFormat(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			j := newJob(b.group.ID, time.Time{})
			j.AlarmWebhookURL, j.AlarmWebhookFormat = "https://oapi.dingtalk.com/robot/send?access_token=x", carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_DINGTALK
			j.AlarmWebhookSecret = "SEC123"
			j, err := s.Jobs.Create(ctx, j, t0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Jobs.Get(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.AlarmWebhookFormat != carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_DINGTALK || got.AlarmWebhookSecret != "SEC123" || got.AlarmWebhookTemplate != "" {
				t.Fatalf("read back %s %q %q", got.AlarmWebhookFormat, got.AlarmWebhookSecret, got.AlarmWebhookTemplate)
			}
			got.AlarmWebhookFormat, got.AlarmWebhookSecret, got.AlarmWebhookTemplate = carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_TEMPLATE, "", "{{.Status}}"
			if _, err := s.Jobs.Update(ctx, got, false, t0.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			if got, err = s.Jobs.Get(ctx, j.ID); err != nil {
				t.Fatal(err)
			}
			if got.AlarmWebhookFormat != carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_TEMPLATE || got.AlarmWebhookSecret != "" || got.AlarmWebhookTemplate != "{{.Status}}" {
				t.Fatalf("after update %s %q %q", got.AlarmWebhookFormat, got.AlarmWebhookSecret, got.AlarmWebhookTemplate)
			}
		})
	}
}
