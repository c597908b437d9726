package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/internal/testkit"
)

// serveInProcess runs "carillon serve" with args in this process, on a
// free port, with stderr into a buffer and its terminal check answering
// terminal, until the test ends. It returns the buffer, the admin's URL,
// and a channel of serve's exit code.
func serveInProcess(t *testing.T, terminal bool, args ...string) (*testkit.LogBuffer, string, <-chan int) {
	t.Helper()
	addr := freeAddr(t)
	stderr, code := newCLI(t).serve(terminal, append([]string{"--listen", addr}, args...)...)
	return stderr, "http://" + addr, code
}

// serve runs "carillon serve" with args in this process, with b's
// environment and working directory, stderr into a buffer and its
// terminal check answering terminal, until the test ends. It returns the
// buffer and a channel of serve's exit code.
func (b *runner) serve(terminal bool, args ...string) (*testkit.LogBuffer, <-chan int) {
	t := b.t
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr testkit.LogBuffer
	e := &cmdEnv{io: stdio{in: strings.NewReader(""), out: io.Discard, err: &stderr}, proc: b.procEnv(),
		terminal: func(io.Writer) bool { return terminal }}
	root := newRoot(e)
	root.SetArgs(append([]string{"serve"}, args...))
	root.SetOut(io.Discard)
	root.SetErr(&stderr)
	code := make(chan int, 1)
	go func() { code <- exitCode(&stderr, root.ExecuteContext(ctx)) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-code:
		case <-time.After(30 * time.Second):
			t.Errorf("serve did not stop in 30 s")
		}
	})
	return &stderr, code
}

// waitOutput waits, at most 30 s, until out matches re, or serve exits.
func waitOutput(t *testing.T, out *testkit.LogBuffer, code <-chan int, re string) {
	t.Helper()
	m := regexp.MustCompile(re)
	for deadline := time.Now().Add(30 * time.Second); !m.MatchString(out.String()); time.Sleep(20 * time.Millisecond) {
		select {
		case c := <-code:
			t.Fatalf("serve exited %d before printing %s:\n%s", c, re, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve printed no %s in 30 s:\n%s", re, out.String())
		}
	}
}

// TestServeTakenPortCreatesNothing: an admin whose port is taken (a demo
// still running) stops before it creates a database or generates the
// first ADMIN's password, says why, and a later start on a free port
// shows that password.
func TestServeTakenPortCreatesNothing(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	b := newCLI(t)
	db := filepath.Join(b.dir, "new.db")
	errOut := b.fails(exitFailure, "address already in use", "serve", "--listen", taken.Addr().String(), "--db", db)
	if !strings.Contains(errOut, "is another admin") || strings.Contains(errOut, "password") {
		t.Errorf("serve on a taken port said:\n%s", errOut)
	}
	errOut = b.fails(exitFailure, "address already in use", "serve", "--metrics-listen", taken.Addr().String(), "--db", db)
	if entries, err := os.ReadDir(b.dir); err != nil || len(entries) != 0 {
		t.Errorf("refused starts left %v in the directory (%v):\n%s", entries, err, errOut)
	}

	out, _, code := serveInProcess(t, true, "--db", db)
	waitOutput(t, out, code, `shown only this once:\n\n    \S+\n`)
}

// TestServeLogFormatJSON: with --log-format json every line serve prints
// is a JSON object, first-start notices included; the generated password
// is shown only on a terminal, and without one no ADMIN is created and
// the log says how to get one.
func TestServeLogFormatJSON(t *testing.T) {
	t.Parallel()
	allJSON := func(out string) {
		t.Helper()
		for line := range strings.Lines(out) {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil || rec["msg"] == nil {
				t.Errorf("a line that is no JSON record (%v): %q\nin:\n%s", err, line, out)
			}
		}
	}

	// Not a terminal: no secret anywhere.
	db := filepath.Join(t.TempDir(), "pipe.db")
	out, url, code := serveInProcess(t, false, "--db", db, "--log-format", "json", "--demo")
	waitOutput(t, out, code, `"msg":"demo: no API token printed`)
	waitOutput(t, out, code, `"msg":"carillon admin serving"`)
	allJSON(out.String())
	for _, want := range []string{`no ADMIN created`, `carillon reset-admin-password --db ` + regexp.QuoteMeta(db), `carillon executor-token`} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("no %s in:\n%s", want, out.String())
		}
	}
	if regexp.MustCompile(`carillon_[tx]_|shown only this once`).MatchString(out.String()) {
		t.Errorf("a secret in the log:\n%s", out.String())
	}
	res, err := http.Post(url+"/carillon.v1.UserService/Login", "application/json",
		strings.NewReader(`{"username":"admin","password":"anything"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("login to an admin without users: %s", res.Status)
	}

	// A start that fails says so in JSON too: nothing but JSON on stderr.
	taken := strings.TrimPrefix(url, "http://")
	b := newCLI(t)
	code2, _, errOut := b.run("", "serve", "--listen", taken, "--log-format", "json", "--db", filepath.Join(b.dir, "x.db"))
	if code2 != exitFailure || !strings.Contains(errOut, "address already in use") {
		t.Errorf("serve on a taken port with --log-format json: exit %d:\n%s", code2, errOut)
	}
	allJSON(errOut)
	code2, _, errOut = b.run("", "serve", "--listen", "nowhere", "--log-format", "json")
	if code2 != exitUsage || !strings.Contains(errOut, `listen: \"nowhere\"`) {
		t.Errorf("serve with a bad --listen and --log-format json: exit %d:\n%s", code2, errOut)
	}
	allJSON(errOut)

	// A terminal: the password, as a JSON record too.
	out, url, code = serveInProcess(t, true, "--db", filepath.Join(t.TempDir(), "tty.db"), "--log-format", "json")
	waitOutput(t, out, code, `"msg":"carillon admin serving"`)
	allJSON(out.String())
	m := regexp.MustCompile(`shown only this once: (\S+) Log in with`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no password in:\n%s", out.String())
	}
	res, err = http.Post(url+"/carillon.v1.UserService/Login", "application/json",
		strings.NewReader(`{"username":"admin","password":"`+m[1]+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("login with the printed password: %s", res.Status)
	}
}
