package alarm_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/alarm"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/testca"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// failedRun stores a job and a run of it that failed for good, alarm due.
func failedRun(t testing.TB, st *store.Store, edit func(*store.Job)) store.Run {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	g, err := st.Groups.Create(ctx, store.Group{AppName: "app" + time.Now().Format("150405.000000"), Title: "t"}, now)
	if err != nil {
		t.Fatal(err)
	}
	j := store.Job{GroupID: g.ID, Description: "nightly report", Owner: "ops", Handler: "h", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
	edit(&j)
	j, err = st.Jobs.Create(ctx, j, now)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs.Insert(ctx, []store.Run{{JobID: j.ID, GroupID: g.ID, Handler: "h", ShardTotal: 1, ScheduledAt: now, TriggeredAt: now,
		TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: runs[0].ID, Status: carillonv1.RunStatus_RUN_STATUS_FAILED,
		Message: "disk full", FinishedAt: now}}); err != nil {
		t.Fatal(err)
	}
	return runs[0]
}

func TestSender(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := dbtest.SQLite.Open(t)

	ca := testca.New(t, "mail CA")
	leaf := ca.Leaf(t)
	smtpd := startSMTPD(t, smtpdConfig{cert: &leaf.Certificate})
	var hookMu sync.Mutex
	var hooks []alarm.Event
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e alarm.Event
		if err := json.NewDecoder(r.Body).Decode(&e); err != nil || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad alarm", http.StatusBadRequest)
			return
		}
		hookMu.Lock()
		hooks = append(hooks, e)
		hookMu.Unlock()
	}))
	defer hook.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	defer broken.Close()

	both := failedRun(t, st, func(j *store.Job) {
		j.AlarmEmails = []string{"ops@example.com", "dev@example.com"}
		j.AlarmWebhookURL = hook.URL
	})
	failing := failedRun(t, st, func(j *store.Job) { j.AlarmWebhookURL = broken.URL })
	none := failedRun(t, st, func(j *store.Job) {})

	s := alarm.NewSender(alarm.SenderConfig{
		Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), PublicURL: "https://carillon.example.com/",
		Tries: 1, // TestSenderRetry tries again
		Channels: []alarm.Channel{
			{Name: "webhook", Alarm: &alarm.Webhook{}},
			{Name: "email", Alarm: &alarm.Email{Addr: smtpd.addr, From: "carillon@example.com", TLSConfig: &tls.Config{RootCAs: ca.Pool()}}},
		},
	})
	if err := s.SendDue(ctx); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		run  store.Run
		want carillonv1.AlarmStatus
		says string
	}{
		{both, carillonv1.AlarmStatus_ALARM_STATUS_SENT, "email: sent"},
		{failing, carillonv1.AlarmStatus_ALARM_STATUS_FAILED, "503"},
		{none, carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED, "no alarm"},
	} {
		got, _ := st.Runs.Get(ctx, tt.run.ID)
		if got.AlarmStatus != tt.want || !strings.Contains(got.AlarmMessage, tt.says) {
			t.Errorf("run %d: alarm %s %q, want %s saying %q", tt.run.ID, got.AlarmStatus, got.AlarmMessage, tt.want, tt.says)
		}
	}
	runURL := fmt.Sprintf("https://carillon.example.com/#/runs?job=%d&run=%d", both.JobID, both.ID)
	if len(hooks) != 1 || hooks[0].RunID != both.ID || hooks[0].Message != "disk full" || !hooks[0].Final || hooks[0].RunURL != runURL {
		t.Errorf("webhook got %+v, want one final alarm for run %d linking to %s", hooks, both.ID, runURL)
	}
	mail := smtpd.messages()
	if len(mail) != 1 || strings.Join(mail[0].rcpts, ",") != "ops@example.com,dev@example.com" || !mail[0].tls ||
		!strings.Contains(mail[0].data, "disk full") || !strings.Contains(mail[0].data, "nightly report") ||
		!strings.Contains(mail[0].data, "https://carillon.example.com/#/runs?job=") {
		t.Errorf("mail = %+v, want one message over STARTTLS to both addresses about the failure", mail)
	}
	// Delivered alarms are not sent again.
	if err := s.SendDue(ctx); err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 1 || len(smtpd.messages()) != 1 {
		t.Errorf("a second SendDue sent again: %d webhooks, %d mails", len(hooks), len(smtpd.messages()))
	}
}

// TestSenderNowhere: of a burst of alarms due, more than a batch, those
// that go nowhere (no channel, the job deleted) are recorded as such,
// each with its own reason, beside one that is delivered. (A run that
// fails with no one to alarm is recorded so as it settles: these are
// alarms made due before, e.g. while the admin had a webhook of its own.)
func TestSenderNowhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := dbtest.SQLite.Open(t)
	var hooks sync.Map
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e alarm.Event
		if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
			http.Error(w, "bad alarm", http.StatusBadRequest)
			return
		}
		hooks.Store(e.RunID, true)
	}))
	defer hook.Close()

	hooked := failedRun(t, st, func(j *store.Job) { j.AlarmWebhookURL = hook.URL })
	quiet := failedRun(t, st, func(j *store.Job) {})
	gone := failedRun(t, st, func(j *store.Job) {})
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	var burst []store.Run
	for i := range 240 {
		j := quiet
		if i%3 == 0 {
			j = gone
		}
		burst = append(burst, store.Run{JobID: j.JobID, GroupID: j.GroupID, Handler: "h", ShardTotal: 1,
			ScheduledAt: now.Add(time.Duration(i+1) * time.Second), TriggeredAt: now, FinishedAt: now, Message: "no executor",
			TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Status: carillonv1.RunStatus_RUN_STATUS_FAILED,
			AlarmStatus: carillonv1.AlarmStatus_ALARM_STATUS_PENDING})
	}
	burst, err := st.Runs.Insert(ctx, burst)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Jobs.Delete(ctx, gone.JobID); err != nil {
		t.Fatal(err)
	}

	s := alarm.NewSender(alarm.SenderConfig{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Tries: 1,
		Channels: []alarm.Channel{{Name: "webhook", Alarm: &alarm.Webhook{}}}})
	if err := s.SendDue(ctx); err != nil {
		t.Fatal(err)
	}
	if pas, err := st.Alarms.Pending(ctx, now.Add(time.Hour), 10); err != nil || len(pas) != 0 {
		t.Fatalf("alarms still due: %d (%v)", len(pas), err)
	}
	if _, ok := hooks.Load(hooked.ID); !ok {
		t.Errorf("the webhook did not get run %d's alarm", hooked.ID)
	}
	for _, r := range append(burst, hooked) {
		want, says := carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED, "no alarm: the job has no alarm e-mail or webhook"
		switch r.JobID {
		case gone.JobID:
			says = "no alarm: the job was deleted"
		case hooked.JobID:
			want, says = carillonv1.AlarmStatus_ALARM_STATUS_SENT, "webhook: sent"
		}
		got, err := st.Runs.Get(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.AlarmStatus != want || !strings.HasPrefix(got.AlarmMessage, says) {
			t.Errorf("run %d of job %d: alarm %s %q, want %s %q", r.ID, r.JobID, got.AlarmStatus, got.AlarmMessage, want, says)
		}
	}
}
