package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/sdk"
)

// migrateAdmin serves a real admin over db (a SQLite file or a postgres://
// URL) on loopback, with a generated executor token, until stop is called.
func migrateAdmin(t *testing.T, db string) (url string, stop func()) {
	t.Helper()
	return runAdmin(t, admin.Config{DBPath: db})
}

// migrateExecutor serves an SDK executor of the app "mig" whose handler
// "tick" sends the id of each run it is given on runs.
func migrateExecutor(t *testing.T, adminURL, token string, runs chan<- int64) (stop func()) {
	t.Helper()
	ex, err := sdk.New(sdk.Config{AdminURLs: []string{adminURL}, AppName: "mig", AccessToken: token, LogDir: t.TempDir(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ex.HandleFunc("tick", func(ctx context.Context, job *sdk.Job) error {
		select {
		case runs <- job.RunID:
		default: // nobody is counting now
		}
		return nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Serve(ctx, ln) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("executor: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// awaitRun waits, up to 20 s, for a run with an id above after, and
// returns it.
func awaitRun(t *testing.T, runs <-chan int64, after int64, what string) int64 {
	t.Helper()
	timeout := time.After(20 * time.Second)
	var last int64
	for {
		select {
		case id := <-runs:
			if id > after {
				return id
			}
			last = id
		case <-timeout:
			t.Fatalf("%s: no run with an id above %d in 20 s (last run seen: %d)", what, after, last)
		}
	}
}

// TestMigrate copies a SQLite database with rows in every table that
// carillon migrate copies into a new PostgreSQL database, then serves that
// database: a job keeps its child jobs in order, the job fires at the
// executor (with the executor token the SQLite admin generated), the
// copied runs are there under their ids, a user logs in with their
// password and keeps their grant, an API token works, and new ids come
// after every id the SQLite database gave out. A second copy into the now
// full database is refused.
func TestMigrate(t *testing.T) {
	pgURL := pgtest.URL(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "carillon.db")
	cfg := []string{"--config", filepath.Join(dir, "admin.json")}
	b := newCLI(t)
	must := b.must
	id := func(out string) string {
		t.Helper()
		m := regexp.MustCompile(`ID:\s+(\d+)\n`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no ID in %q", out)
		}
		return m[1]
	}

	// The SQLite admin: a group, an every-second job that runs, a deleted
	// job, a MEMBER granted the group, an API token, the audit log.
	url, stopSQLite := migrateAdmin(t, file)
	must(testPassword+"\n", append([]string{"login", "--server", url, "--user", "admin", "--password-stdin"}, cfg...)...)
	token := strings.TrimSpace(must("", append([]string{"executor-token"}, cfg...)...))
	runs := make(chan int64, 100)
	stopExecutor := migrateExecutor(t, url, token, runs)
	must("", append([]string{"group", "create", "mig"}, cfg...)...)
	job := id(must("", append([]string{"job", "create", "--group", "1", "--description", "every second", "--handler", "tick",
		"--cron", "* * * * * ?", "--start"}, cfg...)...))
	kid := id(must("", append([]string{"job", "create", "--group", "1", "--description", "child", "--handler", "tick",
		"--no-schedule"}, cfg...)...))
	parent := id(must("", append([]string{"job", "create", "--group", "1", "--description", "parent", "--handler", "tick",
		"--no-schedule", "--children", kid + "," + job}, cfg...)...))
	gone := id(must("", append([]string{"job", "create", "--group", "1", "--description", "deleted", "--handler", "tick",
		"--no-schedule"}, cfg...)...))
	must("", append([]string{"job", "delete", gone}, cfg...)...)
	must("member password\n", append([]string{"user", "create", "mia", "--role", "member", "--groups", "1", "--password-stdin"}, cfg...)...)
	apiToken := strings.TrimSpace(must("", append([]string{"token", "create", "ci"}, cfg...)...))
	first := awaitRun(t, runs, 0, "the SQLite admin's job")
	// Its result reaches the admin after the handler returns: wait for it,
	// so that the copy holds a settled run.
	b.waitFor(`Status:\s+SUCCEEDED`, append([]string{"run", "get", strconv.FormatInt(first, 10)}, cfg...)...)
	stopSQLite()
	stopExecutor()

	// Copy.
	code, out, errOut := b.run("", "migrate", "--from", file, "--to", pgURL, "--runs")
	if code != 0 {
		t.Fatalf("carillon migrate: exit %d: %s", code, errOut)
	}
	counts := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^(\w+)\s+(\d+)$`).FindAllStringSubmatch(out, -1) {
		counts[m[1]], _ = strconv.Atoi(m[2])
	}
	for table, least := range map[string]int{"groups": 1, "users": 2, "user_groups": 1, "api_tokens": 1, "jobs": 3,
		"job_children": 2, "settings": 2, "audit_log": 5, "runs": 1, "run_counts": 0} {
		if n, ok := counts[table]; !ok || n < least {
			t.Errorf("migrate printed %d rows for %s (listed: %v), want at least %d:\n%s", n, table, ok, least, out)
		}
	}
	if strings.Contains(out+errOut, "password=") {
		t.Errorf("migrate printed a password: %s%s", out, errOut)
	}
	code, _, errOut = b.run("", "migrate", "--from", file, "--to", pgURL)
	if code != exitFailure || !strings.Contains(errOut, "PostgreSQL database is not empty (groups has 1 rows") {
		t.Errorf("a second migrate into the same database: exit %d %q, want %d and that it is not empty", code, errOut, exitFailure)
	}

	// The PostgreSQL admin serves what was copied.
	url, _ = migrateAdmin(t, pgURL)
	pgCfg := []string{"--config", filepath.Join(dir, "pg.json")}
	must(testPassword+"\n", append([]string{"login", "--server", url, "--user", "admin", "--password-stdin"}, pgCfg...)...)
	if got := strings.TrimSpace(must("", append([]string{"executor-token"}, pgCfg...)...)); got != token {
		t.Errorf("executor token over PostgreSQL %q, want the SQLite admin's %q", got, token)
	}
	if out := must("", append([]string{"run", "get", strconv.FormatInt(first, 10)}, pgCfg...)...); !regexp.MustCompile(`Status:\s+SUCCEEDED`).MatchString(out) {
		t.Errorf("copied run %d: %q", first, out)
	}
	if out := must("", append([]string{"job", "get", parent}, pgCfg...)...); !regexp.MustCompile(`Children:\s+` + kid + "," + job + `\n`).MatchString(out) {
		t.Errorf("copied job %s: want children %s,%s in order:\n%s", parent, kid, job, out)
	}
	runs = make(chan int64, 100)
	migrateExecutor(t, url, token, runs)
	var copied int64
	for _, m := range regexp.MustCompile(`(?m)^(\d+)\s`).FindAllStringSubmatch(must("", append([]string{"run", "list", "--job", job}, pgCfg...)...), -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		copied = max(copied, n)
	}
	if copied < first {
		t.Fatalf("run list over PostgreSQL shows runs up to %d, want the copied run %d", copied, first)
	}
	awaitRun(t, runs, copied, "the copied job over PostgreSQL")
	memberCfg := []string{"--config", filepath.Join(dir, "mia.json")}
	must("member password\n", append([]string{"login", "--server", url, "--user", "mia", "--password-stdin"}, memberCfg...)...)
	must("", append([]string{"job", "trigger", job}, memberCfg...)...) // her grant of group 1
	if out := must("", "whoami", "--server", url, "--config", filepath.Join(dir, "none.json"), "--api-token", apiToken); !strings.Contains(out, "admin") {
		t.Errorf("whoami with the copied API token: %q", out)
	}
	next := id(must("", append([]string{"job", "create", "--group", "1", "--description", "new", "--handler", "tick", "--no-schedule"}, pgCfg...)...))
	if g, _ := strconv.Atoi(gone); next != strconv.Itoa(g+1) {
		t.Errorf("a new job over PostgreSQL got id %s, want %d: past the deleted job %s", next, g+1, gone)
	}
}
