// Package alarm tells people when runs fail: by e-mail (SMTP), by webhook
// (a JSON POST, or a DingTalk, Feishu, WeCom or Slack robot's message, or
// a template's rendering), or by any other Alarm. A Sender delivers the
// alarms the store marks as due, in the background, retries those that
// failed, and records each outcome on its run, so a failing channel never
// holds up scheduling.
package alarm

import (
	"context"
	"errors"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Alarm is one channel alarms go out on.
type Alarm interface {
	// Send delivers e. It returns ErrNoRecipient when e has nothing to send
	// to on this channel (e.g. the job lists no e-mail addresses).
	Send(ctx context.Context, e Event) error
}

// ErrNoRecipient is returned by Send when an event has no recipient on the
// channel; the channel is then not counted as failed.
var ErrNoRecipient = errors.New("alarm: no recipient")

// Event is a failed run, or a workflow run that ended FAILED, as an alarm
// reports it.
type Event struct {
	RunID           int64     `json:"runId,string"`
	JobID           int64     `json:"jobId,string"`
	JobDescription  string    `json:"jobDescription"`
	Owner           string    `json:"owner,omitempty"`
	GroupID         int64     `json:"groupId,string"`
	Handler         string    `json:"handler,omitempty"`
	Status          string    `json:"status"`
	Message         string    `json:"message"`
	Attempt         int32     `json:"attempt"`
	RetryCount      int32     `json:"retryCount"`
	ExecutorAddress string    `json:"executorAddress,omitempty"`
	TriggerType     string    `json:"triggerType"`
	ScheduledAt     time.Time `json:"scheduledAt"`
	FinishedAt      time.Time `json:"finishedAt"`
	// Final is false for an attempt that will be retried (sent only to jobs
	// that alarm on every failure).
	Final bool `json:"final"`
	// RunURL is the run's page in the console, where the admin knows its
	// public URL (serve --public-url); "" otherwise.
	RunURL string `json:"runUrl,omitempty"`

	// Set for a workflow run's alarm instead of a run's (RunID, JobID
	// and Attempt are then 0, RunURL links to the workflow run): the
	// workflow, the workflow run that ended FAILED, and the keys of the
	// nodes that failed.
	WorkflowID    int64    `json:"workflowId,string,omitempty"`
	WorkflowName  string   `json:"workflowName,omitempty"`
	WorkflowRunID int64    `json:"workflowRunId,string,omitempty"`
	FailedNodes   []string `json:"failedNodes,omitempty"`

	// Emails are the job's (or workflow's) alarm e-mail addresses.
	Emails []string `json:"-"`
	// WebhookURL is the job's (or workflow's) own webhook, if any, and
	// WebhookFormat, WebhookSecret and WebhookTemplate what it receives
	// (the job's Job.alarm_webhook_format, _secret and _template).
	WebhookURL      string                        `json:"-"`
	WebhookFormat   carillonv1.AlarmWebhookFormat `json:"-"`
	WebhookSecret   string                        `json:"-"`
	WebhookTemplate string                        `json:"-"`
}
