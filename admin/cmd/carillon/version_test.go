package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/carillonhq/carillon/internal/testkit"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	b := newCLI(t)
	code, out, errOut := b.run("", "version")
	if code != exitOK {
		t.Fatalf("carillon version exited %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "carillon ") || !strings.HasPrefix(lines[1], "revision ") || lines[2] != runtime.Version() {
		t.Errorf("carillon version printed %q: want carillon <version>, revision <rev>, %s", out, runtime.Version())
	}
	if code, _, _ := b.run("", "version", "extra"); code != exitUsage {
		t.Errorf("carillon version extra exited %d, want %d", code, exitUsage)
	}
}

func TestLogFormat(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	h, err := newLogHandler(&buf, "info", logFormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	slog.New(h).Info("hello", "run", 7)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("--log-format json wrote %q, not a JSON object: %v", buf.String(), err)
	}
	if line["msg"] != "hello" || line["run"] != float64(7) {
		t.Errorf("JSON line = %v, want msg hello and run 7", line)
	}
	buf.Reset()
	h, err = newLogHandler(&buf, "warn", logFormatText)
	if err != nil {
		t.Fatal(err)
	}
	slog.New(h).Info("dropped")
	slog.New(h).Warn("kept", "run", 7)
	if got := buf.String(); strings.Contains(got, "dropped") || !strings.Contains(got, "msg=kept run=7") {
		t.Errorf("text handler at warn wrote %q", got)
	}
	for _, bad := range [][2]string{{"info", "xml"}, {"loud", "text"}} {
		if _, err := newLogHandler(&buf, bad[0], bad[1]); err == nil {
			t.Errorf("newLogHandler(%q, %q) accepted it", bad[0], bad[1])
		}
	}
	if code, _, errOut := newCLI(t).run("", "serve", "--log-format", "xml", "--db", filepath.Join(t.TempDir(), "c.db")); code != exitUsage || !strings.Contains(errOut, "--log-format") {
		t.Errorf("serve --log-format xml exited %d (%q), want %d naming the flag", code, errOut, exitUsage)
	}
}

// TestVersionStampedRevision builds carillon as the Dockerfile does, from
// a context without VCS information and the revision as a build argument
// (the Dockerfile's own -ldflags, its -X flag among them), and checks that
// carillon version prints that revision. It runs a binary of its own, not
// this test binary.
func TestVersionStampedRevision(t *testing.T) {
	testkit.Soak(t, "builds the carillon binary as the Dockerfile does: a link of several seconds")
	t.Parallel()
	dockerfile, err := os.ReadFile("../../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	// The Dockerfile's -ldflags, with its REVISION.
	m := regexp.MustCompile(`-ldflags="([^"]*-X \S+=\$\{REVISION\}[^"]*)"`).FindSubmatch(dockerfile)
	if m == nil || !strings.Contains(string(dockerfile), "-buildvcs=false") {
		t.Fatalf("the Dockerfile stamps no REVISION with -X, or builds with VCS information:\n%s", dockerfile)
	}
	ldflags := strings.ReplaceAll(string(m[1]), "${REVISION}", "0123456789abcdef")
	bin := filepath.Join(t.TempDir(), "carillon")
	build := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "-ldflags", ldflags, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(out), "\nrevision 0123456789abcdef\n") {
		t.Errorf("carillon version: %v\n%s", err, out)
	}
}
