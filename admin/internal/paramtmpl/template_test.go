package paramtmpl_test

import (
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/paramtmpl"
)

// The scheduled instant renders in the job's zone, before and after
// AddDate; the other fields as given.
func TestRender(t *testing.T) {
	t.Parallel()
	// 2026-03-01 23:30 UTC is already 2 March in Shanghai (UTC+8).
	at := time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC)
	d := paramtmpl.Data{ScheduledAt: at, JobID: 3, RunID: 9, Attempt: 2, ShardIndex: 1, ShardTotal: 4}
	for _, c := range []struct{ name, src, zone, want string }{
		{"Literal", "no braces", "", "no braces"},
		{"UTC", `{{.ScheduledAt.Format "2006-01-02 15:04"}}`, "", "2026-03-01 23:30"},
		{"Zone", `{{.ScheduledAt.Format "2006-01-02 15:04 MST"}}`, "Asia/Shanghai", "2026-03-02 07:30 CST"},
		{"Yesterday", `{{(.ScheduledAt.AddDate 0 0 -1).Format "20060102"}}`, "Asia/Shanghai", "20260301"},
		{"YesterdayUTC", `{{(.ScheduledAt.AddDate 0 0 -1).Format "20060102"}}`, "UTC", "20260228"},
		{"Fields", `job={{.JobID}} run={{.RunID}} attempt={{.Attempt}} shard={{.ShardIndex}}/{{.ShardTotal}}`, "", "job=3 run=9 attempt=2 shard=1/4"},
		{"Builtins", `{{if eq .ShardIndex 1}}{{printf "%03d" .JobID}}{{else}}x{{end}}`, "", "003"},
		{"JSON", `{"day":"{{.ScheduledAt.Format "2006-01-02"}}"}`, "Europe/Paris", `{"day":"2026-03-02"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tm, err := paramtmpl.Parse(c.src, c.zone)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tm.Render(d)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("Render(%q) = %q, want %q", c.src, got, c.want)
			}
		})
	}
}

// Templates that do not parse, call what is not data, loop or call
// templates are refused, saying why.
func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ src, zone, want string }{
		{"{{.ScheduledAt", "", "unclosed action"},
		{`{{env "HOME"}}`, "", `function "env" not defined`},
		{`{{range 1000000000}}x{{end}}`, "", "may not use range"},
		{`{{if true}}{{range 3}}{{end}}{{end}}`, "", "may not use range"},
		{`{{define "x"}}{{end}}`, "", "may not define templates"},
		{`{{template "param"}}`, "", "may not call templates"},
		{`{{.JobID}}`, "Mars/Olympus", "unknown time zone"},
	} {
		_, err := paramtmpl.Parse(c.src, c.zone)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error saying %q", c.src, err, c.want)
		}
	}
}

// A render that fails (a field that is not there) or grows past MaxBytes
// is an error, not a param.
func TestRenderFails(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ src, want string }{
		{`{{.Day}}`, "can't evaluate field Day"},
		{`{{printf "%0900000d" 1}}`, "longer than 65536 bytes"},
	} {
		tm, err := paramtmpl.Parse(c.src, "")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tm.Render(paramtmpl.Data{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Render(%q) = %q, %v; want an error saying %q", c.src, got, err, c.want)
		}
	}
}

// The cache parses a job's template once per definition: a new
// updated_at or source parses again.
func TestCache(t *testing.T) {
	t.Parallel()
	var c paramtmpl.Cache
	t0 := time.Unix(100, 0)
	a, err := c.Get(1, t0, "{{.JobID}}", "")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := c.Get(1, t0, "{{.JobID}}", ""); b != a {
		t.Error("the same definition was parsed again")
	}
	if b, _ := c.Get(1, t0.Add(time.Second), "{{.RunID}}", ""); b == a {
		t.Error("an updated definition was not parsed again")
	} else if got, _ := b.Render(paramtmpl.Data{RunID: 5}); got != "5" {
		t.Errorf("the updated definition renders %q, want 5", got)
	}
	if _, err := c.Get(2, t0, "{{", ""); err == nil {
		t.Error("a bad template was not refused")
	}
}
