package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/internal/testca"
	"github.com/carillonhq/carillon/sdk"
)

const testPassword = "cli test password"

// startAdmin serves a real admin on loopback, with an SDK executor for the
// app "cli" (handler "hello" logs three lines), and returns its URL.
func startAdmin(t *testing.T) string {
	t.Helper()
	url := serveAdmin(t, nil)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ex, err := sdk.New(sdk.Config{AdminURLs: []string{url}, AppName: "cli", AccessToken: "tok", LogDir: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ex.HandleFunc("hello", func(ctx context.Context, job *sdk.Job) error {
		for i := range 3 {
			job.Logf("hello line %d", i+1)
		}
		return nil
	})
	eln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	exDone := make(chan error, 1)
	go func() { exDone <- ex.Serve(ctx, eln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-exDone; err != nil {
			t.Log("executor:", err)
		}
	}) // before the admin's: cleanups run last first
	return url
}

// serveAdmin serves a real admin on loopback, over https with leaf when it
// is not nil, until the test ends, and returns its URL.
func serveAdmin(t *testing.T, leaf *testca.Leaf) string {
	t.Helper()
	cfg := admin.Config{DBPath: filepath.Join(t.TempDir(), "carillon.db"), Token: "tok", AdminPassword: testPassword,
		PasswordCost: bcrypt.MinCost, Console: io.Discard, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	scheme := "http://"
	if leaf != nil {
		cfg.TLSCert, cfg.TLSKey, scheme = leaf.CertFile, leaf.KeyFile, "https://"
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := admin.Open(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("admin Serve: %v", err)
		}
		a.Close()
	})
	return scheme + ln.Addr().String()
}

// cli runs one command line and returns its exit code, stdout and stderr.
func cli(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, stdio{in: strings.NewReader(stdin), out: &out, err: &errOut})
	return code, out.String(), errOut.String()
}

// TestCLI drives the client commands against a real admin: login writes the
// config file, commands use it, tables and JSON come out, and each kind of
// failure has its exit code and a "carillon: <code>: " message.
func TestCLI(t *testing.T) {
	t.Parallel()
	url := startAdmin(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	admin := []string{"--config", cfg}

	must := func(stdin string, args ...string) string {
		t.Helper()
		code, out, errOut := cli(t, stdin, args...)
		if code != 0 {
			t.Fatalf("carillon %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		return out
	}
	fails := func(want int, wantErr string, args ...string) {
		t.Helper()
		code, _, errOut := cli(t, "", args...)
		if code != want || !strings.Contains(errOut, wantErr) {
			t.Errorf("carillon %s: exit %d %q, want exit %d with %q", strings.Join(args, " "), code, errOut, want, wantErr)
		}
	}

	out := must(testPassword+"\n", append([]string{"login", "--server", url, "--user", "admin", "--password-stdin"}, admin...)...)
	if !strings.Contains(out, "logged in to "+url+" as admin (ADMIN)") {
		t.Errorf("login: %q", out)
	}
	if fi, err := os.Stat(cfg); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("config file: %v, %v; want mode 0600", fi, err)
	}
	if out := must("", append([]string{"whoami"}, admin...)...); !regexp.MustCompile(`Role:\s+ADMIN`).MatchString(out) {
		t.Errorf("whoami: %q", out)
	}
	must("", append([]string{"group", "create", "cli", "--title", "CLI executors"}, admin...)...)
	if out := must("", append([]string{"group", "list", "--json"}, admin...)...); !regexp.MustCompile(`"appName":\s+"cli"`).MatchString(out) {
		t.Errorf("group list --json: %q", out)
	}
	out = must("", append([]string{"job", "create", "--group", "1", "--description", "say hello", "--handler", "hello", "--no-schedule"}, admin...)...)
	if !regexp.MustCompile(`ID:\s+1\n`).MatchString(out) {
		t.Errorf("job create: %q", out)
	}
	must("", append([]string{"job", "update", "1", "--param", "world", "--cron", "0 0 12 * * ?", "--tz", "Europe/Berlin"}, admin...)...)
	if out := must("", append([]string{"job", "get", "1"}, admin...)...); !strings.Contains(out, "cron 0 0 12 * * ? (Europe/Berlin)") ||
		!strings.Contains(out, "world") {
		t.Errorf("job get after update: %q", out)
	}
	if out := must("", append([]string{"job", "list"}, admin...)...); !strings.Contains(out, "say hello") || !strings.HasPrefix(out, "ID") {
		t.Errorf("job list: %q", out)
	}
	out = must("", append([]string{"job", "preview", "--cron", "0 0 12 * * ?", "--tz", "UTC", "--from", "2026-01-01T00:00:00Z", "--count", "2"}, admin...)...)
	if !strings.Contains(out, "2026-01-01T12:00:00Z\n2026-01-02T12:00:00Z") {
		t.Errorf("job preview: %q", out)
	}

	// Trigger, then follow the run's log to its end.
	out = must("", append([]string{"job", "trigger", "1"}, admin...)...)
	m := regexp.MustCompile(`RUN\n(\d+)\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("job trigger: %q", out)
	}
	out = must("", append([]string{"run", "log", m[1], "--follow", "--interval", "20ms"}, admin...)...)
	if !strings.Contains(out, "hello line 1") || !strings.Contains(out, "hello line 3") {
		t.Errorf("run log --follow: %q", out)
	}
	// The log ends before the executor's result reaches the admin (it is
	// reported in the background): wait for it, within a bound.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		out := must("", append([]string{"run", "get", m[1]}, admin...)...)
		if regexp.MustCompile(`Status:\s+SUCCEEDED`).MatchString(out) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run get 10 s after the log ended: %q", out)
		}
	}
	if out := must("", append([]string{"run", "list", "--job", "1", "--status", "succeeded"}, admin...)...); !strings.Contains(out, m[1]) {
		t.Errorf("run list: %q", out)
	}

	// API tokens, and a VIEWER who may read but not trigger.
	token := strings.TrimSpace(must("", append([]string{"token", "create", "ci"}, admin...)...))
	if !strings.HasPrefix(token, "carillon_t_") {
		t.Fatalf("token create printed %q", token)
	}
	other := filepath.Join(dir, "none.json")
	must("", "whoami", "--server", url, "--config", other, "--api-token", token)
	must("viewer password\n", append([]string{"user", "create", "vera", "--role", "viewer", "--password-stdin"}, admin...)...)
	vera := filepath.Join(dir, "vera.json")
	must("viewer password\n", "login", "--server", url, "--user", "vera", "--password-stdin", "--config", vera)
	must("", "job", "list", "--config", vera)
	fails(exitDenied, "carillon: permission_denied: ", "job", "trigger", "1", "--config", vera)
	fails(exitDenied, "carillon: permission_denied: ", "user", "list", "--config", vera)
	if out := must("", append([]string{"user", "list"}, admin...)...); !strings.Contains(out, "vera") || !strings.Contains(out, "VIEWER") {
		t.Errorf("user list: %q", out)
	}
	if out := must("", append([]string{"audit", "--action", "JobService.TriggerJob"}, admin...)...); !strings.Contains(out, "job 1") {
		t.Errorf("audit: %q", out)
	}
	if out := must("", append([]string{"executor-token"}, admin...)...); out != "tok\n" {
		t.Errorf("executor-token: %q", out)
	}

	// Exit codes.
	fails(exitNotFound, "carillon: not_found: ", append([]string{"job", "get", "99"}, admin...)...)
	fails(exitRefused, "carillon: invalid_argument: job.description: ",
		append([]string{"job", "create", "--group", "1", "--handler", "h", "--no-schedule"}, admin...)...)
	fails(exitRefused, "carillon: failed_precondition: ", append([]string{"group", "delete", "1"}, admin...)...)
	fails(exitUnauthorized, "carillon: unauthenticated: ", "job", "list", "--server", url, "--config", other)
	fails(exitUsage, "unknown command", "frobnicate")
	fails(exitUsage, "unknown flag: --bogus", append([]string{"job", "list", "--bogus"}, admin...)...)
	fails(exitUsage, "want a job id", append([]string{"job", "get"}, admin...)...)
	fails(exitUnavailable, "carillon: unavailable: ", "job", "list", "--server", "http://127.0.0.1:1", "--config", other, "--api-token", token)

	must("", append([]string{"logout"}, admin...)...)
	fails(exitUnauthorized, "carillon: unauthenticated: ", append([]string{"whoami"}, admin...)...)
	if code, out, _ := cli(t, "", "help"); code != 0 || !strings.Contains(out, "Exit codes:") {
		t.Errorf("help: %d %q", code, out)
	}
}
