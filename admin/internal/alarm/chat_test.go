package alarm_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/alarm"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// posted is one request a robot received.
type posted struct {
	raw    string // the query as sent
	query  url.Values
	header http.Header
	body   []byte
}

// robot is a chat robot on loopback: it keeps what it receives and
// answers the same to each.
type robot struct {
	*httptest.Server
	mu  sync.Mutex
	got []posted
}

func newRobot(t *testing.T, answer string) *robot {
	t.Helper()
	rb := &robot{}
	rb.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rb.mu.Lock()
		rb.got = append(rb.got, posted{r.URL.RawQuery, r.URL.Query(), r.Header.Clone(), body})
		rb.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(rb.Close)
	return rb
}

// one returns the only request rb received.
func (rb *robot) one(t *testing.T) posted {
	t.Helper()
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if len(rb.got) != 1 {
		t.Fatalf("the robot received %d requests, want 1", len(rb.got))
	}
	return rb.got[0]
}

// chatEvent is the alarm the format tests send.
var chatEvent = alarm.Event{
	RunID: 345, JobID: 12, JobDescription: "nightly report", Owner: "ops", GroupID: 3, Handler: "report",
	Status: "FAILED", Message: "disk full on /var", Attempt: 2, RetryCount: 2, ExecutorAddress: "10.0.0.5:9999",
	TriggerType: "SCHEDULE", ScheduledAt: time.Date(2025, 11, 27, 7, 59, 0, 0, time.UTC),
	FinishedAt: time.Date(2025, 11, 27, 7, 59, 30, 0, time.UTC), Final: true,
	RunURL: "https://carillon.example.com/#/runs?job=12&run=345",
}

// signedAt is the clock of the signed formats' tests: 2025-11-27 08:00 UTC.
var signedAt = time.UnixMilli(1764230400000)

const chatSecret = "SEC0123456789abcdef"

// wantMentions fails unless text names what each alarm must carry.
func wantMentions(t *testing.T, format, text string) {
	t.Helper()
	for _, want := range []string{"12", "nightly report", "345", "FAILED", "disk full on /var", "10.0.0.5:9999",
		"2025-11-27T07:59:00Z", "2025-11-27T07:59:30Z", chatEvent.RunURL} {
		if !strings.Contains(text, want) {
			t.Errorf("%s message %q does not mention %q", format, text, want)
		}
	}
}

func send(t *testing.T, w *alarm.Webhook, e alarm.Event) error {
	t.Helper()
	if w.Now == nil {
		w.Now = func() time.Time { return signedAt }
	}
	return w.Send(context.Background(), e)
}

// TestDingTalk: a markdown message, signed by the timestamp and sign
// query parameters as DingTalk documents: base64(HMAC-SHA256(key=secret,
// timestamp+"\n"+secret)), URL-escaped.
func TestDingTalk(t *testing.T) {
	t.Parallel()
	rb := newRobot(t, `{"errcode":0,"errmsg":"ok"}`)
	w := &alarm.Webhook{URL: rb.URL + "/robot/send?access_token=tok", Format: carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_DINGTALK, Secret: chatSecret}
	if err := send(t, w, chatEvent); err != nil {
		t.Fatal(err)
	}
	p := rb.one(t)
	if p.query.Get("access_token") != "tok" || p.query.Get("timestamp") != "1764230400000" {
		t.Errorf("query %v, want the access token kept and timestamp 1764230400000", p.query)
	}
	m := hmac.New(sha256.New, []byte(chatSecret))
	m.Write([]byte("1764230400000\n" + chatSecret))
	if want := base64.StdEncoding.EncodeToString(m.Sum(nil)); p.query.Get("sign") != want {
		t.Errorf("sign %q, want %q", p.query.Get("sign"), want)
	}
	// Pinned: computed apart (Python's hmac, quote_plus) for this
	// timestamp and secret; '=' must arrive URL-escaped.
	if !strings.Contains(p.raw, "sign=luVjYtDXPpMJcV92tow9felGsSTdrIbmpLbuglh6n5s%3D") {
		t.Errorf("query %q does not carry the known sign", p.raw)
	}
	var body struct {
		MsgType  string `json:"msgtype"`
		Markdown struct{ Title, Text string }
	}
	if err := json.Unmarshal(p.body, &body); err != nil || body.MsgType != "markdown" || !strings.Contains(body.Markdown.Title, "nightly report") {
		t.Fatalf("body %s (%v), want a markdown message titled with the job", p.body, err)
	}
	wantMentions(t, "DingTalk", body.Markdown.Text)
	if p.header.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type %q", p.header.Get("Content-Type"))
	}

	// A refusal (a bad signature) is answered 200 with an error code.
	refusing := newRobot(t, `{"errcode":310000,"errmsg":"sign not match"}`)
	w = &alarm.Webhook{URL: refusing.URL + "/robot/send?access_token=tok", Format: carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_DINGTALK, Secret: "wrong"}
	if err := send(t, w, chatEvent); err == nil || !strings.Contains(err.Error(), "310000 sign not match") {
		t.Errorf("a refused message: %v, want the robot's code and message", err)
	}
}

// TestFeishu: an interactive card, signed by timestamp (seconds) and sign
// body fields as Feishu documents: base64(HMAC-SHA256(key=timestamp+"\n"+
// secret, an empty message)).
func TestFeishu(t *testing.T) {
	t.Parallel()
	rb := newRobot(t, `{"code":0,"msg":"success","data":{}}`)
	w := &alarm.Webhook{URL: rb.URL + "/open-apis/bot/v2/hook/x", Format: carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_FEISHU, Secret: chatSecret}
	if err := send(t, w, chatEvent); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Timestamp, Sign string
		MsgType         string `json:"msg_type"`
		Card            struct {
			Header struct {
				Title struct{ Content string }
			}
			Elements []struct{ Tag, Content string }
		}
	}
	p := rb.one(t)
	if err := json.Unmarshal(p.body, &body); err != nil || body.MsgType != "interactive" || len(body.Card.Elements) != 1 {
		t.Fatalf("body %s (%v), want an interactive card", p.body, err)
	}
	m := hmac.New(sha256.New, []byte("1764230400\n"+chatSecret))
	if want := base64.StdEncoding.EncodeToString(m.Sum(nil)); body.Timestamp != "1764230400" || body.Sign != want {
		t.Errorf("timestamp %q sign %q, want 1764230400 and %q", body.Timestamp, body.Sign, want)
	}
	if body.Sign != "h6KBNJEgwj2DK1U0o4RnD01XtdOk1STqET2DssIq0h4=" { // computed apart, as DingTalk's
		t.Errorf("sign %q, want the known one", body.Sign)
	}
	if !strings.Contains(body.Card.Header.Title.Content, "nightly report") {
		t.Errorf("card title %q", body.Card.Header.Title.Content)
	}
	wantMentions(t, "Feishu", body.Card.Elements[0].Content)

	refusing := newRobot(t, `{"code":19021,"msg":"sign match fail or timestamp is not within one hour from current time"}`)
	w.URL = refusing.URL
	if err := send(t, w, chatEvent); err == nil || !strings.Contains(err.Error(), "19021") {
		t.Errorf("a refused message: %v, want the robot's code", err)
	}
}

// TestWeComAndSlack: WeCom's markdown message and Slack's text and
// blocks, neither signed.
func TestWeComAndSlack(t *testing.T) {
	t.Parallel()
	wecom := newRobot(t, `{"errcode":0,"errmsg":"ok"}`)
	if err := send(t, &alarm.Webhook{URL: wecom.URL + "/cgi-bin/webhook/send?key=k", Format: carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_WECOM}, chatEvent); err != nil {
		t.Fatal(err)
	}
	var wb struct {
		MsgType  string `json:"msgtype"`
		Markdown struct{ Content string }
	}
	if err := json.Unmarshal(wecom.one(t).body, &wb); err != nil || wb.MsgType != "markdown" {
		t.Fatalf("WeCom body %+v (%v), want a markdown message", wb, err)
	}
	wantMentions(t, "WeCom", wb.Markdown.Content)

	sl := newRobot(t, `ok`)
	// A job's own webhook, through the event, in its own format.
	e := chatEvent
	e.WebhookURL, e.WebhookFormat = sl.URL+"/services/T/B/X", carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_SLACK
	e.Message = "a <b> & c"
	if err := send(t, &alarm.Webhook{}, e); err != nil {
		t.Fatal(err)
	}
	var sb struct {
		Text   string
		Blocks []struct {
			Type   string
			Text   struct{ Type, Text string }
			Fields []struct{ Type, Text string }
		}
	}
	p := sl.one(t)
	if err := json.Unmarshal(p.body, &sb); err != nil || len(sb.Blocks) < 3 || sb.Blocks[0].Type != "header" || !strings.Contains(sb.Text, "nightly report") {
		t.Fatalf("Slack body %s (%v), want text and a header block", p.body, err)
	}
	var all strings.Builder
	for _, b := range sb.Blocks {
		all.WriteString(b.Text.Text + "\n")
		for _, f := range b.Fields {
			all.WriteString(f.Text + "\n")
		}
	}
	if !strings.Contains(all.String(), "a &lt;b&gt; &amp; c") {
		t.Errorf("Slack blocks %q, want the message escaped for mrkdwn", all.String())
	}
	e.Message = chatEvent.Message
	for _, want := range []string{"12", "nightly report", "345", "FAILED", "10.0.0.5:9999", "2025-11-27T07:59:00Z", "<" + chatEvent.RunURL + "|"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("Slack blocks %q do not mention %q", all.String(), want)
		}
	}
	if p.header.Get(alarm.SignatureHeader) != "" {
		t.Error("Slack's message is signed")
	}
}

// TestJSONSignature: with a secret, the JSON alarm carries
// X-Carillon-Signature: sha256= and the hex HMAC-SHA256 of the body.
func TestJSONSignature(t *testing.T) {
	t.Parallel()
	rb := newRobot(t, "")
	if err := send(t, &alarm.Webhook{URL: rb.URL, Secret: "s3cret"}, chatEvent); err != nil {
		t.Fatal(err)
	}
	p := rb.one(t)
	m := hmac.New(sha256.New, []byte("s3cret"))
	m.Write(p.body)
	if got, want := p.header.Get("X-Carillon-Signature"), "sha256="+hex.EncodeToString(m.Sum(nil)); got != want {
		t.Errorf("signature %q, want %q", got, want)
	}
	var e alarm.Event
	if err := json.Unmarshal(p.body, &e); err != nil || e.RunID != 345 || e.Message != chatEvent.Message {
		t.Errorf("body %s (%v), want the JSON alarm", p.body, err)
	}
	// Without a secret: no signature.
	plain := newRobot(t, "")
	if err := send(t, &alarm.Webhook{URL: plain.URL}, chatEvent); err != nil {
		t.Fatal(err)
	}
	if h := plain.one(t).header.Get("X-Carillon-Signature"); h != "" {
		t.Errorf("unsigned alarm has signature %q", h)
	}
}

// TestTemplate: TEMPLATE posts the template's rendering, as JSON when it
// is JSON; a template that does not parse or names no field of an alarm
// is refused by ParseTemplate.
func TestTemplate(t *testing.T) {
	t.Parallel()
	rb := newRobot(t, "")
	tmpl := `{"text": {{json (printf "%s: %s" .JobDescription .Message)}}, "run": "{{.RunID}}", "at": "{{.ScheduledAt.Format "2006-01-02"}}"}`
	if _, err := alarm.ParseTemplate(tmpl); err != nil {
		t.Fatal(err)
	}
	w := &alarm.Webhook{URL: rb.URL, Format: carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_TEMPLATE, Template: tmpl}
	if err := send(t, w, chatEvent); err != nil {
		t.Fatal(err)
	}
	p := rb.one(t)
	if want := `{"text": "nightly report: disk full on /var", "run": "345", "at": "2025-11-27"}`; string(p.body) != want || p.header.Get("Content-Type") != "application/json" {
		t.Errorf("posted %s as %q, want %s as JSON", p.body, p.header.Get("Content-Type"), want)
	}
	text := newRobot(t, "")
	w = &alarm.Webhook{URL: text.URL, Format: carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_TEMPLATE, Template: "run {{.RunID}} {{.Status}}"}
	if err := send(t, w, chatEvent); err != nil {
		t.Fatal(err)
	}
	if p := text.one(t); string(p.body) != "run 345 FAILED" || !strings.HasPrefix(p.header.Get("Content-Type"), "text/plain") {
		t.Errorf("posted %q as %q, want plain text", p.body, p.header.Get("Content-Type"))
	}
	for _, bad := range []string{"{{.Status", "{{.NoSuchField}}", "{{nosuchfunc .Status}}",
		// Loops as long as a number says: 10^12 times would hold the call for hours.
		"{{range 1000000000000}}{{end}}", "{{range .ScheduledAt.UnixNano}}{{end}}", "{{if .Final}}{{range $i := .RunID}}{{end}}{{end}}",
		`{{define "x"}}{{range .JobID}}{{end}}{{end}}{{template "x" .}}`} {
		if _, err := alarm.ParseTemplate(bad); err == nil {
			t.Errorf("ParseTemplate(%q) took it", bad)
		}
	}
	for _, good := range []string{"{{range .FailedNodes}}{{.}} {{end}}", "{{range $i, $n := $.FailedNodes}}{{$i}}={{$n}}{{else}}none{{end}}"} {
		if _, err := alarm.ParseTemplate(good); err != nil {
			t.Errorf("ParseTemplate(%q): %v", good, err)
		}
	}
}
