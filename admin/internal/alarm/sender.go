package alarm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/carillonhq/carillon/admin/internal/metrics"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

const (
	// PollIntervalDefault is how often a Sender looks for due alarms.
	PollIntervalDefault = 2 * time.Second
	// SendTimeoutDefault bounds one channel's delivery of one alarm.
	SendTimeoutDefault = 15 * time.Second
)

// Channel is a named Alarm.
type Channel struct {
	Name  string
	Alarm Alarm
}

// SenderConfig configures a Sender.
type SenderConfig struct {
	// Store holds the runs whose alarms are due. Required.
	Store *store.Store
	// Channels are tried in order for each alarm.
	Channels []Channel
	// PollInterval defaults to PollIntervalDefault.
	PollInterval time.Duration
	// SendTimeout defaults to SendTimeoutDefault.
	SendTimeout time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Metrics counts deliveries by channel and outcome. Defaults to nil:
	// nothing is counted.
	Metrics *metrics.Metrics
	// PublicURL is the console's base URL as users reach it: each alarm
	// links to its run there (Event.RunURL). Empty: no link.
	PublicURL string
}

// Sender delivers due alarms and records their outcome on their runs.
type Sender struct {
	cfg  SenderConfig
	wake chan struct{}
}

// NewSender returns a Sender; Run starts it.
func NewSender(cfg SenderConfig) *Sender {
	cfg.PollInterval = cmp.Or(cfg.PollInterval, PollIntervalDefault)
	cfg.SendTimeout = cmp.Or(cfg.SendTimeout, SendTimeoutDefault)
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	return &Sender{cfg: cfg, wake: make(chan struct{}, 1)}
}

// RunURL is the console's page of run runID of job jobID at the admin
// whose public URL is base, or "" without one.
func RunURL(base string, jobID, runID int64) string {
	return consoleURL(base, fmt.Sprintf("#/runs?job=%d&run=%d", jobID, runID))
}

// WorkflowRunURL is the console's page of workflow run runID of workflow
// workflowID at the admin whose public URL is base, or "" without one.
func WorkflowRunURL(base string, workflowID, runID int64) string {
	return consoleURL(base, fmt.Sprintf("#/workflows?id=%d&run=%d", workflowID, runID))
}

// consoleURL is the console's page hash at the admin whose public URL is
// base, or "" without one.
func consoleURL(base, hash string) string {
	if base == "" {
		return ""
	}
	return strings.TrimSuffix(base, "/") + "/" + hash
}

// Wake asks the Sender to look for due alarms now.
func (s *Sender) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run delivers due alarms until ctx ends. Alarms are durable: one that is
// due when the admin stops is delivered after it starts again.
func (s *Sender) Run(ctx context.Context) error {
	ticker := time.NewTicker(s.cfg.PollInterval)
	defer ticker.Stop()
	for {
		if err := s.SendDue(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Error("alarm: send", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		case <-s.wake:
		}
	}
}

// SendDue delivers every alarm due now: those of runs, then those of
// workflow runs.
func (s *Sender) SendDue(ctx context.Context) error {
	if err := s.sendRuns(ctx); err != nil {
		return err
	}
	return s.sendWorkflowRuns(ctx)
}

// sendRuns delivers the due alarms of runs.
func (s *Sender) sendRuns(ctx context.Context) error {
	return sendAll(ctx, s.cfg.Store.PendingAlarms, s.send, func(r store.Run) int64 { return r.ID }, s.cfg.Store.RecordAlarm)
}

// sendAll delivers the alarms that due returns, a hundred at a time, each
// with send, and records each outcome on the row of the ID that id says,
// until none is due.
func sendAll[T any](ctx context.Context, due func(context.Context, int) ([]T, error),
	send func(context.Context, T) (carillonv1.AlarmStatus, string), id func(T) int64,
	record func(context.Context, int64, carillonv1.AlarmStatus, string) error,
) error {
	for {
		items, err := due(ctx, 100)
		if err != nil || len(items) == 0 {
			return err
		}
		for _, it := range items {
			status, msg := send(ctx, it)
			if err := record(ctx, id(it), status, msg); err != nil {
				return err
			}
		}
	}
}

// send delivers the alarm of run r on every channel and sums up the outcome.
func (s *Sender) send(ctx context.Context, r store.Run) (carillonv1.AlarmStatus, string) {
	job, err := s.cfg.Store.Job(ctx, r.JobID)
	if errors.Is(err, store.ErrNotFound) {
		return carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED, "no alarm: the job was deleted"
	}
	if err != nil {
		return carillonv1.AlarmStatus_ALARM_STATUS_FAILED, err.Error()
	}
	e := Event{
		RunID: r.ID, JobID: job.ID, JobDescription: job.Description, Owner: job.Owner, GroupID: r.GroupID,
		Handler: r.Handler, Status: strings.TrimPrefix(r.Status.String(), "RUN_STATUS_"), Message: r.Message,
		Attempt: r.Attempt, RetryCount: job.RetryCount, ExecutorAddress: r.ExecutorAddress,
		TriggerType: strings.TrimPrefix(r.TriggerType.String(), "TRIGGER_TYPE_"), ScheduledAt: r.ScheduledAt,
		FinishedAt: r.FinishedAt, Final: r.Attempt >= job.RetryCount, Emails: job.AlarmEmails, WebhookURL: job.AlarmWebhookURL,
		RunURL: RunURL(s.cfg.PublicURL, job.ID, r.ID),
	}
	status, msg := s.deliver(ctx, e, r.ID)
	if status == carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED {
		msg = "no alarm: the job has no alarm e-mail or webhook, and the admin none"
	}
	return status, msg
}

// deliver sends e on every channel and sums up the outcome; a
// channel-less outcome is UNSPECIFIED. what names e's run (or workflow
// run) in logs.
func (s *Sender) deliver(ctx context.Context, e Event, what any) (carillonv1.AlarmStatus, string) {
	var notes []string
	sent, failed := 0, 0
	for _, ch := range s.cfg.Channels {
		cctx, cancel := context.WithTimeout(ctx, s.cfg.SendTimeout)
		err := ch.Alarm.Send(cctx, e)
		cancel()
		switch {
		case errors.Is(err, ErrNoRecipient):
		case err != nil:
			s.cfg.Metrics.Alarm(ch.Name, false)
			failed++
			notes = append(notes, fmt.Sprintf("%s: %v", ch.Name, err))
			s.cfg.Logger.Warn("alarm: not delivered", "run", what, "channel", ch.Name, "err", err)
		default:
			s.cfg.Metrics.Alarm(ch.Name, true)
			sent++
			notes = append(notes, ch.Name+": sent")
		}
	}
	switch {
	case failed > 0:
		return carillonv1.AlarmStatus_ALARM_STATUS_FAILED, strings.Join(notes, "; ")
	case sent > 0:
		return carillonv1.AlarmStatus_ALARM_STATUS_SENT, strings.Join(notes, "; ")
	}
	return carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED, ""
}
