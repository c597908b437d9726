package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// loggedIn serves an admin without executors and returns a binary logged
// in to it as the ADMIN, and the function that adds the session's config
// file to a command line.
func loggedIn(t *testing.T) (*binary, func(args ...string) []string) {
	t.Helper()
	url := serveAdmin(t, nil)
	b := newBinary(t)
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
