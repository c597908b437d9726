package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// perfRun is perf(1) recording the admin's on-CPU stacks for the window.
type perfRun struct {
	cmd *exec.Cmd
	out string
}

// startPerf samples process pid at 499 Hz with call graphs into out for d.
func startPerf(ctx context.Context, pid int, out string, d time.Duration) (*perfRun, error) {
	if _, err := exec.LookPath("perf"); err != nil {
		return nil, fmt.Errorf("--perf: %w", err)
	}
	secs := strconv.FormatFloat(d.Seconds(), 'f', 1, 64)
	cmd := exec.CommandContext(ctx, "perf", "record", "-q", "-F", "499", "-g", "-p", strconv.Itoa(pid), "-o", out, "--", "sleep", secs) //nolint:gosec // the load tool starts the binary and perf the operator named
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("--perf: %w", err)
	}
	return &perfRun{cmd: cmd, out: out}, nil
}

// finish waits for the recording and writes the symbols with the most
// samples (self time) to out.txt, and returns the first lines of it.
func (p *perfRun) finish(ctx context.Context) (string, error) {
	if err := p.cmd.Wait(); err != nil {
		return "", fmt.Errorf("perf record: %w", err)
	}
	report, err := exec.CommandContext(ctx, "perf", "report", "-i", p.out, "--stdio", "--no-children", //nolint:gosec // the load tool starts the binary and perf the operator named
		"--sort", "symbol", "--percent-limit", "0.5", "-g", "none").Output()
	if err != nil {
		return "", fmt.Errorf("perf report: %w", err)
	}
	if err := os.WriteFile(p.out+".txt", report, 0o644); err != nil { //nolint:gosec // a report file for the operator
		return "", err
	}
	var top []string
	for _, line := range strings.Split(string(report), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if top = append(top, line); len(top) == 15 {
			break
		}
	}
	return strings.Join(top, "\n"), nil
}
