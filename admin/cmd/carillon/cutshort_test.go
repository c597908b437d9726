package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk"
)

// The environment of an executor process that TestExecutorCrashCutsRunsShort
// starts from this test binary (TestMain runs runCrashExecutor).
const (
	crashExecutorEnv      = "CARILLON_TEST_EXECUTOR" // "1": be the executor
	crashExecutorAdmin    = "CARILLON_TEST_EXECUTOR_ADMIN"
	crashExecutorListen   = "CARILLON_TEST_EXECUTOR_LISTEN"
	crashExecutorLogDir   = "CARILLON_TEST_EXECUTOR_LOG_DIR"
	crashExecutorReadyDir = "CARILLON_TEST_EXECUTOR_READY_DIR"
	crashExecutorBlock    = "CARILLON_TEST_EXECUTOR_BLOCK" // "1": the handlers run until killed
)

// runCrashExecutor is the executor process of TestExecutorCrashCutsRunsShort:
// a real SDK executor for app "cut" on the address, admin and log
// directory its environment names, with scripts enabled. Its handlers
// "big" (a log over 64 KiB) and "small" (a log of a line) each write the
// file "job-<job id>" in the ready directory once their log is written;
// with CARILLON_TEST_EXECUTOR_BLOCK=1 they then run until the process is
// killed, else they succeed. It stops on SIGTERM.
func runCrashExecutor() int {
	ready, block := os.Getenv(crashExecutorReadyDir), os.Getenv(crashExecutorBlock) == "1"
	e, err := sdk.New(sdk.Config{AdminURLs: []string{os.Getenv(crashExecutorAdmin)}, AppName: "cut", AccessToken: crashToken,
		LogDir: os.Getenv(crashExecutorLogDir), ScriptsEnabled: true, ShutdownTimeout: time.Second,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	work := func(lines int) sdk.HandlerFunc {
		return func(ctx context.Context, job *sdk.Job) error {
			for i := range lines {
				job.Logf("line %d of the log of run %d", i, job.RunID)
			}
			if err := os.WriteFile(filepath.Join(ready, "job-"+strconv.FormatInt(job.JobID, 10)), nil, 0o600); err != nil {
				return err
			}
			if block {
				<-ctx.Done()
				return context.Cause(ctx)
			}
			return nil
		}
	}
	e.HandleFunc("big", work(2000)) // about 90 KiB: its log goes to a file of its own
	e.HandleFunc("small", work(1))
	ln, err := net.Listen("tcp", os.Getenv(crashExecutorListen))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := e.Serve(ctx, ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// crashExecutor is an executor process of this test binary.
type crashExecutor struct {
	t                         *testing.T
	admin, addr, logDir, logf string
	ready                     string
	cmd                       *exec.Cmd
	exited                    chan struct{}
}

// start starts the executor, its handlers blocking or not.
func (e *crashExecutor) start(block bool) {
	e.t.Helper()
	logf, err := os.OpenFile(e.logf, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		e.t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashExecutorEnv+"=1", crashExecutorAdmin+"="+e.admin, crashExecutorListen+"="+e.addr,
		crashExecutorLogDir+"="+e.logDir, crashExecutorReadyDir+"="+e.ready, crashExecutorBlock+"="+map[bool]string{true: "1"}[block])
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.cmd, e.exited = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(e.exited) }()
}

// kill kills the executor with SIGKILL and waits for it.
func (e *crashExecutor) kill() {
	if e.cmd == nil {
		return
	}
	_ = e.cmd.Process.Signal(syscall.SIGKILL)
	<-e.exited
	e.cmd = nil
}

// stop stops the executor with SIGTERM, gracefully.
func (e *crashExecutor) stop() {
	if e.cmd == nil {
		return
	}
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.exited:
	case <-time.After(30 * time.Second):
		e.kill()
	}
	e.cmd = nil
}

// TestExecutorCrashCutsRunsShort kills a real SDK executor process with
// SIGKILL while runs run whose logs had reached its disk (a log over
// 64 KiB, a script, a log read through the admin while running) and
// restarts it on its address and log directory. The admin must settle each
// run LOST, saying the executor restarted and the run was cut short,
// within a monitor sweep or two, not leave it RUNNING for good; and the
// FIX_DELAY job caught so must fire again.
func TestExecutorCrashCutsRunsShort(t *testing.T) {
	testkit.Soak(t, "starts an admin and kills an executor process: about 20 s")
	ctx := context.Background()
	dir := t.TempDir()
	a := &crashAdmin{t: t, db: filepath.Join(dir, "carillon.db"), log: filepath.Join(dir, "admin.log"), addr: freeAddr(t)}
	a.start()
	defer a.kill()
	mc := a.login(ctx)
	ex := &crashExecutor{t: t, admin: a.url(), addr: freeAddr(t), logDir: filepath.Join(dir, "executor"),
		logf: filepath.Join(dir, "executor.log"), ready: filepath.Join(dir, "ready")}
	if err := os.MkdirAll(ex.ready, 0o750); err != nil {
		t.Fatal(err)
	}
	ex.start(true)
	defer ex.stop()
	g, err := mc.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "cut"}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the executor registered", func() (bool, error) {
		res, err := mc.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: g.Group.Id})
		return err == nil && len(res.Group.Addresses) == 1, err
	})
	job := func(j *carillonv1.Job) int64 {
		t.Helper()
		j.GroupId, j.Enabled = g.Group.Id, true
		if j.Schedule == nil {
			j.Schedule = &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
		}
		res, err := mc.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: j})
		if err != nil {
			t.Fatal(err)
		}
		return res.Job.Id
	}
	// The script ends when its executor dies, as its process group would
	// not: it is a child of the executor, in a group of its own.
	script := "echo working\n: > \"$1\"\nwhile kill -0 $PPID 2>/dev/null; do sleep 0.2; done\n"
	fixDelay := job(&carillonv1.Job{Description: "a FIX_DELAY job with a long log", Handler: "big",
		Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY, IntervalSeconds: 1}})
	read := job(&carillonv1.Job{Description: "a short log read while it runs", Handler: "small"})
	scripted := job(&carillonv1.Job{Description: "a script", Param: filepath.Join(ex.ready, "script"),
		Script: &carillonv1.Script{Type: carillonv1.ScriptType_SCRIPT_TYPE_SHELL, Source: script}})
	for _, id := range []int64{read, scripted} {
		if _, err := mc.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: id}); err != nil {
			t.Fatal(err)
		}
	}
	for _, marker := range []string{"job-" + strconv.FormatInt(fixDelay, 10), "job-" + strconv.FormatInt(read, 10), "script"} {
		waitFor(t, 30*time.Second, "run of "+marker+" started", func() (bool, error) {
			_, err := os.Stat(filepath.Join(ex.ready, marker))
			return err == nil, nil
		})
	}
	runOf := func(jobID int64) *carillonv1.Run {
		t.Helper()
		res, err := mc.run.ListRuns(ctx, &carillonv1.ListRunsRequest{JobId: jobID, PageSize: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Runs) == 0 {
			t.Fatalf("job %d has no run", jobID)
		}
		return res.Runs[len(res.Runs)-1] // the first: newest first
	}
	cut := map[int64]string{}
	for id, what := range map[int64]string{fixDelay: "log over 64 KiB", read: "log read while running", scripted: "script"} {
		cut[runOf(id).Id] = what
	}
	waitFor(t, 30*time.Second, "the runs RUNNING at the executor", func() (bool, error) {
		for id := range cut {
			res, err := mc.run.GetRun(ctx, &carillonv1.GetRunRequest{Id: id})
			if err != nil || res.Run.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING || res.Run.ExecutorAddress == "" {
				return false, err
			}
		}
		return true, nil
	})
	if _, err := mc.run.ReadRunLog(ctx, &carillonv1.ReadRunLogRequest{RunId: runOf(read).Id}); err != nil {
		t.Fatalf("ReadRunLog of the run of job %d: %v", read, err)
	}

	ex.kill()
	if err := os.RemoveAll(ex.ready); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(ex.ready, 0o750); err != nil {
		t.Fatal(err)
	}
	ex.start(false)
	waitFor(t, 60*time.Second, "the runs cut short settled LOST", func() (bool, error) {
		var errs []error
		for id, what := range cut {
			res, err := mc.run.GetRun(ctx, &carillonv1.GetRunRequest{Id: id})
			if err != nil {
				return false, err
			}
			if r := res.Run; r.Status != carillonv1.RunStatus_RUN_STATUS_LOST {
				errs = append(errs, fmt.Errorf("run %d (%s): %s", id, what, r.Status))
			}
		}
		return len(errs) == 0, errors.Join(errs...)
	})
	for id, what := range cut {
		res, err := mc.run.GetRun(ctx, &carillonv1.GetRunRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		if r := res.Run; !r.SettledByAdmin || !strings.Contains(r.Message, "the executor restarted; the run was cut short") {
			t.Errorf("run %d (%s): LOST, settled by the admin %v, message %q; want the admin's, saying it was cut short",
				id, what, r.SettledByAdmin, r.Message)
		}
	}
	waitFor(t, 30*time.Second, "the FIX_DELAY job fired again and succeeded", func() (bool, error) {
		res, err := mc.run.ListRuns(ctx, &carillonv1.ListRunsRequest{JobId: fixDelay, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, PageSize: 1})
		return err == nil && len(res.Runs) > 0, err
	})
}
