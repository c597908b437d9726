package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/internal/admintest"
	"github.com/carillonhq/carillon/admin/internal/testca"
	"github.com/carillonhq/carillon/sdk"
)

const testPassword = "cli test password"

// longLogLines is how many lines the handler "long" logs: more than one
// page of ReadRunLog.
const longLogLines = 2*sdk.LogPageMaxLines + 500

// failMessage is what the handler "fail-long" fails with: long, of two lines.
const failMessage = "the report could not be written because the disk of the report server is full\nfree some space and retry"

// startAdmin serves a real admin on loopback, with an SDK executor for the
// app "cli" (handler "hello" logs three lines, "long" longLogLines lines,
// "fail-long" fails with failMessage; admintest's "ok" and "fail" too),
// and returns its URL.
func startAdmin(t *testing.T) string {
	t.Helper()
	url := serveAdmin(t, nil)
	admintest.StartExecutor(t, sdk.Config{AdminURLs: []string{url}, AppName: "cli", AccessToken: "tok"}, func(ex *sdk.Executor) {
		ex.HandleFunc("hello", func(ctx context.Context, job *sdk.Job) error {
			for i := range 3 {
				job.Logf("hello line %d", i+1)
			}
			return nil
		})
		ex.HandleFunc("long", func(ctx context.Context, job *sdk.Job) error {
			for i := range longLogLines {
				job.Logf("long line %d", i+1)
			}
			return nil
		})
		ex.HandleFunc("fail-long", func(ctx context.Context, job *sdk.Job) error {
			return errors.New(failMessage)
		})
	})
	return url
}

// serveAdmin serves a real admin on loopback, over https with leaf when it
// is not nil, until the test ends, and returns its URL.
func serveAdmin(t *testing.T, leaf *testca.Leaf) string {
	t.Helper()
	cfg := admin.Config{DBPath: filepath.Join(t.TempDir(), "carillon.db"), Token: "tok"}
	if leaf != nil {
		cfg.TLSCert, cfg.TLSKey = leaf.CertFile, leaf.KeyFile
	}
	url, _ := runAdmin(t, cfg)
	return url
}

// runAdmin serves an admin of cfg (with the tests' first password, a cheap
// hash and silent logs) on loopback until stop is called or the test
// ends, and returns its URL: https when cfg has a certificate.
func runAdmin(t *testing.T, cfg admin.Config) (url string, stop func()) {
	t.Helper()
	cfg.AdminPassword, cfg.Logger = testPassword, slog.New(slog.NewTextHandler(io.Discard, nil))
	a := admintest.Start(t, cfg)
	return a.URL, func() {
		if err := a.Stop(); err != nil {
			t.Errorf("admin: %v", err)
		}
	}
}

// runner runs carillon command lines for a test, each with the working
// directory dir, HOME and the user config directory in home, the
// environment's CARILLON_ variables removed and env added. One of newCLI
// runs each command line in this process, a call of run with its own
// environment and streams, so that tests run side by side; one of
// newBinary runs each as a process of this test binary (which TestMain
// turns into carillon under CARILLON_TEST_MAIN=1), for what only a process
// shows: main's exit, signals, the working directory.
type runner struct {
	t         *testing.T
	dir, home string
	env       []string
	process   bool // each command line a process, not a call
}

// newCLI returns a runner of command lines in this process.
func newCLI(t *testing.T) *runner {
	t.Helper()
	return &runner{t: t, dir: t.TempDir(), home: t.TempDir()}
}

// write writes a file of the runner's directory, and returns its name.
func (b *runner) write(name, body string) string {
	b.t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(b.dir, name)), 0o750); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.dir, name), []byte(body), 0o600); err != nil {
		b.t.Fatal(err)
	}
	return name
}

// newBinary returns a runner of command lines as processes.
func newBinary(t *testing.T) *runner {
	t.Helper()
	r := newCLI(t)
	r.process = true
	return r
}

// environ is the environment of a command line: this process's, less
// HOME, XDG_CONFIG_HOME and the CARILLON_ variables, plus home and env
// (the last value of a name wins).
func (b *runner) environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CARILLON_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+b.home, "XDG_CONFIG_HOME="+filepath.Join(b.home, ".config"))
	return append(env, b.env...)
}

// procEnv is the environment and working directory of a command line run
// in this process.
func (b *runner) procEnv() procEnv {
	vars := map[string]string{}
	for _, kv := range b.environ() {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return procEnv{lookupEnv: func(name string) (string, bool) { v, ok := vars[name]; return v, ok }, dir: b.dir}
}

// command is a command line as a process of this test binary, killed
// when ctx ends.
func (b *runner) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Dir = b.dir
	cmd.Env = append(b.environ(), "CARILLON_TEST_MAIN=1")
	return cmd
}

// run runs one command line and returns its exit code, stdout and stderr.
func (b *runner) run(stdin string, args ...string) (int, string, string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	if !b.process {
		code := run(ctx, args, stdio{in: strings.NewReader(stdin), out: &out, err: &errOut}, b.procEnv())
		return code, out.String(), errOut.String()
	}
	cmd := b.command(ctx, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errOut.String()
	case err != nil:
		b.t.Fatalf("carillon %s: %v", strings.Join(args, " "), err)
	}
	return 0, out.String(), errOut.String()
}

// must runs a command line that must succeed and returns its stdout.
func (b *runner) must(stdin string, args ...string) string {
	b.t.Helper()
	code, out, errOut := b.run(stdin, args...)
	if code != 0 {
		b.t.Fatalf("carillon %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// fails runs a command line that must exit with want and say wantErr on
// stderr.
func (b *runner) fails(want int, wantErr string, args ...string) string {
	b.t.Helper()
	code, _, errOut := b.run("", args...)
	if code != want || !strings.Contains(errOut, wantErr) {
		b.t.Errorf("carillon %s: exit %d %q, want exit %d with %q", strings.Join(args, " "), code, errOut, want, wantErr)
	}
	return errOut
}

// waitFor runs a command line until its stdout matches re, for at most
// 20 s, and fails the test with the last output otherwise.
func (b *runner) waitFor(re string, args ...string) string {
	b.t.Helper()
	m := regexp.MustCompile(re)
	var out string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if out = b.must("", args...); m.MatchString(out) {
			return out
		}
	}
	b.t.Fatalf("carillon %s: no %q in 20 s; last output:\n%s", strings.Join(args, " "), re, out)
	return ""
}

// TestCLI drives the client commands, in this process, against a real
// admin: login writes the config file, commands use it, tables and JSON
// come out, every RPC and job field has its command or flag, and each
// kind of failure has its exit code and a "carillon: <code>: " message.
func TestCLI(t *testing.T) {
	t.Parallel()
	url := startAdmin(t)
	b := newCLI(t)
	cfg := filepath.Join(b.home, "config.json")
	as := func(args ...string) []string { return append(args, "--config", cfg) }

	out := b.must(testPassword+"\n", as("login", "--server", url, "--user", "admin", "--password-stdin")...)
	if !strings.Contains(out, "logged in to "+url+" as admin (ADMIN)") {
		t.Errorf("login: %q", out)
	}
	if fi, err := os.Stat(cfg); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("config file: %v, %v; want mode 0600", fi, err)
	}
	if out := b.must("", as("whoami")...); !regexp.MustCompile(`Role:\s+ADMIN`).MatchString(out) {
		t.Errorf("whoami: %q", out)
	}
	if out := b.must("", as("user", "get", "admin")...); !regexp.MustCompile(`Username:\s+admin\n`).MatchString(out) {
		t.Errorf("user get: %q", out)
	}

	// Groups: the executor registered as "cli" before any group had it.
	if out := b.waitFor(`no group has.*\n\s+cli\n`, as("group", "list")...); !strings.HasPrefix(out, "ID") {
		t.Errorf("group list: %q", out)
	}
	b.must("", as("group", "create", "cli", "--title", "CLI executors")...)
	if out := b.must("", as("--json", "group", "list")...); !strings.Contains(out, `"appName": "cli"`) || strings.Contains(out, "unclaimed") {
		t.Errorf("--json group list (global flag before the command): %q", out)
	}
	b.must("", as("group", "create", "spare")...)
	if out := b.must("", as("group", "update", "2", "--title", "Spare executors", "--manual", "http://10.0.0.9:9999")...); !strings.Contains(out, "Spare executors") ||
		!strings.Contains(out, "MANUAL") || !strings.Contains(out, "http://10.0.0.9:9999") {
		t.Errorf("group update: %q", out)
	}
	if out := b.must("", as("group", "update", "2", "--auto")...); !strings.Contains(out, "AUTO") || !strings.Contains(out, "Spare executors") {
		t.Errorf("group update --auto: %q", out)
	}
	b.fails(exitUsage, "nothing to change", as("group", "update", "2")...)
	b.must("", as("group", "delete", "2")...)
	b.waitFor(`Live executors:\s+http://127\.0\.0\.1:\d+ \(last beat`, as("group", "get", "1")...)

	// Jobs: every field has a flag, and job get shows every field.
	out = b.must("", as("job", "create", "--group", "1", "--description", "say hello", "--handler", "hello", "--no-schedule",
		"--retries", "2", "--retry-delay", "30s", "--backoff", "--alarm-webhook", "http://127.0.0.1:1/hook", "--alarm-every-failure",
		"--emails", "ops@example.com", "--timeout", "60", "--route", "round_robin", "--owner", "ops", "--max-concurrency", "3")...)
	for _, want := range []string{`ID:\s+1\n`, `Retries:\s+2\n`, `Retry delay:\s+30s\n`, `Retry backoff:\s+yes\n`,
		`Alarm webhook:\s+http://127\.0\.0\.1:1/hook\n`, `Alarm every failure:\s+yes\n`, `Alarm e-mails:\s+ops@example\.com\n`,
		`Timeout:\s+1m0s\n`, `Route:\s+ROUND_ROBIN\n`, `Owner:\s+ops\n`, `Max concurrency:\s+3\n`, `Created:\s+\d{4}-`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("job create: no %s in\n%s", want, out)
		}
	}
	b.must("", as("job", "update", "1", "--param", "world", "--cron", "0 0 12 * * ?", "--tz", "Europe/Berlin", "--backoff=false", "--alarm-webhook", "")...)
	out = b.must("", as("job", "get", "1")...)
	for _, want := range []string{`Schedule:\s+cron 0 0 12 \* \* \? \(Europe/Berlin\)\n`, `Param:\s+world\n`, `Retry backoff:\s+no\n`,
		`Alarm webhook:\s+-\n`, `Retries:\s+2\n`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("job get after update: no %s in\n%s", want, out)
		}
	}
	// A param template: refused unless it parses, shown when set.
	b.fails(exitRefused, "job.param", as("job", "update", "1", "--param-template", "--param", "{{.ScheduledAt")...)
	if out := b.must("", as("job", "update", "1", "--param-template")...); !regexp.MustCompile(`Param is a template:\s+yes\n`).MatchString(out) {
		t.Errorf("job update --param-template: %q", out)
	}
	if out := b.must("", as("job", "list")...); !strings.Contains(out, "say hello") || !strings.HasPrefix(out, "ID") {
		t.Errorf("job list: %q", out)
	}
	out = b.must("", as("job", "preview", "--cron", "0 0 12 * * ?", "--tz", "UTC", "--from", "2026-01-01T00:00:00Z", "--count", "2")...)
	if out != "FIRE TIME (UTC)\n2026-01-01T12:00:00Z\n2026-01-02T12:00:00Z\n" {
		t.Errorf("job preview --tz UTC: %q", out)
	}
	out = b.must("", as("job", "preview", "1", "--from", "2026-01-01T00:00:00Z", "--count", "1")...)
	if out != "FIRE TIME (Europe/Berlin)\n2026-01-01T12:00:00+01:00\n" {
		t.Errorf("job preview 1 (the job's zone): %q", out)
	}
	out = b.must("", as("job", "preview", "1", "--tz", "Asia/Tokyo", "--from", "2026-01-01T00:00:00Z", "--count", "1")...)
	if out != "FIRE TIME (Asia/Tokyo)\n2026-01-01T20:00:00+09:00\n" {
		t.Errorf("job preview 1 --tz Asia/Tokyo: %q", out)
	}

	out = b.must("", as("job", "backfill", "1", "--from", "2026-01-01T00:00:00Z", "--to", "2026-01-03T00:00:00Z", "--dry-run")...)
	if out != "2026-01-01T11:00:00Z\n2026-01-02T11:00:00Z\njob 1 would run 2 instants\n" {
		t.Errorf("job backfill --dry-run: %q", out)
	}

	// Trigger, then follow the run's log to its end.
	out = b.must("", as("job", "trigger", "1")...)
	m := regexp.MustCompile(`^triggered job 1: run (\d+) \(carillon run get \d+; carillon run log \d+ --follow\)\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("job trigger: %q", out)
	}
	out = b.must("", as("run", "log", m[1], "--follow", "--interval", "20ms")...)
	if !strings.Contains(out, "hello line 1") || !strings.Contains(out, "hello line 3") {
		t.Errorf("run log --follow: %q", out)
	}
	// The log ends before the executor's result reaches the admin (it is
	// reported in the background): wait for it, within a bound.
	b.waitFor(`Status:\s+SUCCEEDED`, as("run", "get", m[1])...)
	if out := b.must("", as("run", "list", "--job", "1", "--status", "succeeded", "--ids")...); out != m[1]+"\n" {
		t.Errorf("run list --ids: %q, want %q", out, m[1]+"\n")
	}

	// A log of several pages, whole, and its tail.
	b.must("", as("job", "create", "--group", "1", "--description", "long log", "--handler", "long", "--no-schedule")...)
	long := strings.TrimSpace(b.must("", as("job", "trigger", "2", "--ids")...))
	b.waitFor(`Status:\s+SUCCEEDED`, as("run", "get", long)...)
	out = b.must("", as("run", "log", long)...)
	if n := strings.Count(out, "long line "); n != longLogLines || !strings.Contains(out, fmt.Sprintf("long line %d\n", longLogLines)) {
		t.Errorf("run log of %d lines printed %d of them", longLogLines, n)
	}
	out = b.must("", as("run", "log", long, "--tail", "3")...) // the last two lines, then the executor's end line
	if strings.Count(out, "\n") != 3 || !strings.Contains(out, fmt.Sprintf("long line %d\n", longLogLines-1)) ||
		!strings.Contains(out, fmt.Sprintf("long line %d\n", longLogLines)) || !strings.Contains(out, "ended: SUCCEEDED\n") {
		t.Errorf("run log --tail 3: %q", out)
	}

	// A failed run: its whole message in run list, its alarm in run get.
	hook := make(chan struct{}, 10)
	var hooked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hooked.Add(1)
		select {
		case hook <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(srv.Close)
	b.must("", as("job", "create", "--group", "1", "--description", "fails", "--handler", "fail-long", "--no-schedule", "--alarm-webhook", srv.URL+"/alarm")...)
	failed := strings.TrimSpace(b.must("", as("job", "trigger", "3", "--ids")...))
	out = b.waitFor(`Alarm:\s+SENT`, as("run", "get", failed)...)
	if !strings.Contains(out, "free some space and retry") || !regexp.MustCompile(`Settled by admin:\s+no\n`).MatchString(out) ||
		!regexp.MustCompile(`Due:\s+`).MatchString(out) {
		t.Errorf("run get of a failed run: %q", out)
	}
	if out := b.must("", as("run", "list", "--job", "3")...); !strings.Contains(out, "the disk of the report server is full ⏎ free some space and retry") {
		t.Errorf("run list cut the message: %q", out)
	}
	if hooked.Load() == 0 {
		t.Errorf("the alarm webhook was not called, yet run get said SENT")
	}

	// Dashboard and run delete.
	if out := b.must("", as("dashboard")...); !regexp.MustCompile(`Jobs: 3 \(0 started\)\s+Live executors: 1\s+Runs: 3`).MatchString(out) {
		t.Errorf("dashboard: %q", out)
	}
	b.fails(exitUsage, "give --older-than or --keep-last", as("run", "delete")...)
	if out := b.must("", as("run", "delete", "--job", "2", "--keep-last", "0", "--older-than", "0s")...); out != "deleted 1 runs\n" {
		t.Errorf("run delete: %q", out)
	}
	b.fails(exitNotFound, "carillon: not_found: run "+long+" not found", as("run", "get", long)...)

	// API tokens, and a VIEWER who may read but not trigger.
	token := strings.TrimSpace(b.must("", as("token", "create", "ci")...))
	if !strings.HasPrefix(token, "carillon_t_") {
		t.Fatalf("token create printed %q", token)
	}
	other := filepath.Join(b.home, "none.json")
	b.must("", "whoami", "--server", url, "--config", other, "--api-token", token)
	b.must("viewer password\n", as("user", "create", "vera", "--role", "viewer", "--password-stdin")...)
	vera := filepath.Join(b.home, "vera.json")
	b.must("viewer password\n", "login", "--server", url, "--user", "vera", "--password-stdin", "--config", vera)
	b.must("", "job", "list", "--config", vera)
	b.fails(exitDenied, "carillon: permission_denied: ", "job", "trigger", "1", "--config", vera)
	b.fails(exitDenied, "carillon: permission_denied: ", "user", "list", "--config", vera)
	if out := b.must("", as("user", "list")...); !strings.Contains(out, "vera") || !strings.Contains(out, "VIEWER") {
		t.Errorf("user list: %q", out)
	}
	if out := b.must("", as("audit", "--action", "JobService.TriggerJob")...); !strings.Contains(out, "job 1") {
		t.Errorf("audit: %q", out)
	}
	if out := b.must("", as("audit", "--action", "JobService.TriggerJob", "--to", "2000-01-01T00:00:00Z")...); strings.Contains(out, "job 1") {
		t.Errorf("audit --to 2000: %q, want no entry", out)
	}
	if out := b.must("", as("run", "list", "--from", time.Now().Add(time.Hour).Format(time.RFC3339), "--ids")...); out != "" {
		t.Errorf("run list --from in an hour: %q, want none", out)
	}
	b.fails(exitUsage, "--from: want an RFC 3339 time", as("run", "list", "--from", "yesterday")...)
	if out := b.must("", as("token", "list", "--user", "admin")...); !strings.Contains(out, "ci") {
		t.Errorf("token list --user admin: %q", out)
	}
	if out := b.must("", as("token", "list", "--user", "vera")...); strings.Contains(out, "ci") {
		t.Errorf("token list --user vera: %q, want none of admin's", out)
	}
	if out := b.must("", as("executor-token")...); out != "tok\n" {
		t.Errorf("executor-token: %q", out)
	}

	// --json is stable: two spaces, no protojson double spaces.
	j1, j2 := b.must("", as("job", "get", "1", "--json")...), b.must("", as("job", "get", "1", "--json")...)
	if j1 != j2 || !strings.Contains(j1, "\n  \"job\": {\n    \"id\": \"1\",\n") || strings.Contains(j1, ":  ") {
		t.Errorf("job get --json: %q", j1)
	}

	// A run at a later time waits PENDING; run kill cancels it.
	out = b.must("", as("job", "trigger", "1", "--at", "1h")...)
	m = regexp.MustCompile(`^job 1 runs at \S+: run (\d+), pending until then \(carillon run get \d+; carillon run kill \d+ cancels it\)\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("job trigger --at 1h: %q", out)
	}
	if out := b.must("", as("run", "get", m[1])...); !regexp.MustCompile(`Status:\s+PENDING`).MatchString(out) {
		t.Errorf("run get of a run an hour ahead: %q", out)
	}
	b.must("", as("run", "kill", m[1])...)
	if out := b.must("", as("run", "get", m[1])...); !regexp.MustCompile(`Status:\s+KILLED`).MatchString(out) {
		t.Errorf("run get of a cancelled run: %q", out)
	}
	b.fails(exitUsage, `--at "tomorrow": want an RFC 3339 time`, as("job", "trigger", "1", "--at", "tomorrow")...)
	b.fails(exitRefused, "carillon: invalid_argument: run_at: must be in the future", as("job", "trigger", "1", "--at", "2020-01-01T00:00:00Z")...)

	// Exit codes.
	b.fails(exitNotFound, "carillon: not_found: job 99 not found", as("job", "get", "99")...)
	b.fails(exitRefused, "carillon: invalid_argument: job.description: ",
		as("job", "create", "--group", "1", "--handler", "h", "--no-schedule")...)
	b.fails(exitRefused, "carillon: failed_precondition: group 1 has 3 jobs", as("group", "delete", "1")...)
	b.fails(exitUnauthorized, "carillon: unauthenticated: ", "job", "list", "--server", url, "--config", other)
	b.fails(exitUsage, `unknown command "frobnicate" for "carillon"`, "frobnicate")
	b.fails(exitUsage, "unknown flag: --bogus", as("job", "list", "--bogus")...)
	b.fails(exitUsage, "want a job id", as("job", "get")...)
	b.fails(exitUnavailable, "carillon: unavailable: ", "job", "list", "--server", "http://127.0.0.1:1", "--config", other, "--api-token", token)

	b.must("", as("logout")...)
	b.fails(exitUnauthorized, "carillon: unauthenticated: ", as("whoami")...)
}
