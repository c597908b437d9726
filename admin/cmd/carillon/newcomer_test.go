package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// loggedIn serves an admin without executors and returns a runner logged
// in to it as the ADMIN, and the function that adds the session's config
// file to a command line.
func loggedIn(t *testing.T) (*runner, func(args ...string) []string) {
	t.Helper()
	url := serveAdmin(t, nil)
	b := newCLI(t)
	cfg := filepath.Join(b.home, "config.json")
	as := func(args ...string) []string { return append(args, "--config", cfg) }
	b.must(testPassword+"\n", as("login", "--server", url, "--user", "admin", "--password-stdin")...)
	return b, as
}

// TestJobPreviewNeverFires: a schedule without a fire to come says so,
// instead of printing a header alone; a job cannot be created on a cron
// that never fires.
func TestJobPreviewNeverFires(t *testing.T) {
	t.Parallel()
	b, as := loggedIn(t)
	out := b.must("", as("job", "preview", "--cron", "0 0 0 30 2 ?")...)
	if !strings.HasPrefix(out, "never fires after now") || strings.Contains(out, "FIRE TIME") {
		t.Errorf("job preview of Feb 30: %q", out)
	}
	out = b.must("", as("job", "preview", "--cron", "* * * * * ? 2020", "--from", "2021-01-01T00:00:00Z")...)
	if !strings.HasPrefix(out, "never fires after 2021-01-01T00:00:00Z") {
		t.Errorf("job preview of a year gone by: %q", out)
	}
	b.must("", as("group", "create", "app")...)
	b.fails(exitRefused, "never fires", as("job", "create", "--group", "1", "--description", "never", "--handler", "h", "--cron", "0 0 0 30 2 ?")...)
}

// TestCLIFlagsNewcomersTry: --every, --delay and --timeout take durations
// as --retry-delay does (numbers of seconds still work); an admin address
// without its scheme is a usage error saying what to write; job trigger
// says what it did; dashboard counts the same 7 days as the console.
func TestCLIFlagsNewcomersTry(t *testing.T) {
	t.Parallel()
	b, as := loggedIn(t)
	b.must("", as("group", "create", "app")...)
	for _, tt := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--every", "5m"}, `Schedule:\s+every 300s\n`},
		{[]string{"--every", "45"}, `Schedule:\s+every 45s\n`},
		{[]string{"--delay", "1h30m", "--timeout", "90s"}, `Schedule:\s+5400s after each run\n(?s:.*)Timeout:\s+1m30s\n`},
	} {
		args := append([]string{"job", "create", "--group", "1", "--description", "d", "--handler", "h"}, tt.flags...)
		out := b.must("", as(args...)...)
		if !regexp.MustCompile(tt.want).MatchString(out) {
			t.Errorf("job create %v: no %s in\n%s", tt.flags, tt.want, out)
		}
	}
	b.fails(exitUsage, `want whole seconds, not 1.5s`, as("job", "create", "--group", "1", "--description", "d", "--handler", "h", "--every", "1500ms")...)
	b.fails(exitUsage, `want a duration such as 30s`, as("job", "create", "--group", "1", "--description", "d", "--handler", "h", "--delay", "soon")...)
	b.fails(exitUsage, `out of range`, as("job", "update", "1", "--every", "-5s")...)
	if out := b.must("", as("job", "preview", "--every", "1m", "--from", "2026-01-01T00:00:00Z", "--count", "1", "--tz", "UTC")...); out != "FIRE TIME (UTC)\n2026-01-01T00:01:00Z\n" {
		t.Errorf("job preview --every 1m: %q", out)
	}

	errOut := b.fails(exitUsage, `--server "127.0.0.1:8080": want the admin's URL`, as("job", "list", "--server", "127.0.0.1:8080")...)
	if !strings.Contains(errOut, "write its scheme, http://127.0.0.1:8080") {
		t.Errorf("no hint in %q", errOut)
	}
	b.env = []string{"CARILLON_SERVER=localhost:8080"}
	b.fails(exitUsage, `CARILLON_SERVER "localhost:8080": want the admin's URL`, as("job", "list")...)
	b.env = nil

	out := b.must("", as("job", "trigger", "1")...)
	if !regexp.MustCompile(`^triggered job 1: (run \d+ \(carillon run get|no run was made)`).MatchString(out) || strings.HasPrefix(out, "RUN") {
		t.Errorf("job trigger: %q", out)
	}

	// A dry run of run delete counts and deletes nothing.
	b.waitFor(`\d+\s+1\s+FAILED`, as("run", "list", "--job", "1")...)
	out = b.must("", as("run", "delete", "--older-than", "0s", "--dry-run")...)
	if out != "would delete 1 runs (dry run: nothing deleted)\n" {
		t.Errorf("run delete --dry-run: %q", out)
	}
	if ids := b.must("", as("run", "list", "--ids")...); strings.Count(ids, "\n") != 1 {
		t.Errorf("runs after a dry run: %q", ids)
	}

	out = b.must("", as("dashboard")...)
	if days := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d\s`).FindAllString(out, -1); len(days) != 7 || !strings.Contains(out, "(7 days)") {
		t.Errorf("dashboard: %d days, want 7:\n%s", len(days), out)
	}
}

// TestCompletionOffersValues: the shell completes the values of the flags
// that take one of a few words.
func TestCompletionOffersValues(t *testing.T) {
	t.Parallel()
	b := newCLI(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"job", "create", "--route", ""}, "round_robin\n"},
		{[]string{"job", "update", "1", "--block", ""}, "discard_later\n"},
		{[]string{"job", "create", "--misfire", ""}, "fire_once_now\n"},
		{[]string{"run", "list", "--status", ""}, "succeeded\n"},
		{[]string{"group", "create", "app", "--protocol", ""}, "xxl-job\n"},
	} {
		out := b.must("", append([]string{"__complete"}, tt.args...)...)
		if !strings.Contains(out, tt.want) || strings.Contains(out, "unspecified") {
			t.Errorf("complete %v: %q, want %q among the values", tt.args, out, tt.want)
		}
	}
}

// TestTableAlignsWideCharacters: columns line up on a terminal when cells
// hold CJK characters (two columns each) or combining marks (none).
func TestTableAlignsWideCharacters(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s string
		w int
	}{{"", 0}, {"abc", 3}, {"示例执行器", 10}, {"ｗｉｄｅ", 8}, {"e\u0301", 1}, {"한국어", 6}, {"日本語 ok", 9}, {"a\nlonger line", 11}} {
		if got := displayWidth(tt.s); got != tt.w {
			t.Errorf("displayWidth(%q) = %d, want %d", tt.s, got, tt.w)
		}
	}
	got := table([][]string{{"ID", "TITLE", "APP"}, {"1", "示例执行器", "sample"}, {"22", "plain", "x"}, {"3", "混合 mixed", "last column unpadded"}})
	want := "ID  TITLE       APP\n" +
		"1   示例执行器  sample\n" +
		"22  plain       x\n" +
		"3   混合 mixed  last column unpadded\n"
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

// TestCLITablesWithChineseTitles: group list, job list and import
// --dry-run line up their columns when titles are Chinese.
func TestCLITablesWithChineseTitles(t *testing.T) {
	t.Parallel()
	b, as := loggedIn(t)
	b.must("", as("group", "create", "sample", "--title", "示例执行器")...)
	b.must("", as("group", "create", "plain", "--title", "Plain executors")...)
	b.must("", as("job", "create", "--group", "1", "--description", "每日报表", "--handler", "report", "--no-schedule")...)
	b.must("", as("job", "create", "--group", "2", "--description", "nightly report", "--handler", "report", "--no-schedule")...)
	aligned := func(what, out, column string) {
		t.Helper()
		var at []int
		for line := range strings.Lines(out) {
			if i := strings.Index(line, column); i >= 0 {
				at = append(at, displayWidth(line[:i]))
			}
		}
		for _, a := range at {
			if a != at[0] {
				t.Errorf("%s: column %q starts at %v, not in one column:\n%s", what, column, at, out)
				return
			}
		}
		if len(at) < 2 {
			t.Errorf("%s: %q on %d lines:\n%s", what, column, len(at), out)
		}
	}
	out := b.must("", as("group", "list")...)
	aligned("group list", out, "AUTO")
	out = b.must("", as("job", "list")...)
	aligned("job list", out, "none")
	src, err := os.ReadFile(filepath.Join("..", "..", "internal", "xxljob", "testdata", "import", "xxl-job-2.4.sql"))
	if err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(t.TempDir(), "dump.sql")
	// Other app names than the groups above have.
	if err := os.WriteFile(dump, []byte(strings.ReplaceAll(string(src), "'py-scripts'", "'py-scripts-2'")), 0o600); err != nil {
		t.Fatal(err)
	}
	out = b.must("", as("import", "xxl-job", "--dry-run", dump)...)
	groups, _, _ := strings.Cut(out, "\n\n")
	aligned("import --dry-run", groups, "AUTO")
}

// TestHealthcheck: carillon healthcheck exits 0 against a ready admin,
// found from CARILLON_LISTEN as in the container (0.0.0.0 dialled on
// loopback), and 1 saying why against one not ready or not there.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	url := serveAdmin(t, nil)
	waitFor(t, 20*time.Second, "ready (the first scan done)", func() (bool, error) {
		res, err := http.Get(url + "/readyz")
		if err != nil {
			return false, err
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK, nil
	})
	b := newCLI(t)
	port := url[strings.LastIndex(url, ":")+1:]
	b.env = []string{"CARILLON_LISTEN=0.0.0.0:" + port}
	if out := b.must("", "healthcheck"); !strings.Contains(out, "ready") {
		t.Errorf("healthcheck of a ready admin: %q", out)
	}
	b.must("", "healthcheck", "--live")
	b.env = nil
	b.must("", "healthcheck", "--url", url+"/readyz")

	notReady := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "not ready: schedule: the last scan failed", http.StatusServiceUnavailable)
	}))
	defer notReady.Close()
	b.fails(exitFailure, "503 Service Unavailable: not ready: schedule: the last scan failed", "healthcheck", "--url", notReady.URL+"/readyz")
	gone := freeAddr(t)
	b.env = []string{"CARILLON_LISTEN=" + gone}
	b.fails(exitFailure, "connection refused", "healthcheck")
	b.env = []string{"CARILLON_LISTEN=nonsense"}
	b.fails(exitUsage, `CARILLON_LISTEN "nonsense"`, "healthcheck")
}

// TestPrintConfigValidates: --print-config prints the options and then
// checks them as serve would, exiting 2 naming each bad one and where it
// came from; a good configuration exits 0.
func TestPrintConfigValidates(t *testing.T) {
	t.Parallel()
	b := newCLI(t)
	b.must("", "serve", "--print-config", "--listen", "127.0.0.1:9090")
	b.env = []string{"CARILLON_LISTEN=127.0.0.1", "CARILLON_SMTP_ADDR=mail:25", "CARILLON_SMTP_TLS=ssl", "CARILLON_SMTP_OAUTH2_TOKEN=t",
		"CARILLON_PUBLIC_URL=carillon.example.com", "CARILLON_ALARM_WEBHOOK_FORMAT=template", "CARILLON_LEASE_DURATION=500ms", "CARILLON_FIRES_PER_ADMIN=-1"}
	code, out, errOut := b.run("", "serve", "--print-config", "--log-level", "loud", "--alarm-webhook", "hooks.example.com")
	if code != exitUsage || !strings.HasPrefix(out, "OPTION") {
		t.Fatalf("--print-config of a bad configuration: exit %d, printed\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"the configuration above would not start",
		`listen: "127.0.0.1": want HOST:PORT`, "(from env CARILLON_LISTEN)",
		"smtp-from: required with --smtp-addr (from default)",
		`smtp-tls: "ssl": want starttls, opportunistic, implicit or none (from env CARILLON_SMTP_TLS)`,
		"smtp-oauth2-token: needs --smtp-username, the account it authenticates (from env CARILLON_SMTP_OAUTH2_TOKEN)",
		"--log-level",
		`alarm-webhook: "hooks.example.com": want an http:// or https:// URL (from flag --alarm-webhook)`,
		`public-url: "carillon.example.com": want an http:// or https:// URL without a query or fragment (from env CARILLON_PUBLIC_URL)`,
		"alarm-webhook-template: required with --alarm-webhook-format template",
		"lease-duration: 500ms: want 1s to 1m (from env CARILLON_LEASE_DURATION)",
		"fires-per-admin: -1: want 0 (every admin shares) or more (from env CARILLON_FIRES_PER_ADMIN)",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("no %q in:\n%s", want, errOut)
		}
	}
	// serve itself refuses the same, before it creates anything.
	b.fails(exitUsage, "smtp-from: required", "serve", "--listen", freeAddr(t), "--db", filepath.Join(b.dir, "new.db"))
	if entries, _ := os.ReadDir(b.dir); len(entries) != 0 {
		t.Errorf("a refused serve left %v", entries)
	}
}

// TestDockerfile: the Dockerfile's example publishes the metrics port on
// loopback only, its HEALTHCHECK is carillon healthcheck, and .dockerignore
// keeps no database or log out of a fresh checkout in the image.
func TestDockerfile(t *testing.T) {
	t.Parallel()
	d, err := os.ReadFile("../../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	s := string(d)
	if !strings.Contains(s, "-p 127.0.0.1:9464:9464") || regexp.MustCompile(`-p 9464:9464`).MatchString(s) {
		t.Error("the Dockerfile's example publishes the metrics port beyond loopback")
	}
	if !regexp.MustCompile(`(?m)^HEALTHCHECK .*\n?\s*CMD \["/usr/local/bin/carillon", "healthcheck"\]`).MatchString(s) {
		t.Error("the Dockerfile has no HEALTHCHECK running carillon healthcheck")
	}
	ignore, err := os.ReadFile("../../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"*.db", "*.log", "artifacts"} {
		if !strings.Contains(string(ignore), "\n"+want+"\n") {
			t.Errorf(".dockerignore does not leave out %s", want)
		}
	}
}

// TestEnumNameSaysNone: the CLI shows an unset enum as "none", never
// UNSPECIFIED.
func TestEnumNameSaysNone(t *testing.T) {
	t.Parallel()
	if got := enumName(carillonv1.TriggerType_TRIGGER_TYPE_UNSPECIFIED, "TRIGGER_TYPE_"); got != "none" {
		t.Errorf("enumName(UNSPECIFIED) = %q", got)
	}
	if got := enumName(carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN, "ROUTE_STRATEGY_"); got != "ROUND_ROBIN" {
		t.Errorf("enumName(ROUND_ROBIN) = %q", got)
	}
}
