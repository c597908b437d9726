// Package followup is the policy for what follows a settled run: its retry
// and the retry's delay, its alarm, its child jobs' runs, and a FIX_DELAY
// job's next fire. It is pure: it decides from a job's settings and a run's
// outcome, and the store carries out its Decision in the transaction that
// settles the run. Every store backend shares it.
//
// It plays the part of river's ClientRetryPolicy and asynq's
// RetryDelayFunc, for everything that follows a run, not only retries.
package followup

import (
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

const (
	// RetryDelayDefault is the delay before a retry when a job sets none.
	RetryDelayDefault = 10 * time.Second
	// RetryDelayMax caps the exponential backoff of retries.
	RetryDelayMax = time.Hour
)

// Job is what the policy reads of a job's settings.
type Job struct {
	// RetryCount is how many times a failed run is retried.
	RetryCount int32
	// RetryDelaySeconds is the delay before a retry; 0 means
	// RetryDelayDefault.
	RetryDelaySeconds int32
	// RetryBackoff doubles the delay after each failed attempt, up to
	// RetryDelayMax.
	RetryBackoff bool
	// AlarmEveryFailure alarms on every failed attempt, not only the last.
	AlarmEveryFailure bool
	// Alarmed says the job names recipients of its alarms (e-mails or a
	// webhook).
	Alarmed bool
	// HasChildren says the job has child jobs, fired when a fire succeeds.
	HasChildren bool
	// ScheduleType is the job's schedule; FIX_DELAY waits for its fires.
	ScheduleType carillonv1.ScheduleType
	// IntervalSeconds is a FIX_DELAY job's delay between fires.
	IntervalSeconds int32
}

// Run is a run as it was just settled.
type Run struct {
	// Status is the run's final status.
	Status carillonv1.RunStatus
	// TriggerType is what created the run.
	TriggerType carillonv1.TriggerType
	// Attempt counts from 0 for a fire's first run.
	Attempt int32
	// FinishedAt is when the run finished.
	FinishedAt time.Time
	// LateResult says the executor's result replaced the admin's own
	// settlement (a run the admin judged lost or timed out).
	LateResult bool
	// Workflow says the run is a workflow node's (or its retry): the
	// workflow decides what runs after it, so the job's children do not
	// fire, and it is no fire of the job's own schedule (FIX_DELAY).
	Workflow bool
}

// Decision is what follows a settled run. The zero Decision is "nothing".
type Decision struct {
	// RetryAt, if not zero, is when the run's retry (attempt+1) is due.
	RetryAt time.Time
	// Alarm marks the run for an alarm.
	Alarm bool
	// Unalarmed says the run would alarm, but neither its job nor the
	// admin names anyone to alarm: it is recorded so, with nothing to
	// send (a group whose executors are all gone fails every fire, and
	// alarms that go nowhere are writes the claims need).
	Unalarmed bool
	// DropRetry skips the pending retry that the admin's own settlement
	// created, when a late result says the run did not fail that way.
	DropRetry bool
	// CancelAlarm cancels an alarm not sent yet, for a late success.
	CancelAlarm bool
	// FireChildren fires the job's children once every shard of the run's
	// fire has succeeded (the store counts the shards; each fire's
	// children fire once).
	FireChildren bool
	// NextFireAt, if not zero, is a FIX_DELAY job's next fire, set once
	// nothing of the run's fire is left running or pending.
	NextFireAt time.Time
}

// RetryDelayFunc returns the wait before the retry that follows the given
// attempt (0 for a fire's first run) of job.
type RetryDelayFunc func(job Job, attempt int32) time.Duration

// Policy decides what follows a settled run. The zero Policy is Carillon's
// default.
type Policy struct {
	// RetryDelay defaults to DefaultRetryDelay.
	RetryDelay RetryDelayFunc
	// AdminAlarms says the admin alarms a recipient of its own for every
	// run (its --alarm-webhook): a job that names none alarms too.
	AdminAlarms bool
}

// Decide returns what follows run r of job:
//   - a failed, timed-out or lost attempt with retries left gets its retry,
//     due after the job's retry delay;
//   - a run that failed for good (or any failed attempt, with
//     AlarmEveryFailure) gets an alarm, or is Unalarmed where neither
//     its job nor the admin names anyone to alarm;
//   - a success fires the job's children once all shards of its fire have
//     succeeded;
//   - a scheduled fire of a FIX_DELAY job gets its next fire at the finish
//     plus the interval, once nothing of the fire is left;
//   - a late result drops the retry the admin's guess made and, if it is a
//     success, cancels the alarm not sent yet and fires the children.
func (p Policy) Decide(job Job, r Run) Decision {
	var d Decision
	if r.LateResult {
		// The FIX_DELAY next fire was set by the admin's settlement already.
		d.DropRetry = true
		if r.Status == carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
			d.CancelAlarm, d.FireChildren = true, job.HasChildren && !r.Workflow
		}
		return d
	}
	switch r.Status {
	case carillonv1.RunStatus_RUN_STATUS_FAILED, carillonv1.RunStatus_RUN_STATUS_TIMED_OUT, carillonv1.RunStatus_RUN_STATUS_LOST:
		retried := r.Attempt < job.RetryCount
		if retried {
			delay := p.RetryDelay
			if delay == nil {
				delay = DefaultRetryDelay
			}
			d.RetryAt = r.FinishedAt.Add(delay(job, r.Attempt))
		}
		if !retried || job.AlarmEveryFailure {
			d.Alarm = job.Alarmed || p.AdminAlarms
			d.Unalarmed = !d.Alarm
		}
	case carillonv1.RunStatus_RUN_STATUS_SUCCEEDED:
		d.FireChildren = job.HasChildren && !r.Workflow
	}
	if !r.Workflow && scheduled(r.TriggerType) && job.ScheduleType == carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY {
		d.NextFireAt = r.FinishedAt.Add(time.Duration(job.IntervalSeconds) * time.Second)
	}
	return d
}

// scheduled reports whether runs of trigger type tt belong to a scheduled
// fire (its first run, a misfire's or a retry), which FIX_DELAY waits for.
func scheduled(tt carillonv1.TriggerType) bool {
	switch tt {
	case carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, carillonv1.TriggerType_TRIGGER_TYPE_API, carillonv1.TriggerType_TRIGGER_TYPE_PARENT:
		return false
	}
	return true
}

// DefaultRetryDelay waits the job's retry delay (RetryDelayDefault if it
// sets none), doubled after each failed attempt with RetryBackoff, at most
// RetryDelayMax.
func DefaultRetryDelay(job Job, attempt int32) time.Duration {
	d := RetryDelayDefault
	if job.RetryDelaySeconds > 0 {
		d = time.Duration(job.RetryDelaySeconds) * time.Second
	}
	if job.RetryBackoff {
		for range attempt {
			if d *= 2; d >= RetryDelayMax {
				return RetryDelayMax
			}
		}
	}
	return d
}
