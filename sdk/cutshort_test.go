package sdk_test

import (
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/google/go-cmp/cmp"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk"
	"github.com/carillonhq/carillon/sdk/sdktest"
)

// TestExecutorHeldRunsAfterCrash: an executor killed while runs ran is
// restarted on the disk it left (a copy of its LogDir taken while they
// ran, as SIGKILL would leave it). The new process says CUT_SHORT of each
// run whose log had reached the disk (over 64 KiB, a script, read while
// running), so that the admin settles it LOST at once instead of waiting
// for a result that never comes; ENDED of the runs that ended, whose logs
// are whole; and nothing of a run whose log was still in memory. A run cut
// short is still held: sent again, it is refused as a duplicate.
func TestExecutorHeldRunsAfterCrash(t *testing.T) {
	t.Parallel()
	const (
		db       = "0123456789abcdef0123456789abcdef"
		ended    = carillonv1.HeldRunState_HELD_RUN_STATE_ENDED
		cutShort = carillonv1.HeldRunState_HELD_RUN_STATE_CUT_SHORT
	)
	script := runtime.GOOS != "windows"
	if _, err := exec.LookPath("sh"); err != nil {
		script = false
	}
	admin := sdktest.NewAdmin(t, "tok")
	cfg := sdk.Config{AdminURLs: []string{admin.URL}, AccessToken: "tok", LogDir: t.TempDir(), ScriptsEnabled: script,
		ShutdownTimeout: 100 * time.Millisecond} // the runs left running are killed at the end
	started := make(chan int64, 10)
	bigLog := func(job *sdk.Job) {
		for i := range 2000 { // about 90 KiB, over the 64 KiB kept in memory
			job.Logf("line %d of a long log", i)
		}
	}
	handlers := func(ex *sdk.Executor) {
		exampleHandlers(ex)
		ex.HandleFunc("big", func(ctx context.Context, job *sdk.Job) error {
			bigLog(job)
			started <- job.RunID
			<-ctx.Done()
			return context.Cause(ctx)
		})
		ex.HandleFunc("small", func(ctx context.Context, job *sdk.Job) error {
			job.Logf("a short log")
			started <- job.RunID
			<-ctx.Done()
			return context.Cause(ctx)
		})
		ex.HandleFunc("big-ok", func(ctx context.Context, job *sdk.Job) error {
			bigLog(job)
			return nil
		})
	}
	first := sdktest.Start(t, cfg, handlers)
	run := func(ex *sdktest.Executor, req *carillonv1.RunRequest) error {
		req.JobId, req.ShardTotal, req.DatabaseId = req.GetRunId(), 1, db
		_, err := ex.Client.Run(t.Context(), req)
		return err
	}
	for _, req := range []*carillonv1.RunRequest{
		{RunId: 1, Handler: "big"},    // its log over 64 KiB: on disk while it runs
		{RunId: 2, Handler: "small"},  // read while it runs (the console's run page does)
		{RunId: 3, Handler: "small"},  // in memory only
		{RunId: 5, Handler: "big-ok"}, // ended: a file of its own and its end mark
		{RunId: 6, Handler: "hello"},  // ended: a record of a segment
	} {
		if err := run(first, req); err != nil {
			t.Fatalf("Run(%d): %v", req.GetRunId(), err)
		}
	}
	marker := filepath.Join(t.TempDir(), "script started")
	if script {
		if err := run(first, &carillonv1.RunRequest{RunId: 4, Param: marker, Script: &carillonv1.Script{
			Type: carillonv1.ScriptType_SCRIPT_TYPE_SHELL, Source: "echo working\n: > \"$1\"\nexec sleep 300\n"}}); err != nil {
			t.Fatalf("Run(4): %v", err)
		}
	}
	for range 3 {
		select {
		case <-started:
		case <-time.After(waitLimit):
			t.Fatalf("runs 1 to 3 did not all start within %s", waitLimit)
		}
	}
	admin.Result(t, 5)
	admin.Result(t, 6)
	if _, err := first.Client.ReadLog(t.Context(), &carillonv1.ReadLogRequest{RunId: 2, DatabaseId: db, FromLine: 1}); err != nil {
		t.Fatalf("ReadLog(2): %v", err)
	}
	if script {
		waitUntil(t, "the script of run 4 started", func() error {
			_, err := os.Stat(marker)
			return err
		})
	}

	// The disk as SIGKILL would leave it now, and a new process on it.
	crashed := t.TempDir()
	copyDir(t, cfg.LogDir, crashed)
	restarted := cfg
	restarted.LogDir = crashed
	second := sdktest.Start(t, restarted, handlers)
	held, _ := heldRuns(t, second.Client, db, 1, 2, 3, 4, 5, 6, 7)
	want := map[int64]carillonv1.HeldRunState{1: cutShort, 2: cutShort, 5: ended, 6: ended}
	if script {
		want[4] = cutShort
	}
	if diff := cmp.Diff(want, held); diff != "" {
		t.Errorf("HeldRuns after a crash (-want +got):\n%s", diff)
	}
	if err := run(second, &carillonv1.RunRequest{RunId: 1, Handler: "big"}); connect.CodeOf(err) != connect.CodeAlreadyExists {
		t.Errorf("Run(1) again after the crash = %v, want already_exists: it ran before", err)
	}
}

// copyDir copies the files under src to dst, as they are now.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(to, 0o750)
		}
		if strings.HasSuffix(p, ".lock") {
			return nil // the running process's lock, if any
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(to)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			_ = out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}
