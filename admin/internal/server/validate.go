package server

import (
	"fmt"
	"unicode"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Limits on requests. The limits of their fields (lengths, ranges, list
// sizes) are buf.validate rules in the .proto files, checked by shape
// before any handler runs; the checks here say what those rules cannot:
// which characters a name may hold, and an id an update requires.
// Handlers check the rest (required fields once an update mask is
// applied, cron, time zones, URLs, that groups and child jobs exist).
const (
	// MaxRequestBytes bounds one management request message.
	MaxRequestBytes = 1 << 20
	// MaxRegistryRequestBytes bounds one RegistryService request (a batch of
	// results with messages).
	MaxRegistryRequestBytes = 4 << 20

	// maxResults bounds the results in one ReportResults batch: the
	// results rule of ReportResultsRequest, checked by hand on the
	// executors' hot path (TestReportResultsLimitIsTheRule keeps the two
	// equal).
	maxResults = 10_000
)

func positiveID(field string, id int64) error {
	if id <= 0 {
		return invalid(field, "required: a positive id, got %d", id)
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

// checkAddresses checks each of a list of executor URLs as a name.
func checkAddresses(field string, addrs []string) error {
	for i, a := range addrs {
		if err := checkName(fmt.Sprintf("%s[%d]", field, i), a); err != nil {
			return err
		}
	}
	return nil
}

// checkGroupText checks the characters of a group's title and addresses.
func checkGroupText(g *carillonv1.Group) error {
	if err := checkName("group.title", g.GetTitle()); err != nil {
		return err
	}
	return checkAddresses("group.addresses", g.GetAddresses())
}

// checkJobText checks the characters of a job's texts; checkJob (in the
// handler) does the rest once defaults and the update mask are applied.
func checkJobText(j *carillonv1.Job) error {
	// A param and a script are the handler's input, shown as code: they
	// keep what their author wrote, bidi controls included.
	for _, f := range []struct {
		field, value string
		check        func(field, s string) error
	}{
		{"job.description", j.GetDescription(), checkProse},
		{"job.owner", j.GetOwner(), checkName},
		{"job.handler", j.GetHandler(), checkName},
		{"job.param", j.GetParam(), checkContent},
		{"job.script.source", j.GetScript().GetSource(), checkContent},
		{"job.alarm_webhook_url", j.GetAlarmWebhookUrl(), checkName},
	} {
		if err := f.check(f.field, f.value); err != nil {
			return err
		}
	}
	for i, e := range j.GetAlarmEmails() {
		if err := checkName(fmt.Sprintf("job.alarm_emails[%d]", i), e); err != nil {
			return err
		}
	}
	return nil
}
