package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCLIWorkflow drives the workflow commands, in this process, against
// a real admin and executor: a YAML file creates extract -> (transform_a,
// transform_b) -> load, trigger runs it to SUCCEEDED, runs and run get
// show it; a cycle is refused naming the node; a failing node fails its
// workflow run, which retry runs again and cancel refuses once it ended.
func TestCLIWorkflow(t *testing.T) {
	t.Parallel()
	url := startAdmin(t)
	b := newCLI(t)
	cfg := filepath.Join(b.home, "config.json")
	as := func(args ...string) []string { return append(args, "--config", cfg) }
	b.must(testPassword+"\n", as("login", "--server", url, "--user", "admin", "--password-stdin")...)
	b.waitFor(`\n\s+cli\n`, as("group", "list")...)
	b.must("", as("group", "create", "cli")...)
	b.waitFor(`Live executors:\s+http://127\.0\.0\.1:\d+`, as("group", "get", "1")...)
	b.must("", as("job", "create", "--group", "1", "--description", "hello", "--handler", "hello", "--no-schedule")...)
	b.must("", as("job", "create", "--group", "1", "--description", "fail", "--handler", "fail", "--no-schedule")...)

	write := func(name, body string) string {
		path := filepath.Join(b.dir, name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return name // relative: the command runs in b.dir
	}
	etl := write("etl.yaml", `group_id: 1
name: etl
description: extract, transform in parallel, load after both
nodes:
  - {key: extract, job_id: 1}
  - {key: transform_a, job_id: 1, depends_on: [extract], param: a}
  - {key: transform_b, job_id: 1, depends_on: [extract]}
  - {key: load, job_id: 1, depends_on: [transform_a, transform_b]}
`)
	out := b.must("", as("workflow", "create", "-f", etl)...)
	for _, want := range []string{`ID:\s+1\n`, `Name:\s+etl\n`, `load \(job 1\) <- transform_a, transform_b`, `transform_a \(job 1\) <- extract param "a"`,
		`Block:\s+SERIAL\n`, `Schedule:\s+none\n`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("workflow create: no %s in\n%s", want, out)
		}
	}
	if out := b.must("", as("workflow", "list")...); !strings.HasPrefix(out, "ID") || !strings.Contains(out, "etl") {
		t.Errorf("workflow list: %q", out)
	}
	run := strings.TrimSpace(b.must("", as("workflow", "trigger", "1")...))
	out = b.waitFor(`Status:\s+SUCCEEDED`, as("workflow", "run", "get", run)...)
	if n := strings.Count(out, ": SUCCEEDED, run "); n != 4 {
		t.Errorf("workflow run get: %d nodes SUCCEEDED, want 4:\n%s", n, out)
	}
	if out := b.must("", as("workflow", "runs", "1")...); !regexp.MustCompile(`\n` + run + `\s+1\s+SUCCEEDED\s+MANUAL`).MatchString(out) {
		t.Errorf("workflow runs: %q", out)
	}

	cycle := write("cycle.yaml", `group_id: 1
name: cycle
nodes:
  - {key: a, job_id: 1, depends_on: [b]}
  - {key: b, job_id: 1, depends_on: [a]}
`)
	b.fails(exitRefused, `invalid_argument: workflow.nodes[0].depends_on: node "a": workflow: the dependencies form a cycle`, as("workflow", "create", "-f", cycle)...)
	b.fails(exitUsage, "give the workflow's file", as("workflow", "create")...)

	// A failing node: the workflow run fails; retry runs it again.
	failing := write("failing.yaml", `group_id: 1
name: failing
nodes:
  - {key: first, job_id: 2}
  - {key: after, job_id: 1, depends_on: [first]}
`)
	b.must("", as("workflow", "create", "-f", failing)...)
	run = strings.TrimSpace(b.must("", as("workflow", "trigger", "2")...))
	out = b.waitFor(`Status:\s+FAILED`, as("workflow", "run", "get", run)...)
	if !strings.Contains(out, "after (job 1) <- first: SKIPPED (upstream failed: first)") {
		t.Errorf("failed workflow run: %q", out)
	}
	b.fails(exitRefused, "failed_precondition", as("workflow", "cancel", run)...)
	if out := b.must("", as("workflow", "retry", run)...); !regexp.MustCompile(`Attempt:\s+1\n`).MatchString(out) {
		t.Errorf("workflow retry: %q", out)
	}
	b.waitFor(`Status:\s+FAILED[\s\S]*first \(job 2\): FAILED, run \d+, attempt 1`, as("workflow", "run", "get", run)...)

	// Update from a file, start and stop a schedule, delete.
	write("etl.yaml", `group_id: 1
name: etl
schedule: {type: SCHEDULE_TYPE_CRON, cron: "0 0 2 * * ?", time_zone: UTC}
nodes:
  - {key: only, job_id: 1}
`)
	if out := b.must("", as("workflow", "update", "1", "-f", etl)...); !strings.Contains(out, "cron 0 0 2 * * ? (UTC)") || strings.Contains(out, "extract") {
		t.Errorf("workflow update: %q", out)
	}
	if out := b.must("", as("workflow", "start", "1")...); !regexp.MustCompile(`Enabled:\s+true\n[\s\S]*Next fire:\s+\d{4}-`).MatchString(out) {
		t.Errorf("workflow start: %q", out)
	}
	if out := b.must("", as("workflow", "stop", "1")...); !regexp.MustCompile(`Enabled:\s+false\n`).MatchString(out) {
		t.Errorf("workflow stop: %q", out)
	}
	if out := b.must("", as("workflow", "delete", "1")...); out != "deleted workflow 1\n" {
		t.Errorf("workflow delete: %q", out)
	}
	b.fails(exitNotFound, "not_found", as("workflow", "get", "1")...)
}
