package alarm_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/alarm"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestSenderRetry: a failed delivery stays PENDING, saying what failed and
// when it is tried next; it is tried again when due (on a clock the test
// moves), only on the channel that failed, and recorded SENT once that
// takes it, or FAILED after the last try.
func TestSenderRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := dbtest.SQLite.Open(t)
	var flakyHits, downHits atomic.Int32
	smtpd := startSMTPD(t, smtpdConfig{})
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if flakyHits.Add(1) == 1 {
			http.Error(w, "try later", http.StatusBadGateway)
		}
	}))
	defer flaky.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		downHits.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer down.Close()

	recovers := failedRun(t, st, func(j *store.Job) {
		j.AlarmWebhookURL, j.AlarmEmails = flaky.URL, []string{"ops@example.com"}
	})
	var mu sync.Mutex
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	s := alarm.NewSender(alarm.SenderConfig{
		Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Tries: 3, RetryDelay: time.Minute, NowFunc: clock,
		Channels: []alarm.Channel{
			{Name: "email", Alarm: &alarm.Email{Addr: smtpd.addr, From: "carillon@example.com", TLS: alarm.TLSNone}},
			{Name: "webhook", Alarm: &alarm.Webhook{}},
		},
	})
	alarmOf := func(r store.Run) store.Run {
		t.Helper()
		got, err := st.Runs.Get(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	sendDue := func() {
		t.Helper()
		if err := s.SendDue(ctx); err != nil {
			t.Fatal(err)
		}
	}

	sendDue()
	got := alarmOf(recovers)
	if got.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_PENDING || !strings.Contains(got.AlarmMessage, "502") ||
		!strings.Contains(got.AlarmMessage, "try 1 of 3; next at 2026-11-27T09:01:00Z") || !strings.Contains(got.AlarmMessage, "email: sent") {
		t.Fatalf("after a failed try: %s %q, want PENDING saying the failure and the next try", got.AlarmStatus, got.AlarmMessage)
	}
	advance(time.Minute - time.Millisecond)
	sendDue() // not due yet
	if len(smtpd.messages()) != 1 || flakyHits.Load() != 1 {
		t.Fatalf("before the retry's instant: %d mails, %d posts, want 1 and 1", len(smtpd.messages()), flakyHits.Load())
	}
	advance(time.Millisecond)
	sendDue()
	got = alarmOf(recovers)
	if got.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_SENT || got.AlarmMessage != "email: sent; webhook: sent" {
		t.Errorf("after the retry: %s %q, want SENT by both", got.AlarmStatus, got.AlarmMessage)
	}
	if len(smtpd.messages()) != 1 || flakyHits.Load() != 2 {
		t.Errorf("%d mails, %d posts; want 1 (not again) and 2", len(smtpd.messages()), flakyHits.Load())
	}

	// A webhook that stays down: tried 3 times, a minute then two apart.
	gives := failedRun(t, st, func(j *store.Job) { j.AlarmWebhookURL = down.URL })
	for _, wait := range []time.Duration{0, time.Minute, 2 * time.Minute} {
		advance(wait)
		sendDue()
	}
	got = alarmOf(gives)
	if got.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_FAILED || !strings.HasSuffix(got.AlarmMessage, "(after 3 tries)") ||
		!strings.Contains(got.AlarmMessage, "503") || downHits.Load() != 3 {
		t.Errorf("a webhook down: %s %q after %d posts, want FAILED after 3 tries", got.AlarmStatus, got.AlarmMessage, downHits.Load())
	}
	advance(time.Hour)
	sendDue()
	if downHits.Load() != 3 {
		t.Errorf("a FAILED alarm was tried again: %d posts", downHits.Load())
	}
}
