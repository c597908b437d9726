package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/internal/admintest"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// pythonEnv makes a missing python3 fail TestPythonExecutor instead of
// skipping it; .ci/run sets it.
const pythonEnv = "CARILLON_PYTHON_TESTS"

// TestPythonExecutor runs examples/python-executor, an executor written
// with Python's standard library only, which speaks Connect's JSON codec,
// against the real admin: its cron job's runs succeed every second, a
// failing handler's run fails with its message, a run is killed, its log
// is read through the admin; and after an admin restart on the same
// address, which knows nothing of its codec until a protobuf call is
// answered 415, its runs go on.
func TestPythonExecutor(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv(pythonEnv) == "1" {
			t.Fatalf("python3 is not installed and %s=1: %v", pythonEnv, err)
		}
		t.Skipf("python3 is not installed (%s=1 makes this a failure)", pythonEnv)
	}
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "carillon.db")
	a := startAdminWith(t, admin.Config{DBPath: db}, http.DefaultClient)
	c := newClients(a.URL, http.DefaultClient)
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "python"}})
	if err != nil {
		t.Fatal(err)
	}

	var out testkit.LogBuffer
	cmd := exec.Command(python, filepath.Join("..", "examples", "python-executor", "executor.py"), "--admin", a.URL, "--app", "python")
	cmd.Env = append(os.Environ(), "CARILLON_TOKEN="+token)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("the Python executor's output:\n%s", out.String())
		}
	})
	eventually(t, a.URL, 20*time.Second, func() error {
		res, err := c.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: g.Group.Id})
		if err != nil {
			return err
		}
		if len(res.Group.Addresses) != 1 {
			return fmt.Errorf("addresses %v, want the Python executor's", res.Group.Addresses)
		}
		return nil
	})

	none := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
	hello := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "hello", Handler: "hello", Param: "world", Enabled: true,
		Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "* * * * * ?"}})
	fail := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "fail", Handler: "fail", Schedule: none})
	sleep := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "sleep", Handler: "sleep", Param: "60", Schedule: none})

	succeeded := func(c clients, after time.Time) func() error {
		return func() error {
			res, err := c.run.ListRuns(ctx, &carillonv1.ListRunsRequest{JobId: hello.Id, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, PageSize: 100})
			if err != nil {
				return err
			}
			n := 0
			for _, r := range res.Runs {
				if r.ScheduledAt.AsTime().After(after) && r.Message == "hello world" {
					n++
				}
			}
			if n < 2 {
				return fmt.Errorf("%d runs of the cron job scheduled after %v succeeded saying %q, want 2", n, after, "hello world")
			}
			return nil
		}
	}
	eventually(t, a.URL, 20*time.Second, succeeded(c, time.Time{}))

	failed := triggerJob(t, c, fail.Id)
	eventually(t, a.URL, 20*time.Second, runHas(c, failed, carillonv1.RunStatus_RUN_STATUS_FAILED, "this handler always fails"))

	killed := triggerJob(t, c, sleep.Id)
	eventually(t, a.URL, 20*time.Second, runHas(c, killed, carillonv1.RunStatus_RUN_STATUS_RUNNING, ""))
	eventually(t, a.URL, 20*time.Second, func() error { // its handler has started: its log says so
		res, err := c.run.ReadRunLog(ctx, &carillonv1.ReadRunLogRequest{RunId: killed})
		if err != nil {
			return err
		}
		if !strings.Contains(res.Content, "sleeping 60") {
			return fmt.Errorf("log %q, want the handler's line", res.Content)
		}
		return nil
	})
	if _, err := c.run.KillRun(ctx, &carillonv1.KillRunRequest{RunId: killed}); err != nil {
		t.Fatal(err)
	}
	eventually(t, a.URL, 20*time.Second, runHas(c, killed, carillonv1.RunStatus_RUN_STATUS_KILLED, ""))

	// The admin restarts where the executor knows it, on the same database.
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	addr := strings.TrimPrefix(a.URL, "http://")
	b := admintest.StartAt(t, admin.Config{DBPath: db, Token: token, AdminPassword: adminPassword}, addr)
	credentials.Store(b.URL, b.Login(t, http.DefaultClient, admin.FirstAdminUsername, adminPassword))
	cb := newClients(b.URL, http.DefaultClient)
	eventually(t, b.URL, 20*time.Second, succeeded(cb, restarted))
	if u, _ := url.Parse(b.URL); u.Host != addr {
		t.Fatalf("restarted at %s, want %s", u.Host, addr)
	}
}

// triggerJob runs job now and returns its run's ID.
func triggerJob(t *testing.T, c clients, job int64) int64 {
	t.Helper()
	res, err := c.job.TriggerJob(context.Background(), &carillonv1.TriggerJobRequest{JobId: job})
	if err != nil {
		t.Fatal(err)
	}
	return res.RunIds[0]
}

// runHas returns a condition: run has status, and a message containing msg.
func runHas(c clients, run int64, status carillonv1.RunStatus, msg string) func() error {
	return func() error {
		res, err := c.run.GetRun(context.Background(), &carillonv1.GetRunRequest{Id: run})
		if err != nil {
			return err
		}
		if res.Run.Status != status || !strings.Contains(res.Run.Message, msg) {
			return fmt.Errorf("run %d: %s %q, want %s saying %q", run, res.Run.Status, res.Run.Message, status, msg)
		}
		return nil
	}
}
