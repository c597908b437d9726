package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCLIChatAlarm: job create and update set a job's alarm format,
// secret and template; the secret is never shown, only that one is set;
// an update without --alarm-secret keeps it, --alarm-secret "" clears it;
// a refused change names the field.
func TestCLIChatAlarm(t *testing.T) {
	t.Parallel()
	url := serveAdmin(t, nil)
	b := newCLI(t)
	cfg := filepath.Join(b.home, "config.json")
	as := func(args ...string) []string { return append(args, "--config", cfg) }
	b.must(testPassword+"\n", as("login", "--server", url, "--user", "admin", "--password-stdin")...)
	b.must("", as("group", "create", "cli")...)

	const secret = "SECchat-never-shown"
	out := b.must("", as("job", "create", "--group", "1", "--description", "chat", "--handler", "h", "--no-schedule",
		"--alarm-webhook", "https://oapi.dingtalk.com/robot/send?access_token=t", "--alarm-format", "dingtalk", "--alarm-secret", secret)...)
	signed := regexp.MustCompile(`Alarm format:\s+dingtalk, signed \(secret set\)\n`)
	if !signed.MatchString(out) || strings.Contains(out, secret) {
		t.Errorf("job create:\n%s", out)
	}
	if out := b.must("", as("job", "update", "1", "--description", "chat 2")...); !signed.MatchString(out) {
		t.Errorf("job update without --alarm-secret did not keep it:\n%s", out)
	}
	b.fails(exitRefused, "invalid_argument: job.alarm_webhook_secret: ALARM_WEBHOOK_FORMAT_SLACK does not sign its messages",
		as("job", "update", "1", "--alarm-format", "slack")...)
	if out := b.must("", as("job", "update", "1", "--alarm-format", "slack", "--alarm-secret", "")...); !regexp.MustCompile(`Alarm format:\s+slack\n`).MatchString(out) {
		t.Errorf("job update --alarm-format slack --alarm-secret '':\n%s", out)
	}
	b.fails(exitRefused, "invalid_argument: job.alarm_webhook_template: required with ALARM_WEBHOOK_FORMAT_TEMPLATE",
		as("job", "update", "1", "--alarm-format", "template")...)
	out = b.must("", as("job", "update", "1", "--alarm-format", "template", "--alarm-template", `{"text": {{json .Message}}}`)...)
	if !regexp.MustCompile(`Alarm format:\s+template:\n\s+\{"text": \{\{json .Message\}\}\}\n`).MatchString(out) {
		t.Errorf("job update --alarm-template:\n%s", out)
	}
	b.fails(exitUsage, `--alarm-format: unknown value "teams"`, as("job", "update", "1", "--alarm-format", "teams")...)
	if out := b.must("", as("job", "get", "1")...); strings.Contains(out, secret) {
		t.Errorf("job get shows the secret:\n%s", out)
	}
}
