package alarm_test

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/alarm"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/testca"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// mailEvent is a failed run of a job with a Chinese name.
func mailEvent() alarm.Event {
	at := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	return alarm.Event{
		RunID: 34, JobID: 12, JobDescription: "每日报表 nightly", Owner: "ops", Status: "FAILED", Message: "disk full <b>&",
		RetryCount: 2, Attempt: 2, TriggerType: "SCHEDULE", ScheduledAt: at, FinishedAt: at.Add(time.Minute), Final: true,
		Emails: []string{"ops@example.com", "dev@example.com"},
	}
}

// TestEmailTLS sends over each TLS mode to servers that offer STARTTLS,
// implicit TLS or none, with a certificate of the test CA.
func TestEmailTLS(t *testing.T) {
	t.Parallel()
	ca, other := testca.New(t, "mail CA"), testca.New(t, "another CA")
	leaf := ca.Leaf(t)
	for _, tt := range []struct {
		name     string
		server   smtpdConfig
		mode     alarm.TLSMode
		trust    *testca.CA
		wantTLS  bool
		startTLS bool   // whether the client says STARTTLS
		wantErr  string // "": delivered
	}{
		{name: "default is starttls", server: smtpdConfig{cert: &leaf.Certificate}, wantTLS: true, startTLS: true},
		{name: "starttls", server: smtpdConfig{cert: &leaf.Certificate}, mode: alarm.TLSStartTLS, wantTLS: true, startTLS: true},
		{name: "starttls not offered", mode: alarm.TLSStartTLS, wantErr: "does not support STARTTLS"},
		{name: "default needs starttls", wantErr: "does not support STARTTLS"},
		{name: "starttls, untrusted", server: smtpdConfig{cert: &leaf.Certificate}, trust: other, startTLS: true,
			wantErr: "certificate signed by unknown authority"},
		{name: "opportunistic offered", server: smtpdConfig{cert: &leaf.Certificate}, mode: alarm.TLSOpportunistic, wantTLS: true, startTLS: true},
		{name: "opportunistic not offered", mode: alarm.TLSOpportunistic},
		{name: "implicit", server: smtpdConfig{cert: &leaf.Certificate, implicit: true}, mode: alarm.TLSImplicit, wantTLS: true},
		{name: "implicit, untrusted", server: smtpdConfig{cert: &leaf.Certificate, implicit: true}, mode: alarm.TLSImplicit, trust: other,
			wantErr: "TLS handshake"},
		{name: "implicit to a cleartext server", mode: alarm.TLSImplicit, wantErr: "TLS handshake"},
		{name: "none", server: smtpdConfig{cert: &leaf.Certificate}, mode: alarm.TLSNone},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := startSMTPD(t, tt.server)
			trust := tt.trust
			if trust == nil {
				trust = ca
			}
			m := &alarm.Email{Addr: srv.addr, From: "carillon@example.com", TLS: tt.mode, TLSConfig: &tls.Config{RootCAs: trust.Pool()}}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := m.Send(ctx, mailEvent())
			got := srv.messages()
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Send: %v, want an error saying %q", err, tt.wantErr)
			case tt.wantErr != "" && len(got) != 0:
				t.Errorf("Send failed, yet the server has %d messages", len(got))
			case tt.wantErr == "" && err != nil:
				t.Errorf("Send: %v", err)
			case tt.wantErr == "" && (len(got) != 1 || got[0].tls != tt.wantTLS):
				t.Errorf("the server has %+v, want one message, over TLS: %v", got, tt.wantTLS)
			}
			if said := strings.Contains(srv.dialogue(), "STARTTLS"); said != tt.startTLS {
				t.Errorf("the client said STARTTLS: %v, want %v (dialogue %s)", said, tt.startTLS, srv.dialogue())
			}
		})
	}
}

// TestEmailAuth offers mechanisms and checks which one the client uses,
// with the right credentials.
func TestEmailAuth(t *testing.T) {
	t.Parallel()
	ca := testca.New(t, "mail CA")
	leaf := ca.Leaf(t)
	const user, password, token = "carillon", "s3cret", "ya29.token"
	for _, tt := range []struct {
		name     string
		mechs    string
		password string // the client's; "": password
		token    string
		noUser   bool
		want     string // the mechanism used; "": none
		wantErr  string
	}{
		{name: "plain", mechs: "PLAIN", want: "PLAIN"},
		{name: "login", mechs: "LOGIN", want: "LOGIN"},
		{name: "cram-md5 first", mechs: "PLAIN LOGIN CRAM-MD5", want: "CRAM-MD5"},
		{name: "plain before login", mechs: "LOGIN PLAIN", want: "PLAIN"},
		{name: "xoauth2 with a token", mechs: "PLAIN XOAUTH2", token: token, want: "XOAUTH2"},
		{name: "no xoauth2 without a token", mechs: "XOAUTH2 PLAIN", want: "PLAIN"},
		{name: "token, xoauth2 not offered", mechs: "PLAIN LOGIN", token: token, wantErr: "offers no XOAUTH2 (its AUTH: PLAIN LOGIN)"},
		{name: "wrong password", mechs: "PLAIN", password: "guess", wantErr: "535"},
		{name: "wrong token", mechs: "XOAUTH2", token: "expired", wantErr: "535"},
		{name: "no mechanism we speak", mechs: "GSSAPI", wantErr: "offers none of CRAM-MD5, PLAIN, LOGIN (its AUTH: GSSAPI)"},
		{name: "no auth offered", wantErr: "(its AUTH: none)"},
		{name: "no user, no auth", mechs: "PLAIN", noUser: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := smtpdConfig{cert: &leaf.Certificate, user: user, password: password, token: token}
			if tt.mechs != "" {
				cfg.mechs = strings.Fields(tt.mechs)
			}
			srv := startSMTPD(t, cfg)
			m := &alarm.Email{Addr: srv.addr, From: "carillon@example.com", TLSConfig: &tls.Config{RootCAs: ca.Pool()},
				Username: user, Password: cmpOr(tt.password, password), OAuth2Token: tt.token}
			if tt.noUser {
				m.Username, m.Password = "", ""
			}
			checkAuth(t, srv, m, tt.want, tt.wantErr)
		})
	}
}

// TestEmailAuthInClear checks that the password goes in clear to no
// server but one on localhost: only CRAM-MD5 authenticates without TLS.
func TestEmailAuthInClear(t *testing.T) {
	t.Parallel()
	const user, password = "carillon", "s3cret"
	for _, tt := range []struct {
		name, mechs, want, wantErr string
	}{
		{name: "cram-md5", mechs: "PLAIN CRAM-MD5", want: "CRAM-MD5"},
		{name: "plain, login", mechs: "PLAIN LOGIN", wantErr: "offers only PLAIN LOGIN, which without TLS would send the password in clear"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// 127.0.0.2 is loopback on Linux, but not "localhost" to
			// the client.
			if ln, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
				t.Skipf("no 127.0.0.2 here: %v", err)
			} else {
				ln.Close()
			}
			srv := startSMTPD(t, smtpdConfig{addr: "127.0.0.2:0", mechs: strings.Fields(tt.mechs), user: user, password: password})
			checkAuth(t, srv, &alarm.Email{Addr: srv.addr, From: "carillon@example.com", TLS: alarm.TLSNone, Username: user, Password: password},
				tt.want, tt.wantErr)
		})
	}
}

// checkAuth sends with m to srv and checks that it authenticated with
// mechanism want, or failed saying wantErr with nothing delivered.
func checkAuth(t *testing.T, srv *smtpd, m *alarm.Email, want, wantErr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := m.Send(ctx, mailEvent())
	got := srv.messages()
	switch {
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr) || len(got) != 0):
		t.Errorf("Send: %v, %d messages; want an error saying %q and none", err, len(got), wantErr)
	case wantErr == "" && err != nil:
		t.Errorf("Send: %v (dialogue %s)", err, srv.dialogue())
	case wantErr == "" && (len(got) != 1 || got[0].auth != want):
		t.Errorf("the server has %+v, want one message authenticated by %q", got, want)
	case wantErr == "" && want == "" && strings.Contains(srv.dialogue(), "AUTH"):
		t.Errorf("the client authenticated: %s", srv.dialogue())
	}
}

// TestEmailMessage checks the message: its headers (an encoded UTF-8
// Subject, Date, a Message-ID of its own), and its text and HTML parts.
func TestEmailMessage(t *testing.T) {
	t.Parallel()
	ca := testca.New(t, "mail CA")
	leaf := ca.Leaf(t)
	srv := startSMTPD(t, smtpdConfig{cert: &leaf.Certificate})
	m := &alarm.Email{Addr: srv.addr, From: "Carillon <carillon@example.com>", TLSConfig: &tls.Config{RootCAs: ca.Pool()}}
	before := time.Now().Truncate(time.Second)
	linked := mailEvent()
	linked.RunURL = alarm.RunURL("https://carillon.example.com", linked.JobID, linked.RunID)
	for _, e := range []alarm.Event{linked, mailEvent()} {
		if err := m.Send(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	after := time.Now()
	got := srv.messages()
	if len(got) != 2 {
		t.Fatalf("the server has %d messages, want 2", len(got))
	}
	ids := map[string]bool{}
	for i, sent := range got {
		msg, err := mail.ReadMessage(strings.NewReader(sent.data))
		if err != nil {
			t.Fatalf("message: %v\n%s", err, sent.data)
		}
		h := msg.Header
		subject, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
		if want := `[carillon] job 12 "每日报表 nightly": run 34 FAILED`; err != nil || subject != want ||
			!strings.HasPrefix(strings.ToUpper(h.Get("Subject")), "=?UTF-8?") {
			t.Errorf("Subject %q decodes to %q (%v), want %q, encoded", h.Get("Subject"), subject, err, want)
		}
		if date, err := h.Date(); err != nil || date.Before(before) || date.After(after) {
			t.Errorf("Date %q (%v): want the time it was sent, from %s to %s", h.Get("Date"), err, before, after)
		}
		id := h.Get("Message-ID")
		if !regexp.MustCompile(`^<[^<>@\s]+@[^<>@\s]+>$`).MatchString(id) || ids[id] {
			t.Errorf("Message-ID %q: want <unique@host>, one per message", id)
		}
		ids[id] = true
		if h.Get("From") != `"Carillon" <carillon@example.com>` || h.Get("To") != "<ops@example.com>, <dev@example.com>" || h.Get("MIME-Version") != "1.0" {
			t.Errorf("From %q, To %q, MIME-Version %q", h.Get("From"), h.Get("To"), h.Get("MIME-Version"))
		}
		parts := readParts(t, h.Get("Content-Type"), msg.Body)
		plain := []string{"每日报表 nightly (owner ops)", "attempt 3 of 3, SCHEDULE", "disk full <b>&"}
		html := []string{"<td>12 每日报表 nightly (owner ops)</td>", "<pre>disk full &lt;b&gt;&amp;</pre>"}
		link := []string{"The run: https://carillon.example.com/#/runs?job=12&run=34",
			`<a href="https://carillon.example.com/#/runs?job=12&amp;run=34">`}
		if i == 0 { // the event with a link
			plain, html = append(plain, link[0]), append(html, link[1])
		} else if strings.Contains(sent.data, "carillon.example.com") {
			t.Errorf("the message of an event without a link has one:\n%s", sent.data)
		}
		for typ, want := range map[string][]string{"text/plain": plain, "text/html": html} {
			for _, w := range want {
				if !strings.Contains(parts[typ], w) {
					t.Errorf("the %s part has no %q:\n%s", typ, w, parts[typ])
				}
			}
		}
	}
}

// readParts reads a multipart/alternative body: its parts' decoded text
// by media type.
func readParts(t *testing.T, contentType string, body io.Reader) map[string]string {
	t.Helper()
	typ, params, err := mime.ParseMediaType(contentType)
	if err != nil || typ != "multipart/alternative" {
		t.Fatalf("Content-Type %q (%v): want multipart/alternative", contentType, err)
	}
	parts := map[string]string{}
	r := multipart.NewReader(body, params["boundary"])
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		typ, params, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		b, err := io.ReadAll(p) // quoted-printable is decoded
		if err != nil || params["charset"] != "UTF-8" {
			t.Errorf("part %s: charset %q, %v", typ, params["charset"], err)
		}
		parts[typ] = string(b)
	}
	return parts
}

// TestEmailStall has the server stop answering at each step: Send gives
// up when its context ends, says why, and hangs up.
func TestEmailStall(t *testing.T) {
	t.Parallel()
	ca := testca.New(t, "mail CA")
	leaf := ca.Leaf(t)
	for _, tt := range []struct {
		stallAt string
		mode    alarm.TLSMode
		cancel  bool // cancel the context rather than let it time out
	}{
		{stallAt: "greeting"},
		{stallAt: "EHLO"},
		{stallAt: "STARTTLS"},
		{stallAt: "AUTH"},
		{stallAt: "DATA"},
		{stallAt: "greeting", mode: alarm.TLSImplicit},
		{stallAt: "DATA", cancel: true},
	} {
		name := tt.stallAt + "/" + cmpOr(string(tt.mode), "starttls")
		if tt.cancel {
			name += "/cancel"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := startSMTPD(t, smtpdConfig{cert: &leaf.Certificate, implicit: tt.mode == alarm.TLSImplicit, stallAt: tt.stallAt,
				mechs: []string{"PLAIN"}, user: "u", password: "p"})
			m := &alarm.Email{Addr: srv.addr, From: "carillon@example.com", TLS: tt.mode, TLSConfig: &tls.Config{RootCAs: ca.Pool()},
				Username: "u", Password: "p"}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			want := "email via " + srv.addr + ": timed out after "
			if tt.cancel {
				ctx, cancel = context.WithCancel(context.Background())
				defer cancel()
				time.AfterFunc(100*time.Millisecond, cancel)
				want = "email via " + srv.addr + ": cancelled: "
			}
			start := time.Now()
			err := m.Send(ctx, mailEvent())
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Send: %v, want an error saying %q (dialogue %s)", err, want, srv.dialogue())
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("Send took %s: it did not end with its context", took)
			}
			expectHangup(t, srv)
		})
	}
}

// expectHangup waits for the client to hang up on srv, which stalls.
func expectHangup(t *testing.T, srv *smtpd) {
	t.Helper()
	select {
	case <-srv.hangups:
	case <-time.After(5 * time.Second):
		t.Error("the client left its connection open")
	}
}

// TestSenderEmailStall records an alarm whose server stalls as failed on
// its run, saying it timed out.
func TestSenderEmailStall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := dbtest.SQLite.Open(t)
	srv := startSMTPD(t, smtpdConfig{stallAt: "greeting"})
	r := failedRun(t, st, func(j *store.Job) { j.AlarmEmails = []string{"ops@example.com"} })
	s := alarm.NewSender(alarm.SenderConfig{
		Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), SendTimeout: 300 * time.Millisecond, Tries: 1,
		Channels: []alarm.Channel{{Name: "email", Alarm: &alarm.Email{Addr: srv.addr, From: "carillon@example.com"}}},
	})
	if err := s.SendDue(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := st.Runs.Get(ctx, r.ID)
	if want := "email: email via " + srv.addr + ": timed out after "; err != nil || got.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_FAILED ||
		!strings.HasPrefix(got.AlarmMessage, want) {
		t.Errorf("run %d: alarm %s %q (%v), want FAILED saying %q", r.ID, got.AlarmStatus, got.AlarmMessage, err, want)
	}
	expectHangup(t, srv)
}
