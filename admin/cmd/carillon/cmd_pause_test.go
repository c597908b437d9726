package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCLIPauseAndBatch: carillon group pause/resume show the group paused
// and not, a paused group's job cannot be triggered, and job stop/start
// take several ids: all or none.
func TestCLIPauseAndBatch(t *testing.T) {
	t.Parallel()
	url := startAdmin(t)
	b := newCLI(t)
	cfg := filepath.Join(b.home, "config.json")
	as := func(args ...string) []string { return append(args, "--config", cfg) }
	b.must(testPassword+"\n", as("login", "--server", url, "--user", "admin", "--password-stdin")...)
	b.must("", as("group", "create", "paused")...)
	for range 3 {
		b.must("", as("job", "create", "--group", "1", "--description", "d", "--handler", "h", "--every", "1h", "--start")...)
	}

	if out := b.must("", as("group", "pause", "1")...); !regexp.MustCompile(`Paused:\s+yes\n`).MatchString(out) {
		t.Errorf("group pause: %q", out)
	}
	if out := b.must("", as("group", "list")...); !strings.Contains(out, "PAUSED") || !regexp.MustCompile(`\byes\n`).MatchString(out) {
		t.Errorf("group list of a paused group: %q", out)
	}
	b.fails(exitRefused, "paused", as("job", "trigger", "1")...)
	if out := b.must("", as("group", "resume", "1")...); !regexp.MustCompile(`Paused:\s+no\n`).MatchString(out) {
		t.Errorf("group resume: %q", out)
	}

	// Several ids: one unknown refuses them all.
	b.fails(exitNotFound, "ids[2]: job 99 not found", as("job", "stop", "1", "2", "99")...)
	if out := b.must("", as("job", "list", "--stopped")...); strings.Count(out, "\n") != 1 { // the header alone
		t.Errorf("after a refused job stop 1 2 99, stopped jobs: %q, want none", out)
	}
	if out := b.must("", as("job", "stop", "1", "2", "3")...); strings.Count(out, "false") != 3 {
		t.Errorf("job stop 1 2 3: %q, want three stopped jobs", out)
	}
	if out := b.must("", as("job", "start", "3", "1")...); strings.Count(out, "true") != 2 {
		t.Errorf("job start 3 1: %q, want two started jobs", out)
	}
	if out := b.must("", as("job", "start", "2")...); strings.Count(out, "true") != 1 {
		t.Errorf("job start 2: %q, want one started job", out)
	}
}
