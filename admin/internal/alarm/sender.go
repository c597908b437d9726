package alarm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
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
	// TriesDefault is how many times an alarm is tried on a channel that
	// fails before it is recorded FAILED.
	TriesDefault = 5
	// RetryDelayDefault is the delay before an alarm's first retry; each
	// next retry waits twice as long, at most RetryDelayMax.
	RetryDelayDefault = 30 * time.Second
	// RetryDelayMax caps the delay between two tries of an alarm.
	RetryDelayMax = 10 * time.Minute
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
	// Tries is how many times an alarm is tried on the channels that fail
	// (the others are not tried again) before it is recorded FAILED;
	// defaults to TriesDefault. Between tries the alarm stays PENDING and
	// its alarm_message says what failed and when the next try is.
	Tries int
	// RetryDelay is the delay before the first retry, doubled for each
	// next up to RetryDelayMax; defaults to RetryDelayDefault.
	RetryDelay time.Duration
	// NowFunc is the clock of retries; defaults to time.Now.
	NowFunc func() time.Time
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
	cfg.Tries = max(cmp.Or(cfg.Tries, TriesDefault), 1)
	cfg.RetryDelay = cmp.Or(cfg.RetryDelay, RetryDelayDefault)
	if cfg.NowFunc == nil {
		cfg.NowFunc = time.Now
	}
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

// sendRuns delivers the due alarms of runs, alarmBatch at a time, with
// the jobs of a batch read in one statement. The alarms of a batch that
// go nowhere (their jobs have no channel, or were deleted) are recorded
// together once the batch is done, in a statement for each message: a
// group whose executors are all gone fails thousands of runs a second,
// and a read and a write each would take the database's one writer from
// the claims of the fires still due.
func (s *Sender) sendRuns(ctx context.Context) error {
	for {
		pas, err := s.cfg.Store.Alarms.Pending(ctx, s.cfg.NowFunc(), alarmBatch)
		if err != nil || len(pas) == 0 {
			return err
		}
		ids := make([]int64, len(pas))
		for i, pa := range pas {
			ids[i] = pa.JobID
		}
		slices.Sort(ids)
		jobs, jobsErr := s.cfg.Store.Jobs.GetAll(ctx, slices.Compact(ids))
		job := func(id int64) (store.Job, error) {
			if jobsErr != nil {
				return store.Job{}, jobsErr
			}
			if j, ok := jobs[id]; ok {
				return *j, nil
			}
			return store.Job{}, fmt.Errorf("%w: job %d", store.ErrNotFound, id)
		}
		nowhere := map[string][]int64{} // run IDs by the message of their outcome
		for _, pa := range pas {
			o := s.send(ctx, pa, job)
			if o.status == carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED {
				nowhere[o.msg] = append(nowhere[o.msg], pa.ID)
				continue
			}
			err := s.settle(o, pa.Try, func(try store.AlarmTry, at time.Time, msg string) error {
				return s.cfg.Store.Alarms.Retry(ctx, pa.ID, try, at, msg)
			}, func(status carillonv1.AlarmStatus, msg string) error {
				return s.cfg.Store.Alarms.Record(ctx, pa.ID, status, msg)
			})
			if err != nil {
				return err
			}
		}
		for _, msg := range slices.Sorted(maps.Keys(nowhere)) {
			if err := s.cfg.Store.Alarms.RecordAll(ctx, nowhere[msg], carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED, msg); err != nil {
				return err
			}
		}
	}
}

// alarmBatch is how many due alarms a Sender reads at a time.
const alarmBatch = 100

// sendAll delivers the alarms that due returns at now, alarmBatch at a
// time, each with send (which records its outcome), until none is due.
func sendAll[T any](ctx context.Context, now func() time.Time, due func(context.Context, time.Time, int) ([]T, error),
	send func(context.Context, T) error,
) error {
	for {
		items, err := due(ctx, now(), alarmBatch)
		if err != nil || len(items) == 0 {
			return err
		}
		for _, it := range items {
			if err := send(ctx, it); err != nil {
				return err
			}
		}
	}
}

// outcome is how the delivery of an alarm went: its status and message,
// and the channels that took it.
type outcome struct {
	status carillonv1.AlarmStatus
	msg    string
	sent   []string
}

// settle records o, the outcome of an alarm tried before as try says: a
// failure with tries left is retried later (retry), anything else is
// final (record).
func (s *Sender) settle(o outcome, try store.AlarmTry,
	retry func(store.AlarmTry, time.Time, string) error, record func(carillonv1.AlarmStatus, string) error,
) error {
	tries := int(try.Attempts) + 1
	if o.status != carillonv1.AlarmStatus_ALARM_STATUS_FAILED {
		return record(o.status, o.msg)
	}
	if tries < s.cfg.Tries {
		delay := s.cfg.RetryDelay << (tries - 1)
		if delay > RetryDelayMax || delay <= 0 {
			delay = RetryDelayMax
		}
		at := s.cfg.NowFunc().Add(delay)
		msg := fmt.Sprintf("%s (try %d of %d; next at %s)", o.msg, tries, s.cfg.Tries, at.UTC().Format(time.RFC3339))
		return retry(store.AlarmTry{Attempts: int32(tries), Sent: o.sent}, at, msg) //nolint:gosec // tries < cfg.Tries, an int32 count
	}
	if tries > 1 {
		o.msg = fmt.Sprintf("%s (after %d tries)", o.msg, tries)
	}
	return record(o.status, o.msg)
}

// send delivers the alarm of run pa on every channel that has not taken
// it yet and sums up the outcome; jobs returns the run's job.
func (s *Sender) send(ctx context.Context, pa store.PendingAlarm, jobs func(int64) (store.Job, error)) outcome {
	r := pa.Run
	job, err := jobs(r.JobID)
	if errors.Is(err, store.ErrNotFound) {
		return outcome{status: carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED, msg: "no alarm: the job was deleted"}
	}
	if err != nil {
		return outcome{status: carillonv1.AlarmStatus_ALARM_STATUS_FAILED, msg: err.Error(), sent: pa.Try.Sent}
	}
	e := Event{
		RunID: r.ID, JobID: job.ID, JobDescription: job.Description, Owner: job.Owner, GroupID: r.GroupID,
		Handler: r.Handler, Status: strings.TrimPrefix(r.Status.String(), "RUN_STATUS_"), Message: r.Message,
		Attempt: r.Attempt, RetryCount: job.RetryCount, ExecutorAddress: r.ExecutorAddress,
		TriggerType: strings.TrimPrefix(r.TriggerType.String(), "TRIGGER_TYPE_"), ScheduledAt: r.ScheduledAt,
		FinishedAt: r.FinishedAt, Final: r.Attempt >= job.RetryCount, Emails: job.AlarmEmails, WebhookURL: job.AlarmWebhookURL,
		WebhookFormat: job.AlarmWebhookFormat, WebhookSecret: job.AlarmWebhookSecret, WebhookTemplate: job.AlarmWebhookTemplate,
		RunURL: RunURL(s.cfg.PublicURL, job.ID, r.ID),
	}
	o := s.deliver(ctx, e, r.ID, pa.Try.Sent)
	if o.status == carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED {
		o.msg = store.NoAlarmMessage
	}
	return o
}

// deliver sends e on every channel but those in done (which took it in
// an earlier try) and sums up the outcome; a channel-less outcome is
// UNSPECIFIED. what names e's run (or workflow run) in logs.
func (s *Sender) deliver(ctx context.Context, e Event, what any, done []string) outcome {
	var notes []string
	var sent []string
	failed := 0
	for _, ch := range s.cfg.Channels {
		if slices.Contains(done, ch.Name) {
			sent = append(sent, ch.Name)
			notes = append(notes, ch.Name+": sent")
			continue
		}
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
			sent = append(sent, ch.Name)
			notes = append(notes, ch.Name+": sent")
		}
	}
	switch {
	case failed > 0:
		return outcome{carillonv1.AlarmStatus_ALARM_STATUS_FAILED, strings.Join(notes, "; "), sent}
	case len(sent) > 0:
		return outcome{carillonv1.AlarmStatus_ALARM_STATUS_SENT, strings.Join(notes, "; "), sent}
	}
	return outcome{status: carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED}
}
