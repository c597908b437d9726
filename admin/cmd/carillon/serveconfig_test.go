package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/internal/testkit"
)

// TestServeConfigFile layers serve's options from a config file, the
// environment and flags, checks --print-config's values and sources, and
// that unknown names and bad values are refused naming where they were.
func TestServeConfigFile(t *testing.T) {
	t.Parallel()
	b := newCLI(t)
	file := filepath.Join(b.home, "admin.conf")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`# the admin's options
listen = 127.0.0.1:9090
db = /var/lib/carillon/file.db
retention-days = 7
log-level = debug
smtp-password = "from the file"
smtp-tls = implicit
alarm-webhook-allow = "https://hooks.example.com/, https://alerts.example.com/"

demo = true
`)
	b.env = []string{"CARILLON_DB=/var/lib/carillon/env.db", "CARILLON_RETENTION_DAYS=14"}
	out := b.must("", "serve", "--config-file", file, "--print-config", "--retention-days", "21")
	for _, want := range []string{
		`listen\s+127\.0\.0\.1:9090\s+file ` + regexp.QuoteMeta(file) + `:2\n`,
		`db\s+/var/lib/carillon/env\.db\s+env CARILLON_DB\n`,
		`retention-days\s+21\s+flag --retention-days\n`,
		`log-level\s+debug\s+file ` + regexp.QuoteMeta(file) + `:5\n`,
		`smtp-password\s+\(set\)\s+file `,
		`smtp-tls\s+implicit\s+file `,
		`smtp-oauth2-token\s+\(not set\)\s+default\n`,
		`alarm-webhook-allow\s+https://hooks\.example\.com/, https://alerts\.example\.com/\s+file `,
		`demo\s+true\s+file `,
		`token\s+\(not set\)\s+default\n`,
		`misfire-threshold\s+5s\s+default\n`,
		`lease-duration\s+1s\s+default\n`,
		`fires-per-admin\s+2000\s+default\n`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("--print-config: no %s in\n%s", want, out)
		}
	}
	if strings.Contains(out, "from the file") {
		t.Errorf("--print-config shows the SMTP password:\n%s", out)
	}

	// --demo's database, when nothing names one; the file from the
	// environment.
	write("demo = 1\n")
	b.env = []string{"CARILLON_CONFIG_FILE=" + file}
	if out := b.must("", "serve", "--print-config"); !regexp.MustCompile(`db\s+carillon-demo\.db\s+default with --demo\n`).MatchString(out) {
		t.Errorf("--print-config with demo from the file: %s", out)
	}
	b.env = nil

	write("listen = 127.0.0.1:9090\nlisten-address = 127.0.0.1:9091\n")
	b.fails(exitUsage, file+`:2: unknown option "listen-address"`, "serve", "--config-file", file)
	write("retention-days = many\n")
	b.fails(exitUsage, file+":1: retention-days: ", "serve", "--config-file", file)
	write("listen\n")
	b.fails(exitUsage, file+`:1: want "name = value"`, "serve", "--config-file", file)
	write("db = a.db\ndb = b.db\n")
	b.fails(exitUsage, file+":2: db is already set on line 1", "serve", "--config-file", file)
	b.env = []string{"CARILLON_MISFIRE_THRESHOLD=soon"}
	b.fails(exitUsage, "env CARILLON_MISFIRE_THRESHOLD: ", "serve", "--print-config")
	b.env = nil
	b.fails(exitFailure, "no such file", "serve", "--config-file", filepath.Join(b.home, "missing.conf"))
	if entries, err := os.ReadDir(b.dir); err != nil || len(entries) != 0 {
		t.Errorf("refused configurations left %v in the directory (%v)", entries, err)
	}
}

// TestServeFromConfigFile starts the admin with its address, database and
// first password from a config file only, and logs in with that password
// at that address.
func TestServeFromConfigFile(t *testing.T) {
	t.Parallel()
	b := newCLI(t)
	addr := freeAddr(t)
	file := filepath.Join(b.home, "admin.conf")
	conf := "listen = " + addr + "\ndb = " + filepath.Join(b.home, "file.db") + "\nadmin-password = \"from the config file\"\nlog-level = warn\n"
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	logs, code := b.serve(false, "--config-file", file)
	waitReady(t, "http://"+addr, logs, code)
	out := b.must("from the config file\n", "login", "--server", "http://"+addr, "--user", "admin", "--password-stdin")
	if !strings.Contains(out, "logged in") {
		t.Errorf("login: %q", out)
	}
	if _, err := os.Stat(filepath.Join(b.home, "file.db")); err != nil {
		t.Errorf("the config file's database: %v", err)
	}
	if entries, _ := os.ReadDir(b.dir); len(entries) != 0 {
		t.Errorf("serve wrote %v in its directory, not the config file's database", entries)
	}
}

// waitReady waits, at most 30 s, until the admin at url answers /readyz
// with 200; it fails the test with the admin's log when serve exits first.
func waitReady(t *testing.T, url string, logs *testkit.LogBuffer, code <-chan int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res, err := http.Get(url + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case c := <-code:
			t.Fatalf("serve exited %d; log:\n%s", c, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready at %s in 30 s: %v; log:\n%s", url, err, logs.String())
		}
	}
}
