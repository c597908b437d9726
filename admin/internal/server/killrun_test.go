package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/carillonhq/carillon/admin/client"
	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/server"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	"github.com/carillonhq/carillon/internal/clock"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// killRecorder is an executor that records the Kill and ReadLog requests
// it gets.
type killRecorder struct {
	carillonv1connect.UnimplementedExecutorServiceHandler
	mu    sync.Mutex
	kills []*carillonv1.KillRequest
	reads []*carillonv1.ReadLogRequest
}

func (k *killRecorder) Kill(_ context.Context, req *carillonv1.KillRequest) (*carillonv1.KillResponse, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kills = append(k.kills, req)
	return &carillonv1.KillResponse{}, nil
}

func (k *killRecorder) ReadLog(_ context.Context, req *carillonv1.ReadLogRequest) (*carillonv1.ReadLogResponse, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.reads = append(k.reads, req)
	return &carillonv1.ReadLogResponse{FromLine: 1, ToLine: 1, Content: "hello\n", End: true}, nil
}

// runningRuns stores a job of a new group and returns a function that
// stores one RUNNING run of it on the executor at address.
func runningRuns(t *testing.T, st *store.Store, now time.Time, address string) func() store.Run {
	t.Helper()
	ctx := context.Background()
	g, err := st.Groups.Create(ctx, store.Group{AppName: "killapp", Title: "killapp"}, now)
	if err != nil {
		t.Fatal(err)
	}
	j, err := st.Jobs.Create(ctx, store.Job{GroupID: g.ID, Description: "j", Handler: "h",
		ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}, now)
	if err != nil {
		t.Fatal(err)
	}
	return func() store.Run {
		t.Helper()
		runs, err := st.Runs.Insert(ctx, []store.Run{{JobID: j.ID, GroupID: g.ID, ExecutorAddress: address, ShardTotal: 1,
			TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, ScheduledAt: now, TriggeredAt: now,
			Status: carillonv1.RunStatus_RUN_STATUS_RUNNING}})
		if err != nil {
			t.Fatal(err)
		}
		return runs[0]
	}
}

// TestKillRunKillsThatRun: KillRun asks the run's executor to kill that
// run only (KillRequest.run_id, with its database), keeping job_id for
// executors that predate run_id; ReadRunLog names the database too.
func TestKillRunKillsThatRun(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "")
		exec := &killRecorder{}
		r := runningRuns(t, b.store, b.clock.Now(), testkit.ServeExecutor(t, exec))()

		runs := carillonv1connect.NewRunServiceClient(http.DefaultClient, b.url, client.WithToken(b.admin))
		if _, err := runs.ReadRunLog(ctx, &carillonv1.ReadRunLogRequest{RunId: r.ID}); err != nil {
			t.Fatal(err)
		}
		if _, err := runs.KillRun(ctx, &carillonv1.KillRunRequest{RunId: r.ID}); err != nil {
			t.Fatal(err)
		}
		db := b.store.DatabaseID()
		if db == "" {
			t.Fatal("the store has no database ID")
		}
		exec.mu.Lock()
		defer exec.mu.Unlock()
		wantKill := &carillonv1.KillRequest{JobId: r.JobID, RunId: r.ID, DatabaseId: db}
		if len(exec.kills) != 1 || !proto.Equal(exec.kills[0], wantKill) {
			t.Errorf("executor got kill requests %v, want one: %v", exec.kills, wantKill)
		}
		wantRead := &carillonv1.ReadLogRequest{RunId: r.ID, DatabaseId: db, ScheduledAt: timestamppb.New(r.ScheduledAt)}
		if len(exec.reads) != 1 || !proto.Equal(exec.reads[0], wantRead) {
			t.Errorf("executor got log requests %v, want one: %v", exec.reads, wantRead)
		}
		if got, _ := b.store.Runs.Get(ctx, r.ID); got.Status != carillonv1.RunStatus_RUN_STATUS_KILLED {
			t.Errorf("run after KillRun: %s, want KILLED", got.Status)
		}
	})
}

// TestReportResultsOfAnotherDatabase: a result naming another database is
// acknowledged and ignored, with one warning per call; results naming
// ours, or none (older executors), settle their runs.
func TestReportResultsOfAnotherDatabase(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		st := be.Open(t)
		clk := clock.NewFake(time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC))
		trig, err := trigger.New(trigger.Config{Store: st, Clock: clk, Queue: nopQueue{},
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		var logs testkit.LogBuffer
		srv := httptest.NewServer(server.New(server.Config{
			Store: st, Trigger: trig, NowFunc: clk.Now, PasswordCost: bcrypt.MinCost,
			LoginLimiter: auth.NewLoginLimiter(3, time.Minute, 10, time.Second),
			Logger:       slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
		}).Handler())
		t.Cleanup(srv.Close)
		registry := carillonv1connect.NewRegistryServiceClient(http.DefaultClient, srv.URL)

		newRun := runningRuns(t, st, clk.Now(), "http://10.0.0.1:9999")
		r := newRun()
		other := strings.Repeat("f", 32)
		if other == st.DatabaseID() {
			t.Fatal("the test's other database ID is ours")
		}
		result := func(db string) *carillonv1.RunResult {
			return &carillonv1.RunResult{RunId: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, Message: db, DatabaseId: db}
		}
		// Two results of another database, whose run r.ID is some other run.
		if _, err := registry.ReportResults(ctx, &carillonv1.ReportResultsRequest{Results: []*carillonv1.RunResult{result(other), result(other)}}); err != nil {
			t.Fatalf("results of another database: %v, want them acknowledged", err)
		}
		if got, _ := st.Runs.Get(ctx, r.ID); got.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING {
			t.Errorf("run after a result of another database: %s (%q), want still RUNNING", got.Status, got.Message)
		}
		if out := logs.String(); strings.Count(out, "level=WARN") != 1 || !strings.Contains(out, "results=2") {
			t.Errorf("log after one call with 2 results of another database:\n%s\nwant one warning with results=2", out)
		}
		for _, db := range []string{"", st.DatabaseID()} {
			r = newRun()
			if _, err := registry.ReportResults(ctx, &carillonv1.ReportResultsRequest{Results: []*carillonv1.RunResult{result(db)}}); err != nil {
				t.Fatal(err)
			}
			if got, _ := st.Runs.Get(ctx, r.ID); got.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
				t.Errorf("run after a result with database_id %q: %s, want SUCCEEDED", db, got.Status)
			}
		}
	})
}
