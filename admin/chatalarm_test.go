package admin_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestChatAlarms: a run that fails on a real executor alarms its job's
// DingTalk robot (on loopback), signed with the job's secret as DingTalk
// documents, and the admin's Slack webhook (serve --alarm-webhook-format
// slack), each message naming the job, the run, the status, the message
// and linking to the run's page at --public-url; the run
// records both deliveries.
func TestChatAlarms(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type request struct {
		query url.Values
		body  []byte
	}
	var mu sync.Mutex
	got := map[string][]request{}
	robot := func(name, answer string) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			got[name] = append(got[name], request{r.URL.Query(), body})
			mu.Unlock()
			_, _ = io.WriteString(w, answer)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	dingTalk := robot("dingtalk", `{"errcode":0,"errmsg":"ok"}`)
	slack := robot("slack", "ok")

	a := startAdminWith(t, admin.Config{AlarmWebhook: slack.URL + "/services/T/B/X", AlarmWebhookFormat: "slack",
		PublicURL: "https://carillon.example.com"}, http.DefaultClient)
	c := newClients(a.URL, http.DefaultClient)
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "chat"}})
	if err != nil {
		t.Fatal(err)
	}
	startExecutor(t, a.URL, "chat")
	const secret = "SECe2e-secret"
	j := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "nightly report", Handler: "fail", Param: "disk full",
		Schedule:        &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE},
		AlarmWebhookUrl: dingTalk.URL + "/robot/send?access_token=tok", AlarmWebhookSecret: secret,
		AlarmWebhookFormat: carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_DINGTALK})
	// A run triggered before the executor registered would fail for want
	// of one, with another message.
	awaitExecutors(t, a, c, g.Group.Id, 1)
	tr, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: j.Id})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.RunIds) != 1 {
		t.Fatalf("TriggerJob made runs %v, want 1", tr.RunIds)
	}
	runID := tr.RunIds[0]
	var run *carillonv1.Run
	eventually(t, a.URL, 30*time.Second, func() error {
		res, err := c.run.GetRun(ctx, &carillonv1.GetRunRequest{Id: runID})
		if err != nil {
			return err
		}
		if run = res.Run; run.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_SENT {
			return fmt.Errorf("run %d: alarm %s %q, want SENT", runID, run.AlarmStatus, run.AlarmMessage)
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got["dingtalk"]) != 1 || len(got["slack"]) != 1 {
		t.Fatalf("the robots received %d (DingTalk) and %d (Slack) messages, want 1 each", len(got["dingtalk"]), len(got["slack"]))
	}
	d := got["dingtalk"][0]
	ts := d.query.Get("timestamp")
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "\n" + secret))
	if ts == "" || d.query.Get("sign") != base64.StdEncoding.EncodeToString(m.Sum(nil)) || d.query.Get("access_token") != "tok" {
		t.Errorf("DingTalk query %v, not signed with the job's secret", d.query)
	}
	var dm struct{ Markdown struct{ Text string } }
	if err := json.Unmarshal(d.body, &dm); err != nil {
		t.Fatal(err)
	}
	runURL := fmt.Sprintf("https://carillon.example.com/#/runs?job=%d&run=%d", j.Id, runID)
	var sm any // Slack's JSON, without its escapes of & < >
	if err := json.Unmarshal(got["slack"][0].body, &sm); err != nil {
		t.Fatal(err)
	}
	var slackText strings.Builder
	enc := json.NewEncoder(&slackText)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(sm); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"DingTalk": dm.Markdown.Text, "Slack": slackText.String()} {
		// (The executor's address is left out when the result was settled
		// before the run's dispatch was recorded: the alarm package's tests
		// check it is shown.)
		for _, want := range []string{"nightly report", fmt.Sprint(j.Id), fmt.Sprint(runID), "FAILED", "disk full", runURL} {
			if !strings.Contains(text, want) {
				t.Errorf("%s message does not mention %q:\n%s", name, want, text)
			}
		}
	}
}
