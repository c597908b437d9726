package alarm

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// WebhookTimeoutDefault bounds one webhook POST.
const WebhookTimeoutDefault = 10 * time.Second

// Webhook POSTs each event to URL (the admin's global webhook) in Format,
// and to the event's own WebhookURL (the job's) in the event's
// WebhookFormat, if set. Any 2xx answer is success, but for the chat
// robots, which answer 200 with an error code in the body when they refuse
// a message (a bad signature, a missing keyword): that code must be 0.
type Webhook struct {
	// URL is the global webhook; empty sends only to per-job webhooks.
	URL string
	// Format, Secret and Template are what URL receives (serve
	// --alarm-webhook-format, --alarm-webhook-secret,
	// --alarm-webhook-template), as a job's alarm_webhook_format, _secret
	// and _template are for its own webhook.
	Format   carillonv1.AlarmWebhookFormat
	Secret   string
	Template string
	// Client defaults to a client with a WebhookTimeoutDefault timeout.
	Client *http.Client
	// Now is the clock of the signatures' timestamps; nil is time.Now.
	Now func() time.Time
}

// target is one webhook and what it receives.
type target struct {
	url      string
	format   carillonv1.AlarmWebhookFormat
	secret   string
	template string
}

// Send implements Alarm. A failure of one webhook does not keep the other
// from being tried; the error names each that failed.
func (w *Webhook) Send(ctx context.Context, e Event) error {
	var targets []target
	for _, t := range []target{{w.URL, w.Format, w.Secret, w.Template}, {e.WebhookURL, e.WebhookFormat, e.WebhookSecret, e.WebhookTemplate}} {
		if t.url != "" && (len(targets) == 0 || targets[0] != t) {
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		return ErrNoRecipient
	}
	client := cmp.Or(w.Client, &http.Client{Timeout: WebhookTimeoutDefault})
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	var errs []error
	for _, t := range targets {
		req, err := t.request(ctx, e, now())
		if err == nil {
			err = post(client, req, t.format)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("webhook %s: %w", t.url, err))
		}
	}
	return errors.Join(errs...)
}

// request is the POST of e to t at now, in t's format, signed with t's
// secret where the format signs.
func (t target) request(ctx context.Context, e Event, now time.Time) (*http.Request, error) {
	url, contentType := t.url, "application/json"
	var body []byte
	var err error
	switch t.format {
	case carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_DINGTALK:
		url, body, err = dingTalk(t.url, t.secret, e, now)
	case carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_FEISHU:
		body, err = feishu(t.secret, e, now)
	case carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_WECOM:
		body, err = weCom(e)
	case carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_SLACK:
		body, err = slack(e)
	case carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_TEMPLATE:
		body, err = render(t.template, e)
		if err == nil && !json.Valid(body) {
			contentType = "text/plain; charset=utf-8"
		}
	default:
		body, err = json.Marshal(e)
	}
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "carillon-alarm")
	if t.secret != "" && signsBody(t.format) {
		req.Header.Set(SignatureHeader, "sha256="+hex.EncodeToString(hmacSHA256([]byte(t.secret), body)))
	}
	return req, nil
}

// SignatureHeader carries the signature of a JSON or TEMPLATE webhook's
// body when it has a secret: "sha256=" and the hex HMAC-SHA256 of the
// body keyed by the secret (as GitHub signs its webhooks).
const SignatureHeader = "X-Carillon-Signature"

// signsBody says whether format's secret signs the body in
// SignatureHeader (the chat robots sign as their services document).
func signsBody(format carillonv1.AlarmWebhookFormat) bool {
	switch format {
	case carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_UNSPECIFIED, carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_JSON,
		carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_TEMPLATE:
		return true
	}
	return false
}

// hmacSHA256 is the HMAC-SHA256 of msg keyed by key.
func hmacSHA256(key, msg []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return m.Sum(nil)
}

// post sends req; a chat robot's answer must also carry error code 0.
func post(client *http.Client, req *http.Request, format carillonv1.AlarmWebhookFormat) error {
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("answered %s", res.Status)
	}
	switch format {
	case carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_DINGTALK, carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_FEISHU,
		carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_WECOM:
		return robotAnswer(answer)
	}
	return nil
}

// robotAnswer checks a chat robot's answer: DingTalk and WeCom say
// {"errcode":0,"errmsg":"ok"}, Feishu {"code":0,"msg":"success"} (older
// bots {"StatusCode":0}); another code is the robot's refusal.
func robotAnswer(answer []byte) error {
	var a struct {
		ErrCode    *int   `json:"errcode"`
		ErrMsg     string `json:"errmsg"`
		Code       *int   `json:"code"`
		Msg        string `json:"msg"`
		StatusCode *int   `json:"StatusCode"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		return nil // not the robot's JSON: the 2xx says enough
	}
	for _, c := range []struct {
		code *int
		msg  string
	}{{a.ErrCode, a.ErrMsg}, {a.Code, a.Msg}, {a.StatusCode, ""}} {
		if c.code != nil && *c.code != 0 {
			return fmt.Errorf("the robot refused the message: code %d %s", *c.code, c.msg)
		}
	}
	return nil
}
