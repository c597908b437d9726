package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/carillonhq/carillon/internal/testkit"
)

// walkthroughSection is the README section TestREADMEWalkthrough runs.
const walkthroughSection = "## Walk-through with curl and the CLI"

// shBlocks returns the ```sh blocks of the README section that starts with
// heading, up to the next "## " heading.
func shBlocks(t *testing.T, readme, heading string) []string {
	t.Helper()
	i := strings.Index(readme, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no section %q", heading)
	}
	section := readme[i+1+len(heading):]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)\n```sh\n(.*?)\n```\n").FindAllStringSubmatch(section, -1) {
		blocks = append(blocks, m[1])
	}
	return blocks
}

// TestREADMEWalkthrough runs the README's walk-through as a new user would
// paste it into one terminal: its sh blocks in order, as written, in one
// bash -euo pipefail, on free ports (the README's 127.0.0.1:8080 and
// 127.0.0.1:9999 replaced), in a directory of its own that reaches the
// checkout, with a HOME, GOBIN and database of its own. Then it checks what
// the steps printed.
func TestREADMEWalkthrough(t *testing.T) {
	testkit.Soak(t, "installs the CLI and the example executor and waits for scheduled runs: about a minute")
	for _, tool := range []string{"bash", "curl", "go", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the walk-through needs %s: %v", tool, err)
		}
	}
	t.Parallel()
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := shBlocks(t, string(readme), walkthroughSection)
	if len(blocks) < 8 {
		t.Fatalf("the walk-through has %d sh blocks, want its steps", len(blocks))
	}
	adminAddr, execAddr := freeAddr(t), freeAddr(t)
	script := strings.Join(blocks, "\n")
	script = strings.ReplaceAll(script, "127.0.0.1:8080", adminAddr)
	script = strings.ReplaceAll(script, "127.0.0.1:9999", execAddr)

	// A directory like a fresh checkout: the top-level files and
	// directories git tracks, linked (not a database, its -wal, -shm or
	// .lock, logs or other files a run left in the checkout), so that "go
	// install ./admin/cmd/carillon" works and what the steps write
	// (database, logs) stays here.
	dir := t.TempDir()
	for _, name := range trackedTopLevel(t, repo) {
		if err := os.Symlink(filepath.Join(repo, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	home, gobin := t.TempDir(), t.TempDir()
	goenv, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	gov := strings.Split(strings.TrimSpace(string(goenv)), "\n")
	var env []string
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "CARILLON_"), strings.HasPrefix(kv, "HOME="), strings.HasPrefix(kv, "XDG_CONFIG_HOME="),
			strings.HasPrefix(kv, "GOBIN="), strings.HasPrefix(kv, "PATH="), strings.HasPrefix(kv, "GOFLAGS="):
		default:
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "GOBIN="+gobin,
		"GOCACHE="+gov[0], "GOMODCACHE="+gov[1], "GOPATH="+gov[2], "PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"),
		// The CLI's and the admin's defaults, moved to the free port like
		// the README's URLs.
		"CARILLON_LISTEN="+adminAddr, "CARILLON_SERVER=http://"+adminAddr,
		// Left from the demo, as the README warns: the walk-through unsets it.
		"CARILLON_API_TOKEN=carillon_t_left_from_the_demo")

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the admin and executor it starts in the background too
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever a failed step left running
	}
	logs := func() string {
		var b strings.Builder
		for _, f := range []string{"admin.log", "executor.log"} {
			data, _ := os.ReadFile(filepath.Join(dir, f))
			b.WriteString("\n--- " + f + ":\n" + string(data))
		}
		return b.String()
	}
	if err != nil {
		t.Fatalf("the walk-through failed: %v\n--- stdout:\n%s\n--- stderr:\n%s%s", err, out.String(), errOut.String(), logs())
	}
	for _, want := range []string{
		`logged in to http://` + regexp.QuoteMeta(adminAddr) + ` as admin \(ADMIN\)`,
		`"appName":"example","title":"Example executors"`,                           // CreateGroup
		`"liveExecutors":\[\{"address":"http://` + regexp.QuoteMeta(execAddr) + `"`, // GetGroup
		`"description":"say hello"`,                                                 // CreateJob
		`"fireTimes":\[`,                                                            // PreviewSchedule
		`FIRE TIME \(Europe/Berlin\)\n\d{4}-\d\d-\d\dT10:15:00\+0[12]:00\n`,
		`FIRE TIME \(Asia/Tokyo\)\n`,
		`"status":"RUN_STATUS_SUCCEEDED"`,
		`hello, carillon \(run \d+ of job 1, shard 0 of 1, 0-based\)`, // run log
		`"runIds":\["\d+"\]`,                                          // TriggerJob
		`\d+\s+2\s+FAILED\s+API\s+.*asked to fail`,                    // run list --job 2
		`"enabled":false|"id":"1"`,                                    // StopJob
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("the walk-through printed no %s\n--- stdout:\n%s\n--- stderr:\n%s", want, out.String(), errOut.String())
		}
	}
	if strings.Contains(out.String(), `"code":"unauthenticated"`) || strings.Contains(errOut.String(), "carillon: ") {
		t.Errorf("a step failed:\n--- stdout:\n%s\n--- stderr:\n%s%s", out.String(), errOut.String(), logs())
	}
}

// trackedTopLevel returns the names of the top-level files and directories
// of the checkout repo that git tracks.
func trackedTopLevel(t *testing.T, repo string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var names []string
	seen := map[string]bool{}
	for f := range strings.SplitSeq(strings.TrimRight(string(out), "\x00"), "\x00") {
		name, _, _ := strings.Cut(f, "/")
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	if !seen["go.mod"] {
		t.Fatalf("git ls-files in %s lists no go.mod: %q", repo, names)
	}
	return names
}

// TestREADMEWalkthroughPortTaken runs the walk-through's step that starts
// the admin while another process (the demo, left running) answers on its
// port, /readyz included: the step ends, saying that the admin stopped and
// why, instead of waiting on the other process's readiness.
func TestREADMEWalkthroughPortTaken(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the walk-through needs %s: %v", tool, err)
		}
	}
	t.Parallel()
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var step string
	for _, b := range shBlocks(t, string(readme), walkthroughSection) {
		if strings.Contains(b, "carillon serve") {
			step = b
		}
	}
	if step == "" {
		t.Fatal("the walk-through has no step that starts the admin")
	}
	demo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer demo.Close()
	addr := strings.TrimPrefix(demo.URL, "http://")
	step = strings.ReplaceAll(step, "127.0.0.1:8080", addr)

	// carillon is this test binary, as the other CLI tests run it.
	bin := t.TempDir()
	wrapper := "#!/bin/sh\nCARILLON_TEST_MAIN=1 exec " + strconv.Quote(os.Args[0]) + ` "$@"` + "\n"
	if err := os.WriteFile(filepath.Join(bin, "carillon"), []byte(wrapper), 0o700); err != nil { //nolint:gosec // a script to run
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-uo", "pipefail", "-c", step)
	cmd.Dir = t.TempDir()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CARILLON_") && !strings.HasPrefix(kv, "PATH=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "CARILLON_LISTEN="+addr)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the step still waited after a minute:\n%s", out)
	}
	if err != nil || !strings.Contains(string(out), "the admin stopped:") || !strings.Contains(string(out), "address already in use") {
		t.Errorf("the step (%v) printed:\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(cmd.Dir, "walkthrough.db")); !os.IsNotExist(err) {
		t.Errorf("the refused admin left its database: %v", err)
	}
}

// TestREADMESDKSnippet: the README's executor snippet registers against a
// default admin, which requires the executor access token.
func TestREADMESDKSnippet(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i := strings.Index(s, "\n## The executor SDK\n")
	if i < 0 {
		t.Fatal("README has no section The executor SDK")
	}
	m := regexp.MustCompile("(?s)```go\n(.*?)```").FindStringSubmatch(s[i:])
	if m == nil || !strings.Contains(m[1], "sdk.New(") || !regexp.MustCompile(`AccessToken: +os\.Getenv\("CARILLON_TOKEN"\)`).MatchString(m[1]) ||
		!strings.Contains(m[1], "carillon executor-token") {
		t.Errorf("the SDK snippet sets no AccessToken, or does not say where it comes from:\n%v", m)
	}
}

// TestREADMEQuickStart: the README's first section is the quick start,
// whose first block is the two commands a fresh checkout needs, in order:
// the admin with its demo (go run, nothing installed), then the tests.
func TestREADMEQuickStart(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	first := regexp.MustCompile(`(?m)^## .*$`).FindString(string(readme))
	if first != "## Quick start" {
		t.Fatalf("the README's first section is %q, want the quick start", first)
	}
	blocks := shBlocks(t, string(readme), "## Quick start")
	if len(blocks) == 0 {
		t.Fatal("the quick start has no sh block")
	}
	var commands []string
	for line := range strings.Lines(blocks[0]) {
		cmd, _, _ := strings.Cut(line, "#")
		if cmd = strings.TrimSpace(cmd); cmd != "" {
			commands = append(commands, cmd)
		}
	}
	if want := []string{"go run ./admin/cmd/carillon serve --demo", "go test ./..."}; !slices.Equal(commands, want) {
		t.Errorf("the quick start's commands are %q, want %q", commands, want)
	}
}
