package followup_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/followup"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

const (
	failed    = carillonv1.RunStatus_RUN_STATUS_FAILED
	timedOut  = carillonv1.RunStatus_RUN_STATUS_TIMED_OUT
	lost      = carillonv1.RunStatus_RUN_STATUS_LOST
	succeeded = carillonv1.RunStatus_RUN_STATUS_SUCCEEDED
	killed    = carillonv1.RunStatus_RUN_STATUS_KILLED
	skipped   = carillonv1.RunStatus_RUN_STATUS_SKIPPED

	cron     = carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE
	retry    = carillonv1.TriggerType_TRIGGER_TYPE_RETRY
	manual   = carillonv1.TriggerType_TRIGGER_TYPE_MANUAL
	api      = carillonv1.TriggerType_TRIGGER_TYPE_API
	parent   = carillonv1.TriggerType_TRIGGER_TYPE_PARENT
	misfire  = carillonv1.TriggerType_TRIGGER_TYPE_MISFIRE
	fixDelay = carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY
	fixRate  = carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE
)

func TestDecide(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		job  followup.Job
		run  followup.Run
		want followup.Decision
	}{
		{"success, nothing follows", followup.Job{}, followup.Run{Status: succeeded, TriggerType: cron, FinishedAt: at}, followup.Decision{}},
		{"success fires children", followup.Job{HasChildren: true}, followup.Run{Status: succeeded, TriggerType: cron, FinishedAt: at},
			followup.Decision{FireChildren: true}},
		{"failure without retries alarms", followup.Job{Alarmed: true}, followup.Run{Status: failed, TriggerType: cron, FinishedAt: at},
			followup.Decision{Alarm: true}},
		{"failure with retries left retries after the default delay, no alarm", followup.Job{RetryCount: 2},
			followup.Run{Status: failed, TriggerType: cron, FinishedAt: at},
			followup.Decision{RetryAt: at.Add(followup.RetryDelayDefault)}},
		{"timed out retries too", followup.Job{RetryCount: 1, RetryDelaySeconds: 3},
			followup.Run{Status: timedOut, TriggerType: cron, FinishedAt: at}, followup.Decision{RetryAt: at.Add(3 * time.Second)}},
		{"lost retries too", followup.Job{RetryCount: 1, RetryDelaySeconds: 3},
			followup.Run{Status: lost, TriggerType: cron, FinishedAt: at}, followup.Decision{RetryAt: at.Add(3 * time.Second)}},
		{"the last attempt alarms", followup.Job{RetryCount: 2, Alarmed: true}, followup.Run{Status: failed, TriggerType: retry, Attempt: 2, FinishedAt: at},
			followup.Decision{Alarm: true}},
		{"alarm on every failure, with the retry", followup.Job{RetryCount: 2, AlarmEveryFailure: true, RetryDelaySeconds: 1, Alarmed: true},
			followup.Run{Status: failed, TriggerType: cron, FinishedAt: at}, followup.Decision{RetryAt: at.Add(time.Second), Alarm: true}},
		{"backoff doubles per attempt", followup.Job{RetryCount: 5, RetryDelaySeconds: 10, RetryBackoff: true},
			followup.Run{Status: failed, TriggerType: retry, Attempt: 2, FinishedAt: at}, followup.Decision{RetryAt: at.Add(40 * time.Second)}},
		{"backoff is capped", followup.Job{RetryCount: 50, RetryDelaySeconds: 600, RetryBackoff: true},
			followup.Run{Status: failed, TriggerType: retry, Attempt: 20, FinishedAt: at}, followup.Decision{RetryAt: at.Add(followup.RetryDelayMax)}},
		{"killed: nothing follows", followup.Job{RetryCount: 3, HasChildren: true}, followup.Run{Status: killed, TriggerType: cron, FinishedAt: at},
			followup.Decision{}},
		{"FIX_DELAY fire: next fire after the interval", followup.Job{ScheduleType: fixDelay, IntervalSeconds: 30},
			followup.Run{Status: succeeded, TriggerType: cron, FinishedAt: at}, followup.Decision{NextFireAt: at.Add(30 * time.Second)}},
		{"FIX_DELAY retry that fails for good: alarm and next fire", followup.Job{ScheduleType: fixDelay, IntervalSeconds: 30, RetryCount: 1, Alarmed: true},
			followup.Run{Status: failed, TriggerType: retry, Attempt: 1, FinishedAt: at},
			followup.Decision{Alarm: true, NextFireAt: at.Add(30 * time.Second)}},
		{"FIX_DELAY misfire run counts", followup.Job{ScheduleType: fixDelay, IntervalSeconds: 5},
			followup.Run{Status: skipped, TriggerType: misfire, FinishedAt: at}, followup.Decision{NextFireAt: at.Add(5 * time.Second)}},
		{"FIX_DELAY manual run: no next fire", followup.Job{ScheduleType: fixDelay, IntervalSeconds: 30},
			followup.Run{Status: succeeded, TriggerType: manual, FinishedAt: at}, followup.Decision{}},
		{"FIX_DELAY API run: no next fire", followup.Job{ScheduleType: fixDelay, IntervalSeconds: 30},
			followup.Run{Status: succeeded, TriggerType: api, FinishedAt: at}, followup.Decision{}},
		{"FIX_DELAY child run: no next fire", followup.Job{ScheduleType: fixDelay, IntervalSeconds: 30},
			followup.Run{Status: succeeded, TriggerType: parent, FinishedAt: at}, followup.Decision{}},
		{"FIX_RATE: no next fire from settling", followup.Job{ScheduleType: fixRate, IntervalSeconds: 30},
			followup.Run{Status: succeeded, TriggerType: cron, FinishedAt: at}, followup.Decision{}},
		{"late success: drop the guess's retry, cancel its alarm, fire children", followup.Job{RetryCount: 3, HasChildren: true, ScheduleType: fixDelay},
			followup.Run{Status: succeeded, TriggerType: cron, FinishedAt: at, LateResult: true},
			followup.Decision{DropRetry: true, CancelAlarm: true, FireChildren: true}},
		{"late failure: drop the guess's retry only", followup.Job{RetryCount: 3, HasChildren: true},
			followup.Run{Status: failed, TriggerType: cron, FinishedAt: at, LateResult: true}, followup.Decision{DropRetry: true}},
		{"workflow node: no children, no FIX_DELAY next fire", followup.Job{HasChildren: true, ScheduleType: fixDelay, IntervalSeconds: 30},
			followup.Run{Status: succeeded, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_WORKFLOW, FinishedAt: at, Workflow: true}, followup.Decision{}},
		{"workflow node's retry that fails for good: alarm only", followup.Job{RetryCount: 1, ScheduleType: fixDelay, IntervalSeconds: 30, Alarmed: true},
			followup.Run{Status: failed, TriggerType: retry, Attempt: 1, FinishedAt: at, Workflow: true}, followup.Decision{Alarm: true}},
		{"workflow node's late success: no children", followup.Job{RetryCount: 3, HasChildren: true},
			followup.Run{Status: succeeded, TriggerType: retry, FinishedAt: at, LateResult: true, Workflow: true},
			followup.Decision{DropRetry: true, CancelAlarm: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, followup.Policy{}.Decide(tc.job, tc.run)); diff != "" {
				t.Errorf("Decide(%+v, %+v) (-want +got):\n%s", tc.job, tc.run, diff)
			}
		})
	}
}

// TestDecideRecipients: a failure that alarms is Unalarmed where neither
// its job nor the admin names anyone to alarm.
func TestDecideRecipients(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	run := followup.Run{Status: failed, TriggerType: cron, FinishedAt: at}
	for _, tc := range []struct {
		name   string
		policy followup.Policy
		job    followup.Job
		want   followup.Decision
	}{
		{"no one to alarm", followup.Policy{}, followup.Job{}, followup.Decision{Unalarmed: true}},
		{"the job's recipients", followup.Policy{}, followup.Job{Alarmed: true}, followup.Decision{Alarm: true}},
		{"the admin's recipient", followup.Policy{AdminAlarms: true}, followup.Job{}, followup.Decision{Alarm: true}},
		{"a retry follows, no alarm either way", followup.Policy{}, followup.Job{RetryCount: 1},
			followup.Decision{RetryAt: at.Add(followup.RetryDelayDefault)}},
		{"every failure, no one to alarm", followup.Policy{}, followup.Job{RetryCount: 1, AlarmEveryFailure: true},
			followup.Decision{RetryAt: at.Add(followup.RetryDelayDefault), Unalarmed: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.policy.Decide(tc.job, run)); diff != "" {
				t.Errorf("Decide(%+v) (-want +got):\n%s", tc.job, diff)
			}
		})
	}
}

func TestRetryDelayFunc(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	p := followup.Policy{RetryDelay: func(_ followup.Job, attempt int32) time.Duration { return time.Duration(attempt+1) * time.Minute }}
	got := p.Decide(followup.Job{RetryCount: 5}, followup.Run{Status: failed, TriggerType: retry, Attempt: 2, FinishedAt: at})
	if want := at.Add(3 * time.Minute); !got.RetryAt.Equal(want) {
		t.Errorf("RetryAt = %v, want %v (the policy's RetryDelay)", got.RetryAt, want)
	}
}

func TestDefaultRetryDelay(t *testing.T) {
	for _, tc := range []struct {
		job     followup.Job
		attempt int32
		want    time.Duration
	}{
		{followup.Job{}, 0, followup.RetryDelayDefault},
		{followup.Job{}, 4, followup.RetryDelayDefault},
		{followup.Job{RetryDelaySeconds: 7}, 3, 7 * time.Second},
		{followup.Job{RetryBackoff: true}, 0, followup.RetryDelayDefault},
		{followup.Job{RetryBackoff: true}, 1, 2 * followup.RetryDelayDefault},
		{followup.Job{RetryDelaySeconds: 1, RetryBackoff: true}, 3, 8 * time.Second},
		{followup.Job{RetryDelaySeconds: 1800, RetryBackoff: true}, 1, followup.RetryDelayMax},
		{followup.Job{RetryDelaySeconds: 1, RetryBackoff: true}, 1 << 30, followup.RetryDelayMax},
	} {
		if got := followup.DefaultRetryDelay(tc.job, tc.attempt); got != tc.want {
			t.Errorf("DefaultRetryDelay(%+v, %d) = %v, want %v", tc.job, tc.attempt, got, tc.want)
		}
	}
}
