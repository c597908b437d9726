package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/carillonhq/carillon/internal/testkit"
)

// The tests of this file run carillon as a process (newBinary), for what
// only a process shows: main's exit code, its signal handling, the working
// directory. The other CLI tests run command lines in this process
// (newCLI); the soak tier's tests (crash loop, failover, freeze, an
// executor killed mid-run, the README's walk-through) and
// TestVersionStampedRevision run processes of their own.

// TestProcessExitCodes: main exits with the code of each kind of outcome
// and prints to the process's streams; carillon alone writes nothing in its
// working directory or its config directory; a relative file name is in
// the working directory.
func TestProcessExitCodes(t *testing.T) {
	t.Parallel()
	b := newBinary(t)
	code, out, errOut := b.run("")
	if code != exitOK || !strings.Contains(out, "Client commands") || !strings.Contains(out, "Exit codes:") || errOut != "" {
		t.Errorf("carillon: exit %d, stdout %q, stderr %q; want the commands", code, out, errOut)
	}
	if entries, err := os.ReadDir(b.dir); err != nil || len(entries) != 0 {
		t.Errorf("carillon alone left %v in its directory (%v); want nothing", entries, err)
	}
	if _, err := os.Stat(filepath.Join(b.home, ".config")); !os.IsNotExist(err) {
		t.Errorf("carillon alone made a config directory: %v", err)
	}
	b.fails(exitUsage, `unknown command "frobnicate" for "carillon"`, "frobnicate")
	b.fails(exitUnavailable, "carillon: unavailable: ", "job", "list", "--server", "http://127.0.0.1:1", "--api-token", "x")
	if err := os.WriteFile(filepath.Join(b.dir, "bad.conf"), []byte("listen\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.fails(exitUsage, `bad.conf:1: want "name = value"`, "serve", "--config-file", "bad.conf")
	b.fails(exitFailure, "no such file", "serve", "--config-file", "missing.conf")
}

// TestProcessStopsOnSignal: serve stops on SIGTERM (a container's stop)
// and on SIGINT (Ctrl-C) and exits 0, its database (a relative --db) in
// its working directory.
func TestProcessStopsOnSignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			b := newBinary(t)
			addr := freeAddr(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cmd := b.command(ctx, "serve", "--listen", addr, "--db", "carillon.db", "--log-level", "warn")
			var logs testkit.LogBuffer
			cmd.Stdout, cmd.Stderr = &logs, &logs
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			code, exited := make(chan int, 1), make(chan struct{})
			go func() {
				defer close(exited)
				err := cmd.Wait()
				var ee *exec.ExitError
				switch {
				case errors.As(err, &ee):
					code <- ee.ExitCode()
				case err != nil:
					code <- -1
				default:
					code <- 0
				}
			}()
			defer func() { cancel(); <-exited }() // a test that failed before the signal
			waitReady(t, "http://"+addr, &logs, code)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case c := <-code:
				if c != exitOK {
					t.Errorf("serve after %v: exit %d; log:\n%s", sig, c, logs.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("serve still running 30 s after %v; log:\n%s", sig, logs.String())
			}
			if _, err := os.Stat(filepath.Join(b.dir, "carillon.db")); err != nil {
				t.Errorf("the database of --db carillon.db, in the working directory: %v", err)
			}
		})
	}
}
