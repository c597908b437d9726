package server

import (
	"fmt"
	"regexp"
	"unicode"
	"unicode/utf8"

	"github.com/carillonhq/carillon/admin/internal/auth"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Limits on request fields, checked by validate before any handler runs.
// Handlers check the rest (required fields, enum values, cron, time zones,
// URLs, that groups and child jobs exist).
const (
	// MaxRequestBytes bounds one management request message.
	MaxRequestBytes = 1 << 20
	// MaxRegistryRequestBytes bounds one RegistryService request (a batch of
	// results with messages).
	MaxRegistryRequestBytes = 4 << 20

	maxShortText  = 255       // description, owner, handler, title, filters
	maxParam      = 64 << 10  // job param, trigger param
	maxScript     = 512 << 10 // script source
	maxURLLen     = 2048      // executor addresses, webhook URL
	maxAddresses  = 100       // MANUAL group addresses, trigger addresses
	maxEmails     = 20        // alarm e-mails
	maxChildren   = 64        // child jobs
	maxCron       = 255       // cron expression
	maxTimeZone   = 64        // IANA zone name
	maxTimeout    = 30 * 86400
	maxInterval   = 366 * 86400
	maxGrants     = 1000
	maxResults    = 10_000 // results in one ReportResults batch
	maxTokenTTL   = 10 * 366 * 86400
	maxTokenName  = 64
	maxUsername   = 64
	maxAuditQuery = 128
)

// usernamePattern: 3 to 64 letters, digits, '.', '_', '@' or '-', starting
// with a letter or digit.
var usernamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{2,63}$`)

func positiveID(field string, id int64) error {
	if id <= 0 {
		return invalid(field, "required: a positive id, got %d", id)
	}
	return nil
}

// maxLen requires s to be valid UTF-8 of at most n bytes.
func maxLen(field, s string, n int) error {
	if len(s) > n {
		return invalid(field, "must be at most %d bytes, got %d", n, len(s))
	}
	if !utf8.ValidString(s) {
		return invalid(field, "must be valid UTF-8")
	}
	return nil
}

// checkText refuses control characters (NUL included) in s: a name, a
// handler or a title with one cannot be matched or shown. Multi-line text
// (a description, a param, a script) may hold line breaks and tabs.
// Names, titles and descriptions (checkName, checkProse) refuse Unicode
// bidi controls besides.
func checkText(field, s string, multiLine bool) error {
	for i, r := range s {
		if !unicode.IsControl(r) || (multiLine && (r == '\n' || r == '\r' || r == '\t')) {
			continue
		}
		what := "control characters"
		if multiLine {
			what = "control characters other than line breaks and tabs"
		}
		return invalid(field, "must not contain %s, got %U at byte %d", what, r, i)
	}
	return nil
}

// isBidiControl reports whether r is a Unicode bidi embedding, override or
// isolate control (U+202A to U+202E, U+2066 to U+2069): shown in a list or
// a log line, one reorders the text after it, so that a name can read as
// another ("Trojan Source").
func isBidiControl(r rune) bool {
	return (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069')
}

// checkBidi refuses bidi controls (isBidiControl) in s.
func checkBidi(field, s string) error {
	for i, r := range s {
		if isBidiControl(r) {
			return invalid(field, "must not contain Unicode bidi controls (U+202A to U+202E, U+2066 to U+2069), got %U at byte %d", r, i)
		}
	}
	return nil
}

// checkContent checks a param or a script: line breaks and tabs, but no
// other control characters.
func checkContent(field, s string) error { return checkText(field, s, true) }

// checkName checks a one-line name or title that people read: no control
// characters, no bidi controls.
func checkName(field, s string) error {
	if err := checkText(field, s, false); err != nil {
		return err
	}
	return checkBidi(field, s)
}

// checkProse checks a description: line breaks and tabs, but no other
// control characters and no bidi controls.
func checkProse(field, s string) error {
	if err := checkText(field, s, true); err != nil {
		return err
	}
	return checkBidi(field, s)
}

func checkAddresses(field string, addrs []string) error {
	if len(addrs) > maxAddresses {
		return invalid(field, "at most %d addresses, got %d", maxAddresses, len(addrs))
	}
	for i, a := range addrs {
		if err := maxLen(fmt.Sprintf("%s[%d]", field, i), a, maxURLLen); err != nil {
			return err
		}
		if err := checkName(fmt.Sprintf("%s[%d]", field, i), a); err != nil {
			return err
		}
	}
	return nil
}

func checkGroupLimits(g *carillonv1.Group) error {
	if g == nil {
		return nil // the handler says it is required
	}
	if err := maxLen("group.app_name", g.AppName, maxShortText); err != nil {
		return err
	}
	if err := maxLen("group.title", g.Title, maxShortText); err != nil {
		return err
	}
	if err := checkName("group.title", g.Title); err != nil {
		return err
	}
	return checkAddresses("group.addresses", g.Addresses)
}

func checkScheduleLimits(field string, s *carillonv1.Schedule) error {
	if s == nil {
		return nil // the handler says it is required
	}
	if err := maxLen(field+".cron", s.Cron, maxCron); err != nil {
		return err
	}
	if err := maxLen(field+".time_zone", s.TimeZone, maxTimeZone); err != nil {
		return err
	}
	if s.IntervalSeconds < 0 || s.IntervalSeconds > maxInterval {
		return invalid(field+".interval_seconds", "must be between 1 and %d (366 days), got %d", maxInterval, s.IntervalSeconds)
	}
	return nil
}

// checkJobLimits bounds a job's sizes; checkJob (in the handler) does the
// rest once defaults and the update mask are applied.
func checkJobLimits(j *carillonv1.Job) error {
	if j == nil {
		return nil // the handler says it is required
	}
	// A param and a script are the handler's input, shown as code: they
	// keep what their author wrote, bidi controls included.
	for _, f := range []struct {
		field, value string
		max          int
		check        func(field, s string) error
	}{
		{"job.description", j.Description, maxShortText, checkProse},
		{"job.owner", j.Owner, maxShortText, checkName},
		{"job.handler", j.Handler, maxShortText, checkName},
		{"job.param", j.Param, maxParam, checkContent},
		{"job.script.source", j.GetScript().GetSource(), maxScript, checkContent},
		{"job.alarm_webhook_url", j.AlarmWebhookUrl, maxURLLen, checkName},
	} {
		if err := maxLen(f.field, f.value, f.max); err != nil {
			return err
		}
		if err := f.check(f.field, f.value); err != nil {
			return err
		}
	}
	if len(j.AlarmEmails) > maxEmails {
		return invalid("job.alarm_emails", "at most %d addresses, got %d", maxEmails, len(j.AlarmEmails))
	}
	for i, e := range j.AlarmEmails {
		if err := maxLen(fmt.Sprintf("job.alarm_emails[%d]", i), e, maxShortText); err != nil {
			return err
		}
		if err := checkName(fmt.Sprintf("job.alarm_emails[%d]", i), e); err != nil {
			return err
		}
	}
	if len(j.ChildJobIds) > maxChildren {
		return invalid("job.child_job_ids", "at most %d child jobs, got %d", maxChildren, len(j.ChildJobIds))
	}
	if j.TimeoutSeconds > maxTimeout {
		return invalid("job.timeout_seconds", "must be at most %d (30 days), got %d", maxTimeout, j.TimeoutSeconds)
	}
	return checkScheduleLimits("job.schedule", j.Schedule)
}

func checkUserLimits(u *carillonv1.User) error {
	if len(u.GroupIds) > maxGrants {
		return invalid("user.group_ids", "at most %d groups, got %d", maxGrants, len(u.GroupIds))
	}
	for i, id := range u.GroupIds {
		if id <= 0 {
			return invalid(fmt.Sprintf("user.group_ids[%d]", i), "must be a group id, got %d", id)
		}
	}
	return nil
}

func checkPassword(field, pw string) error {
	if pw == "" {
		return invalid(field, "required")
	}
	if err := auth.CheckPasswordRules(pw); err != nil {
		return invalid(field, "must be %d to %d bytes, got %d", auth.PasswordMinLen, auth.PasswordMaxLen, len(pw))
	}
	return nil
}
