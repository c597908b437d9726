package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/carillonhq/carillon/admin/client"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
	"github.com/carillonhq/carillon/sdk"
	"github.com/carillonhq/carillon/sdk/sdktest"
)

// exampleHandlers registers the handlers most tests use.
func exampleHandlers(ex *sdk.Executor) {
	ex.HandleFunc("hello", func(ctx context.Context, job *sdk.Job) error {
		job.Logf("hello, %s", job.Param)
		job.Logger().Info("structured", "shard", job.ShardIndex)
		return nil
	})
	ex.HandleFunc("fail", func(ctx context.Context, job *sdk.Job) error {
		if job.Param == "fail" {
			return errors.New("asked to fail")
		}
		return nil
	})
}

// readWholeLog pages through a run's log until its end.
func readWholeLog(t *testing.T, c carillonv1connect.ExecutorServiceClient, runID int64) string {
	t.Helper()
	return readWholeLogOf(t, c, "", runID)
}

// readWholeLogOf pages through the log of run runID of database db until
// its end.
func readWholeLogOf(t *testing.T, c carillonv1connect.ExecutorServiceClient, db string, runID int64) string {
	t.Helper()
	var b strings.Builder
	from := int32(1)
	for range 10000 {
		res, err := c.ReadLog(t.Context(), &carillonv1.ReadLogRequest{RunId: runID, FromLine: from, DatabaseId: db})
		if err != nil {
			t.Fatalf("ReadLog(%d, %d): %v", runID, from, err)
		}
		b.WriteString(res.GetContent())
		if res.GetEnd() {
			return b.String()
		}
		from = res.GetToLine() + 1
	}
	t.Fatalf("ReadLog(%d) never ended", runID)
	return ""
}

func TestExecutor(t *testing.T) {
	t.Parallel()

	type testBundle struct {
		admin *sdktest.Admin
		ex    *sdktest.Executor
	}

	setup := func(t *testing.T, token string) *testBundle {
		t.Helper()
		admin := sdktest.NewAdmin(t, token)
		ex := sdktest.Start(t, sdk.Config{AdminURLs: []string{admin.URL}, AccessToken: token}, exampleHandlers)
		return &testBundle{admin: admin, ex: ex}
	}

	runReq := func(runID int64, handler, param string) *carillonv1.RunRequest {
		return &carillonv1.RunRequest{RunId: runID, JobId: 1, Handler: handler, Param: param, ShardTotal: 1, ScheduledAt: timestamppb.Now()}
	}

	t.Run("RunSucceeds", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "")
		if _, err := b.ex.Client.Run(t.Context(), runReq(1, "hello", "ada")); err != nil {
			t.Fatalf("Run: %v", err)
		}
		res := b.admin.Result(t, 1)
		if res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED || res.GetMessage() != "" {
			t.Errorf("result = %v %q, want SUCCEEDED with no message", res.GetStatus(), res.GetMessage())
		}
		if res.GetFinishedAt() == nil {
			t.Error("result has no finished_at")
		}
		log := readWholeLog(t, b.ex.Client, 1)
		for _, want := range []string{"hello, ada", "msg=structured shard=0", "ended: SUCCEEDED"} {
			if !strings.Contains(log, want) {
				t.Errorf("log lacks %q:\n%s", want, log)
			}
		}
	})

	t.Run("RunFailsWithMessage", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "")
		if _, err := b.ex.Client.Run(t.Context(), runReq(2, "fail", "fail")); err != nil {
			t.Fatalf("Run: %v", err)
		}
		res := b.admin.Result(t, 2)
		if res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_FAILED || res.GetMessage() != "asked to fail" {
			t.Errorf("result = %v %q, want FAILED \"asked to fail\"", res.GetStatus(), res.GetMessage())
		}
	})

	t.Run("UnknownHandlerIsNotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "")
		_, err := b.ex.Client.Run(t.Context(), runReq(3, "nope", ""))
		if connect.CodeOf(err) != connect.CodeNotFound || !strings.Contains(err.Error(), `unknown handler "nope"`) {
			t.Errorf("Run(unknown handler) = %v, want not_found naming the handler", err)
		}
	})

	t.Run("RunBatchSaysPerRun", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "")
		discarded := runReq(14, "hello", "second")
		discarded.JobId, discarded.BlockStrategy = 7, carillonv1.BlockStrategy_BLOCK_STRATEGY_DISCARD_LATER
		first := runReq(13, "hello", "first")
		first.JobId = 7 // busy when the next run of job 7 comes, in the same batch
		res, err := b.ex.Client.RunBatch(t.Context(), &carillonv1.RunBatchRequest{Runs: []*carillonv1.RunRequest{
			runReq(10, "hello", "ada"),
			runReq(11, "nope", ""),
			runReq(10, "hello", "again"),
			{RunId: 0, JobId: 1, Handler: "hello"},
			first, discarded,
		}})
		if err != nil {
			t.Fatalf("RunBatch: %v", err)
		}
		var got []string
		for _, o := range res.GetOutcomes() {
			got = append(got, fmt.Sprintf("%d:%s", o.GetRunId(), o.GetCode()))
		}
		want := []string{"10:", "11:not_found", "10:already_exists", "0:invalid_argument", "13:", "14:resource_exhausted"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("outcomes (-want +got):\n%s", diff)
		}
		if res := b.admin.Result(t, 10); res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
			t.Errorf("run 10: %v, want SUCCEEDED", res.GetStatus())
		}
	})

	t.Run("InvalidRunIsInvalidArgument", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "")
		for _, req := range []*carillonv1.RunRequest{
			{RunId: 0, JobId: 1, Handler: "hello"},
			{RunId: 4, JobId: 1},
			{RunId: 4, JobId: 1, Handler: "hello", ShardIndex: 2, ShardTotal: 2},
			{RunId: 4, JobId: 1, Handler: "hello", TimeoutSeconds: -1},
		} {
			if _, err := b.ex.Client.Run(t.Context(), req); connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Errorf("Run(%v) = %v, want invalid_argument", req, err)
			}
		}
	})

	t.Run("GRPCOverH2C", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "")
		c := carillonv1connect.NewExecutorServiceClient(h2cClient(), b.ex.URL, connect.WithGRPC())
		if _, err := c.Beat(t.Context(), &carillonv1.BeatRequest{}); err != nil {
			t.Fatalf("Beat over gRPC: %v", err)
		}
		if _, err := c.Run(t.Context(), runReq(5, "fail", "fail")); err != nil {
			t.Fatalf("Run over gRPC: %v", err)
		}
		if res := b.admin.Result(t, 5); res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_FAILED {
			t.Errorf("status = %v, want FAILED", res.GetStatus())
		}
		_, err := c.Run(t.Context(), runReq(6, "nope", ""))
		if connect.CodeOf(err) != connect.CodeNotFound {
			t.Errorf("Run(unknown) over gRPC = %v, want not_found", err)
		}
		if _, err := c.ReadLog(t.Context(), &carillonv1.ReadLogRequest{RunId: 5}); err != nil {
			t.Errorf("ReadLog over gRPC: %v", err)
		}
	})

	t.Run("TokenBothWays", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "s3cret")
		// The test admin refuses calls without the token, so a result
		// arriving there shows the executor sends it.
		if _, err := b.ex.Client.Run(t.Context(), runReq(7, "hello", "")); err != nil {
			t.Fatalf("Run with the token: %v", err)
		}
		b.admin.Result(t, 7)
		for name, c := range map[string]carillonv1connect.ExecutorServiceClient{
			"none":  carillonv1connect.NewExecutorServiceClient(h2cClient(), b.ex.URL),
			"wrong": carillonv1connect.NewExecutorServiceClient(h2cClient(), b.ex.URL, client.WithToken("s3cre7")),
		} {
			if _, err := c.Beat(t.Context(), &carillonv1.BeatRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
				t.Errorf("Beat with %s token = %v, want unauthenticated", name, err)
			}
			if _, err := c.Run(t.Context(), runReq(8, "hello", "")); connect.CodeOf(err) != connect.CodeUnauthenticated {
				t.Errorf("Run with %s token = %v, want unauthenticated", name, err)
			}
		}
		refused := callsRefused(b.admin)
		if refused != 0 {
			t.Errorf("the admin refused %d calls of the executor for their token", refused)
		}
	})

	t.Run("RegistersAndDeregisters", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "")
		b.admin.WaitFor(t, "registration", func() bool { return len(b.admin.Registered()) > 0 })
		reg := b.admin.Registered()[0]
		if reg.GetAppName() != "test" || reg.GetAddress() != b.ex.URL {
			t.Errorf("registered %q at %q, want %q at %q", reg.GetAppName(), reg.GetAddress(), "test", b.ex.URL)
		}
		if err := b.ex.Stop(t); err != nil {
			t.Fatalf("Serve = %v, want nil", err)
		}
		if len(b.admin.Deregistered()) != 1 || b.admin.Deregistered()[0].GetAddress() != b.ex.URL {
			t.Errorf("deregistered %v, want once at %q", b.admin.Deregistered(), b.ex.URL)
		}
	})

	t.Run("AdminFailover", func(t *testing.T) {
		t.Parallel()
		admin := sdktest.NewAdmin(t, "")
		ex := sdktest.Start(t, sdk.Config{AdminURLs: []string{deadURL(t), admin.URL}}, exampleHandlers)
		if _, err := ex.Client.Run(t.Context(), runReq(9, "hello", "")); err != nil {
			t.Fatalf("Run: %v", err)
		}
		admin.Result(t, 9)
		admin.WaitFor(t, "registration", func() bool { return len(admin.Registered()) > 0 })
	})

	t.Run("BeatIdleBeatKill", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "")
		if _, err := b.ex.Client.Beat(t.Context(), &carillonv1.BeatRequest{}); err != nil {
			t.Fatalf("Beat: %v", err)
		}
		res, err := b.ex.Client.IdleBeat(t.Context(), &carillonv1.IdleBeatRequest{JobId: 1})
		if err != nil || !res.GetIdle() {
			t.Errorf("IdleBeat = %v, %v; want idle", res, err)
		}
		if _, err := b.ex.Client.Kill(t.Context(), &carillonv1.KillRequest{JobId: 1}); err != nil {
			t.Errorf("Kill of an idle job: %v", err)
		}
	})

	t.Run("ReadLogOfUnknownRunIsNotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "")
		_, err := b.ex.Client.ReadLog(t.Context(), &carillonv1.ReadLogRequest{RunId: 404})
		if connect.CodeOf(err) != connect.CodeNotFound {
			t.Errorf("ReadLog(404) = %v, want not_found", err)
		}
	})
}

func TestExecutorHandle(t *testing.T) {
	t.Parallel()

	newExecutor := func(t *testing.T) *sdk.Executor {
		t.Helper()
		ex, err := sdk.New(sdk.Config{AdminURLs: []string{"http://127.0.0.1:1"}, AppName: "test", LogDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return ex
	}
	nop := sdk.HandlerFunc(func(context.Context, *sdk.Job) error { return nil })

	for _, test := range []struct {
		name string
		f    func(ex *sdk.Executor)
		want string
	}{
		{"EmptyName", func(ex *sdk.Executor) { ex.Handle("", nop) }, "empty handler name"},
		{"NilHandler", func(ex *sdk.Executor) { ex.Handle("a", nil) }, "nil handler"},
		{"NilFunc", func(ex *sdk.Executor) { ex.HandleFunc("a", nil) }, "nil handler"},
		{"Duplicate", func(ex *sdk.Executor) { ex.Handle("a", nop); ex.Handle("a", nop) }, "already registered"},
		{"NilMiddleware", func(ex *sdk.Executor) { ex.Use(nil) }, "nil middleware"},
	} {
		t.Run(test.name+"Panics", func(t *testing.T) {
			t.Parallel()
			ex := newExecutor(t)
			defer func() {
				v := recover()
				if v == nil || !strings.Contains(fmtAny(v), test.want) {
					t.Errorf("panic = %v, want one saying %q", v, test.want)
				}
			}()
			test.f(ex)
		})
	}
}

func TestNew(t *testing.T) {
	t.Parallel()

	ok := sdk.Config{AdminURLs: []string{"http://admin:8080"}, AppName: "billing-jobs_1.0"}
	for _, test := range []struct {
		name   string
		change func(*sdk.Config)
		want   string // "" means valid
	}{
		{"Valid", func(*sdk.Config) {}, ""},
		{"NoAdminURLs", func(c *sdk.Config) { c.AdminURLs = nil }, "AdminURLs is required"},
		{"BadAdminURL", func(c *sdk.Config) { c.AdminURLs = []string{"http://a", "ftp://b"} }, "AdminURLs[1]"},
		{"AdminURLWithoutHost", func(c *sdk.Config) { c.AdminURLs = []string{"http://"} }, "host is missing"},
		{"NoAppName", func(c *sdk.Config) { c.AppName = "" }, "AppName is required"},
		{"BadAppName", func(c *sdk.Config) { c.AppName = "a b" }, "AppName \"a b\""},
		{"LongAppName", func(c *sdk.Config) { c.AppName = strings.Repeat("a", 65) }, "AppName"},
		{"MaxAppName", func(c *sdk.Config) { c.AppName = strings.Repeat("a", 64) }, ""},
		{"BadAdvertiseURL", func(c *sdk.Config) { c.AdvertiseURL = "10.0.0.1:9999" }, "AdvertiseURL"},
		{"NegativeShutdownTimeout", func(c *sdk.Config) { c.ShutdownTimeout = -1 }, "ShutdownTimeout"},
		{"ScriptsWithoutToken", func(c *sdk.Config) { c.ScriptsEnabled = true }, "ScriptsEnabled needs an AccessToken"},
		{"ScriptsWithToken", func(c *sdk.Config) { c.ScriptsEnabled = true; c.AccessToken = "t" }, ""},
	} {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			cfg := ok
			cfg.LogDir = t.TempDir()
			test.change(&cfg)
			_, err := sdk.New(cfg)
			switch {
			case test.want == "" && err != nil:
				t.Errorf("New: %v, want no error", err)
			case test.want != "" && (!errors.Is(err, sdk.ErrInvalidConfig) || !strings.Contains(err.Error(), test.want)):
				t.Errorf("New = %v, want ErrInvalidConfig mentioning %q", err, test.want)
			}
		})
	}
}

func fmtAny(v any) string {
	if err, ok := v.(error); ok {
		return err.Error()
	}
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

func TestExecutorResultsSurviveOutageAndRestart(t *testing.T) {
	t.Parallel()
	admin := sdktest.NewAdmin(t, "tok")
	admin.SetDown(true)
	cfg := sdk.Config{AdminURLs: []string{admin.URL}, AccessToken: "tok", LogDir: t.TempDir()}

	first := sdktest.Start(t, cfg, exampleHandlers)
	const runs = 6
	for id := int64(1); id <= runs; id++ {
		param := ""
		if id%2 == 0 {
			param = "fail"
		}
		if _, err := first.Client.Run(t.Context(), &carillonv1.RunRequest{RunId: id, JobId: id, Handler: "fail", Param: param, ShardTotal: 1}); err != nil {
			t.Fatalf("Run(%d): %v", id, err)
		}
	}
	for id := int64(1); id <= runs; id++ {
		readWholeLog(t, first.Client, id) // returns once the run has ended
	}
	admin.WaitFor(t, "a refused report", func() bool { return reportsRefused(admin) > 0 })
	// Stopped while the admin is still down: the results stay on disk.
	if err := first.Stop(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	for id := int64(1); id <= runs; id++ {
		if n := len(admin.Results(id)); n != 0 {
			t.Fatalf("run %d: %d results reached a down admin", id, n)
		}
	}

	admin.SetDown(false)
	second := sdktest.Start(t, cfg, exampleHandlers)
	for id := int64(1); id <= runs; id++ {
		res := admin.Result(t, id)
		want := carillonv1.RunStatus_RUN_STATUS_SUCCEEDED
		if id%2 == 0 {
			want = carillonv1.RunStatus_RUN_STATUS_FAILED
		}
		if res.GetStatus() != want {
			t.Errorf("run %d: %v, want %v", id, res.GetStatus(), want)
		}
	}
	if err := second.Stop(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	for id := int64(1); id <= runs; id++ {
		if n := len(admin.Results(id)); n != 1 {
			t.Errorf("run %d: %d results arrived, want exactly 1", id, n)
		}
	}
	// The restarted executor remembers the runs: they are not run again.
	third := sdktest.Start(t, cfg, exampleHandlers)
	_, err := third.Client.Run(t.Context(), &carillonv1.RunRequest{RunId: 1, JobId: 1, Handler: "fail", ShardTotal: 1})
	if connect.CodeOf(err) != connect.CodeAlreadyExists {
		t.Errorf("Run of an old run id = %v, want already_exists", err)
	}
}

func TestExecutorGracefulShutdown(t *testing.T) {
	t.Parallel()

	t.Run("WaitsForRunningRuns", func(t *testing.T) {
		t.Parallel()
		admin := sdktest.NewAdmin(t, "")
		started, release := make(chan struct{}), make(chan struct{})
		// Served here, not by sdktest.Start: the test stops it without
		// waiting for Serve to return.
		ex, err := sdk.New(sdk.Config{AdminURLs: []string{admin.URL}, AppName: "test", LogDir: t.TempDir(), ShutdownTimeout: time.Hour,
			Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
		if err != nil {
			t.Fatal(err)
		}
		ex.HandleFunc("wait", func(ctx context.Context, job *sdk.Job) error {
			close(started)
			<-release
			return nil
		})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- ex.Serve(ctx, ln) }()
		c := carillonv1connect.NewExecutorServiceClient(http.DefaultClient, "http://"+ln.Addr().String())
		for id := int64(1); id <= 2; id++ {
			if _, err := c.Run(t.Context(), &carillonv1.RunRequest{RunId: id, JobId: 1, Handler: "wait", ShardTotal: 1}); err != nil {
				t.Fatal(err)
			}
		}
		<-started
		cancel()
		admin.WaitFor(t, "deregistration", func() bool { return len(admin.Deregistered()) > 0 })
		// Stopping: new runs are refused, the queued one is dropped.
		_, err = c.Run(t.Context(), &carillonv1.RunRequest{RunId: 3, JobId: 2, Handler: "wait", ShardTotal: 1})
		if connect.CodeOf(err) != connect.CodeUnavailable {
			t.Errorf("Run while stopping = %v, want unavailable", err)
		}
		if res := admin.Result(t, 2); res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_KILLED || res.GetMessage() != "sdk: executor shutting down" {
			t.Errorf("queued run: %v %q, want KILLED by the shutdown", res.GetStatus(), res.GetMessage())
		}
		select {
		case err := <-done:
			t.Fatalf("Serve returned %v while a run was still running", err)
		default:
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatalf("Serve = %v", err)
		}
		if res := admin.Result(t, 1); res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
			t.Errorf("running run: %v, want SUCCEEDED", res.GetStatus())
		}
	})

	t.Run("CancelsRunsAfterTimeout", func(t *testing.T) {
		t.Parallel()
		admin := sdktest.NewAdmin(t, "")
		started := make(chan struct{})
		causes := make(chan error, 1)
		ex := sdktest.Start(t, sdk.Config{AdminURLs: []string{admin.URL}, ShutdownTimeout: 50 * time.Millisecond}, func(ex *sdk.Executor) {
			ex.HandleFunc("wait", func(ctx context.Context, job *sdk.Job) error {
				close(started)
				<-ctx.Done()
				causes <- context.Cause(ctx)
				return ctx.Err()
			})
		})
		if _, err := ex.Client.Run(t.Context(), &carillonv1.RunRequest{RunId: 1, JobId: 1, Handler: "wait", ShardTotal: 1}); err != nil {
			t.Fatal(err)
		}
		<-started
		if err := ex.Stop(t); err != nil {
			t.Fatalf("Serve = %v", err)
		}
		if cause := <-causes; !errors.Is(cause, sdk.ErrShuttingDown) {
			t.Errorf("context.Cause = %v, want ErrShuttingDown", cause)
		}
		// Flushed before Serve returned.
		if n := len(admin.Results(1)); n != 1 {
			t.Fatalf("%d results when Serve returned, want 1", n)
		}
		if res := admin.Result(t, 1); res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_KILLED {
			t.Errorf("result: %v, want KILLED", res.GetStatus())
		}
	})
}

func TestExecutorMiddleware(t *testing.T) {
	t.Parallel()
	admin := sdktest.NewAdmin(t, "")
	var mu sync.Mutex
	var trace []string
	record := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		trace = append(trace, s)
	}
	named := func(name string) sdk.Middleware {
		return func(next sdk.Handler) sdk.Handler {
			return sdk.HandlerFunc(func(ctx context.Context, job *sdk.Job) error {
				record(name + ">")
				err := next.ServeJob(ctx, job)
				record("<" + name + fmt.Sprintf("(%v)", err))
				return err
			})
		}
	}
	ex := sdktest.Start(t, sdk.Config{AdminURLs: []string{admin.URL}}, func(ex *sdk.Executor) {
		ex.Use(named("a"), named("b"))
		ex.HandleFunc("h", func(ctx context.Context, job *sdk.Job) error {
			record("h")
			return errors.New("no")
		})
	})
	if _, err := ex.Client.Run(t.Context(), &carillonv1.RunRequest{RunId: 1, JobId: 1, Handler: "h", ShardTotal: 1}); err != nil {
		t.Fatal(err)
	}
	admin.Result(t, 1)
	mu.Lock()
	defer mu.Unlock()
	if got, want := strings.Join(trace, " "), "a> b> h <b(no) <a(no)"; got != want {
		t.Errorf("trace %q, want %q", got, want)
	}
}

// TestRunLeavesNoGoroutines is not parallel: it looks at every goroutine.
func TestRunLeavesNoGoroutines(t *testing.T) {
	admin := sdktest.NewAdmin(t, "tok")
	ex, err := sdk.New(sdk.Config{
		AdminURLs:       []string{admin.URL},
		AppName:         "leaks",
		AccessToken:     "tok",
		Listen:          "127.0.0.1:0",
		ShutdownTimeout: 50 * time.Millisecond,
		LogDir:          t.TempDir(),
		Logger:          slog.New(slog.NewTextHandler(t.Output(), nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	exampleHandlers(ex)
	ex.HandleFunc("wait", func(ctx context.Context, job *sdk.Job) error {
		<-ctx.Done()
		return ctx.Err()
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()

	// Run picked a port: the registration says which.
	admin.WaitFor(t, "registration", func() bool { return len(admin.Registered()) > 0 })
	url := admin.Registered()[0].GetAddress()
	h2c := h2cClient()
	clients := []carillonv1connect.ExecutorServiceClient{
		carillonv1connect.NewExecutorServiceClient(http.DefaultClient, url, client.WithToken("tok")),
		carillonv1connect.NewExecutorServiceClient(h2c, url, connect.WithGRPC(), client.WithToken("tok")),
	}
	for id := int64(1); id <= 4; id++ {
		c := clients[id%2]
		if _, err := c.Run(t.Context(), &carillonv1.RunRequest{RunId: id, JobId: id, Handler: "hello", ShardTotal: 1}); err != nil {
			t.Fatal(err)
		}
		admin.Result(t, id)
		readWholeLog(t, c, id)
	}
	if _, err := clients[1].Run(t.Context(), &carillonv1.RunRequest{RunId: 5, JobId: 5, Handler: "wait", ShardTotal: 1}); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	admin.Result(t, 5)
	http.DefaultClient.CloseIdleConnections()
	h2c.CloseIdleConnections()

	// Goroutines of package sdk, or serving HTTP for it, may take a moment to
	// see their connections close; wait for them to go, but not forever. The
	// runtime signals no goroutine's end, so this one wait polls.
	deadline := time.Now().Add(waitLimit)
	for {
		left := leftovers()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines left after Run returned:\n\n%s", strings.Join(left, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// leftovers returns the stacks of goroutines that belong to package sdk or
// serve an HTTP connection, except the tests' own.
func leftovers() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var left []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "carillon/sdk.") || strings.Contains(g, "net/http.(*conn).serve") || strings.Contains(g, "net/http.(*http2serverConn)") {
			if !strings.Contains(g, "testing.tRunner") && !strings.Contains(g, "testAdmin") {
				left = append(left, g)
			}
		}
	}
	return left
}

func TestExecutorHandlerOnYourOwnServer(t *testing.T) {
	t.Parallel()
	admin := sdktest.NewAdmin(t, "tok")
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ex, err := sdk.New(sdk.Config{
		AdminURLs:    []string{admin.URL},
		AppName:      "mounted",
		AccessToken:  "tok",
		AdvertiseURL: srv.URL,
		LogDir:       t.TempDir(),
		Logger:       slog.New(slog.NewTextHandler(t.Output(), nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	exampleHandlers(ex)
	mux.Handle(ex.Handler())
	exc := carillonv1connect.NewExecutorServiceClient(srv.Client(), srv.URL, client.WithToken("tok"))

	if _, err := exc.Beat(t.Context(), &carillonv1.BeatRequest{}); connect.CodeOf(err) != connect.CodeUnavailable {
		t.Errorf("Beat before Serve = %v, want unavailable", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- ex.Serve(ctx, nil) }()
	admin.WaitFor(t, "registration", func() bool { return len(admin.Registered()) > 0 })
	got := admin.Registered()[0].GetAddress()
	if got != srv.URL {
		t.Errorf("registered %q, want the AdvertiseURL %q", got, srv.URL)
	}
	if err := ex.Serve(ctx, nil); !errors.Is(err, sdk.ErrAlreadyRunning) {
		t.Errorf("second Serve = %v, want ErrAlreadyRunning", err)
	}
	if _, err := exc.Run(t.Context(), &carillonv1.RunRequest{RunId: 1, JobId: 1, Handler: "hello", ShardTotal: 1}); err != nil {
		t.Fatalf("Run through the mounted handler: %v", err)
	}
	admin.Result(t, 1)
	bad := carillonv1connect.NewExecutorServiceClient(srv.Client(), srv.URL)
	if _, err := bad.Beat(t.Context(), &carillonv1.BeatRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("Beat without the token = %v, want unauthenticated", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve = %v", err)
	}
	if _, err := exc.Beat(t.Context(), &carillonv1.BeatRequest{}); connect.CodeOf(err) != connect.CodeUnavailable {
		t.Errorf("Beat after Serve = %v, want unavailable", err)
	}
}

func TestExecutorServeWithoutListenerNeedsAdvertiseURL(t *testing.T) {
	t.Parallel()
	ex, err := sdk.New(sdk.Config{AdminURLs: []string{"http://127.0.0.1:1"}, AppName: "x", LogDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := ex.Serve(t.Context(), nil); !errors.Is(err, sdk.ErrInvalidConfig) || !strings.Contains(err.Error(), "AdvertiseURL") {
		t.Errorf("Serve(nil listener) = %v, want ErrInvalidConfig naming AdvertiseURL", err)
	}
}

// TestExecutorInstanceID: every heartbeat of one Serve carries the same
// instance id, and the next Serve of the same Executor, on the same LogDir,
// registers a new one.
func TestExecutorInstanceID(t *testing.T) {
	t.Parallel()
	admin := sdktest.NewAdmin(t, "")
	ex, err := sdk.New(sdk.Config{
		AdminURLs:         []string{admin.URL},
		AppName:           "instances",
		HeartbeatInterval: 10 * time.Millisecond,
		LogDir:            t.TempDir(),
		Logger:            slog.New(slog.NewTextHandler(t.Output(), nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	// serve runs one Serve until it has registered three times, and returns
	// the instance ids of those registrations.
	serve := func() []string {
		t.Helper()
		before := len(admin.Registered())
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- ex.Serve(ctx, ln) }()
		admin.WaitFor(t, "three heartbeats", func() bool { return len(admin.Registered()) >= before+3 })
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Serve = %v", err)
		}
		var ids []string
		for _, r := range admin.Registered()[before:] {
			ids = append(ids, r.GetInstanceId())
		}
		return ids
	}
	first, second := serve(), serve()
	for _, ids := range [][]string{first, second} {
		if len(ids[0]) != 32 || strings.Trim(ids[0], "0123456789abcdef") != "" {
			t.Errorf("instance id %q, want 32 hex digits", ids[0])
		}
		for _, id := range ids {
			if id != ids[0] {
				t.Errorf("one Serve registered instance ids %q", ids)
				break
			}
		}
	}
	if first[0] == second[0] {
		t.Errorf("two Serve calls registered the same instance id %q", first[0])
	}
}

// TestExecutorDatabases: run ids restart at 1 in a new admin database, and
// the executor keeps the runs, logs and results of each database apart,
// across restarts.
func TestExecutorDatabases(t *testing.T) {
	t.Parallel()
	const (
		dbA = "0123456789abcdef0123456789abcdef"
		dbB = "fedcba9876543210fedcba9876543210"
		dbC = "Not a/../safe file name"
	)
	admin := sdktest.NewAdmin(t, "")
	logged := new(testkit.LogBuffer)
	cfg := sdk.Config{
		AdminURLs: []string{admin.URL},
		LogDir:    t.TempDir(),
		Logger:    slog.New(slog.NewTextHandler(io.MultiWriter(t.Output(), logged), nil)),
	}
	runOf := func(db string, runID int64, param string) *carillonv1.RunRequest {
		return &carillonv1.RunRequest{RunId: runID, JobId: runID, Handler: "hello", Param: param, ShardTotal: 1, DatabaseId: db}
	}
	// resultsOf waits for n results of runID and returns their database ids,
	// sorted.
	resultsOf := func(runID int64, n int) []string {
		t.Helper()
		admin.WaitFor(t, fmt.Sprintf("%d results of run %d", n, runID), func() bool { return len(admin.Results(runID)) >= n })
		var dbs []string
		for _, r := range admin.Results(runID) {
			dbs = append(dbs, r.GetDatabaseId())
		}
		slices.Sort(dbs)
		return dbs
	}
	checkLogs := func(ex *sdktest.Executor) {
		t.Helper()
		for db, param := range map[string]string{dbA: "of A", dbB: "of B"} {
			log := readWholeLogOf(t, ex.Client, db, 1)
			if !strings.Contains(log, "hello, "+param) || strings.Count(log, "hello, ") != 1 {
				t.Errorf("log of run 1 of database %s:\n%s\nwant its own lines only", db, log)
			}
		}
		for _, db := range []string{"", dbC} {
			_, err := ex.Client.ReadLog(t.Context(), &carillonv1.ReadLogRequest{RunId: 1, DatabaseId: db})
			if connect.CodeOf(err) != connect.CodeNotFound {
				t.Errorf("ReadLog of run 1 of database %q, which never ran here = %v, want not_found", db, err)
			}
		}
	}

	first := sdktest.Start(t, cfg, exampleHandlers)
	for _, req := range []*carillonv1.RunRequest{runOf(dbA, 1, "of A"), runOf(dbB, 1, "of B")} {
		if _, err := first.Client.Run(t.Context(), req); err != nil {
			t.Fatalf("Run of run 1 of database %s: %v", req.GetDatabaseId(), err)
		}
	}
	if got := resultsOf(1, 2); !slices.Equal(got, []string{dbB, dbA}) && !slices.Equal(got, []string{dbA, dbB}) {
		t.Errorf("results of run 1 carry databases %q, want one of each", got)
	}
	checkLogs(first)
	_, err := first.Client.Run(t.Context(), runOf(dbB, 1, "again"))
	if connect.CodeOf(err) != connect.CodeAlreadyExists {
		t.Errorf("a repeat of run 1 of database B = %v, want already_exists", err)
	}
	warned := false
	for line := range strings.Lines(logged.String()) {
		warned = warned || strings.Contains(line, `level=WARN msg="sdk: run refused as a duplicate"`) &&
			strings.Contains(line, " run_id=1 ") && strings.Contains(line, " database_id="+dbB+" ")
	}
	if !warned {
		t.Errorf("no warning naming run 1 and database B refused as a duplicate in the executor's log:\n%s", logged.String())
	}
	if err := first.Stop(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}

	// A new process on the same LogDir remembers each database's runs, and
	// keeps a result of one across a restart while no admin takes it.
	admin.SetDown(true)
	second := sdktest.Start(t, cfg, exampleHandlers)
	checkLogs(second)
	for _, db := range []string{dbA, dbB} {
		if _, err := second.Client.Run(t.Context(), runOf(db, 1, "again")); connect.CodeOf(err) != connect.CodeAlreadyExists {
			t.Errorf("after a restart, a repeat of run 1 of database %s = %v, want already_exists", db, err)
		}
	}
	if _, err := second.Client.Run(t.Context(), runOf(dbC, 1, "of C")); err != nil {
		t.Fatalf("Run of run 1 of a third database: %v", err)
	}
	if log := readWholeLogOf(t, second.Client, dbC, 1); !strings.Contains(log, "hello, of C") {
		t.Errorf("log of run 1 of database C:\n%s", log)
	}
	admin.WaitFor(t, "a refused report", func() bool { return reportsRefused(admin) > 0 })
	if err := second.Stop(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	admin.SetDown(false)
	sdktest.Start(t, cfg, exampleHandlers)
	if got := resultsOf(1, 3); !slices.Contains(got, dbC) {
		t.Errorf("results of run 1 carry databases %q, want one of database C after the restart", got)
	}
}

// heldRuns asks the executor which of ids of database db it holds.
func heldRuns(t *testing.T, c carillonv1connect.ExecutorServiceClient, db string, ids ...int64) (map[int64]carillonv1.HeldRunState, string) {
	t.Helper()
	res, err := c.HeldRuns(t.Context(), &carillonv1.HeldRunsRequest{DatabaseId: db, RunIds: ids})
	if err != nil {
		t.Fatalf("HeldRuns: %v", err)
	}
	held := make(map[int64]carillonv1.HeldRunState)
	for _, r := range res.GetRuns() {
		held[r.GetRunId()] = r.GetState()
	}
	return held, res.GetInstanceId()
}

// TestExecutorHeldRuns: an admin that restarted learns which of its runs
// an executor holds, running, queued or ended, across the executor's
// restarts, and under which instance.
func TestExecutorHeldRuns(t *testing.T) {
	t.Parallel()
	const (
		db     = "0123456789abcdef0123456789abcdef"
		active = carillonv1.HeldRunState_HELD_RUN_STATE_ACTIVE
		ended  = carillonv1.HeldRunState_HELD_RUN_STATE_ENDED
	)
	admin := sdktest.NewAdmin(t, "")
	cfg := sdk.Config{AdminURLs: []string{admin.URL}, LogDir: t.TempDir()}
	release := make(chan struct{})
	handlers := func(ex *sdk.Executor) {
		exampleHandlers(ex)
		ex.HandleFunc("wait", func(ctx context.Context, job *sdk.Job) error {
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		})
	}
	run := func(ex *sdktest.Executor, runID, jobID int64, handler string) error {
		_, err := ex.Client.Run(t.Context(), &carillonv1.RunRequest{RunId: runID, JobId: jobID, Handler: handler, ShardTotal: 1, DatabaseId: db})
		return err
	}
	want := func(got map[int64]carillonv1.HeldRunState, want map[int64]carillonv1.HeldRunState, when string) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("HeldRuns %s (-want +got):\n%s", when, diff)
		}
	}
	registeredAs := func(address string) string {
		t.Helper()
		var id string
		admin.WaitFor(t, "registration of "+address, func() bool {
			for _, r := range admin.Registered() {
				if r.GetAddress() == address {
					id = r.GetInstanceId()
				}
			}
			return id != ""
		})
		return id
	}

	// The first process runs three days ago: a restarted executor finds
	// its runs in logs older than the ones it reads at start.
	past := cfg
	past.NowFunc = func() time.Time { return time.Now().Add(-72 * time.Hour) }
	first := sdktest.Start(t, past, handlers)
	for _, r := range []struct {
		runID, jobID int64
		handler      string
	}{{1, 1, "wait"}, {2, 1, "wait"}, {3, 3, "hello"}} { // run 2 waits behind run 1 (SERIAL)
		if err := run(first, r.runID, r.jobID, r.handler); err != nil {
			t.Fatalf("Run(%d): %v", r.runID, err)
		}
	}
	if err := run(first, 5, 5, "nope"); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("Run(5) of an unknown handler = %v, want not_found", err)
	}
	admin.Result(t, 3)
	held, instance := heldRuns(t, first.Client, db, 1, 2, 3, 4, 5)
	want(held, map[int64]carillonv1.HeldRunState{1: active, 2: active, 3: ended}, "while run 1 runs and run 2 waits")
	if reg := registeredAs(first.URL); instance != reg {
		t.Errorf("HeldRuns answers instance %q, the executor registered as %q", instance, reg)
	}
	for _, other := range []string{"", "fedcba9876543210fedcba9876543210"} {
		held, _ := heldRuns(t, first.Client, other, 1, 2, 3)
		want(held, map[int64]carillonv1.HeldRunState{}, "of another database")
	}
	close(release)
	admin.Result(t, 1)
	admin.Result(t, 2)
	held, _ = heldRuns(t, first.Client, db, 1, 2)
	want(held, map[int64]carillonv1.HeldRunState{1: ended, 2: ended}, "once runs 1 and 2 ended")
	if err := first.Stop(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}

	// A new process remembers them from their logs, days old; a result it
	// cannot report waits in the spool.
	admin.SetDown(true)
	second := sdktest.Start(t, cfg, handlers)
	held, instance2 := heldRuns(t, second.Client, db, 1, 2, 3, 4, 5)
	want(held, map[int64]carillonv1.HeldRunState{1: ended, 2: ended, 3: ended}, "after a restart")
	if instance2 == "" || instance2 == instance {
		t.Errorf("instance after a restart %q, before %q: want a new one", instance2, instance)
	}
	if err := run(second, 6, 6, "hello"); err != nil {
		t.Fatalf("Run(6): %v", err)
	}
	readWholeLogOf(t, second.Client, db, 6) // returns once run 6 has ended
	admin.WaitFor(t, "a refused report", func() bool { return reportsRefused(admin) > 0 })
	if err := second.Stop(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}

	// Without its log, a run whose result waits in the spool is still held.
	if err := os.RemoveAll(filepath.Join(cfg.LogDir, "runs")); err != nil {
		t.Fatal(err)
	}
	third := sdktest.Start(t, cfg, handlers)
	held, _ = heldRuns(t, third.Client, db, 6, 7)
	want(held, map[int64]carillonv1.HeldRunState{6: ended}, "of a run whose result waits in the spool")
	if err := run(third, 6, 6, "hello"); connect.CodeOf(err) != connect.CodeAlreadyExists {
		t.Errorf("Run(6) again, its result in the spool = %v, want already_exists", err)
	}
}

// TestExecutorKillRun: a Kill that names a run stops that run only, of its
// database, whether it runs or waits behind another run of its job.
func TestExecutorKillRun(t *testing.T) {
	t.Parallel()
	const db = "0123456789abcdef0123456789abcdef"
	admin := sdktest.NewAdmin(t, "")
	var gates sync.Map // run id -> chan struct{}: closing it ends the run
	gate := func(id int64) chan struct{} {
		c, _ := gates.LoadOrStore(id, make(chan struct{}))
		return c.(chan struct{})
	}
	started := make(chan int64, 10)
	ex := sdktest.Start(t, sdk.Config{AdminURLs: []string{admin.URL}}, func(ex *sdk.Executor) {
		ex.HandleFunc("wait", func(ctx context.Context, job *sdk.Job) error {
			started <- job.RunID
			select {
			case <-gate(job.RunID):
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		})
	})
	run := func(runID, jobID int64) {
		t.Helper()
		req := &carillonv1.RunRequest{RunId: runID, JobId: jobID, Handler: "wait", ShardTotal: 1, DatabaseId: db,
			BlockStrategy: carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL}
		if _, err := ex.Client.Run(t.Context(), req); err != nil {
			t.Fatalf("Run(%d): %v", runID, err)
		}
	}
	kill := func(req *carillonv1.KillRequest) {
		t.Helper()
		if _, err := ex.Client.Kill(t.Context(), req); err != nil {
			t.Fatalf("Kill(%v): %v", req, err)
		}
	}
	waitStarted := func(want int64) {
		t.Helper()
		select {
		case id := <-started:
			if id != want {
				t.Fatalf("run %d started, want run %d", id, want)
			}
		case <-time.After(waitLimit):
			t.Fatalf("run %d never started", want)
		}
	}
	wantResult := func(runID int64, status carillonv1.RunStatus, msg string) {
		t.Helper()
		if res := admin.Result(t, runID); res.GetStatus() != status || res.GetMessage() != msg || res.GetDatabaseId() != db {
			t.Errorf("run %d: %v %q of database %q, want %v %q of %q", runID, res.GetStatus(), res.GetMessage(), res.GetDatabaseId(), status, msg, db)
		}
	}
	idle := func(jobID int64) string {
		t.Helper()
		res, err := ex.Client.IdleBeat(t.Context(), &carillonv1.IdleBeatRequest{JobId: jobID})
		if err != nil {
			t.Fatal(err)
		}
		return res.GetReason()
	}

	// Job 1: run 1 runs, run 2 waits; killing run 2 leaves run 1 running.
	run(1, 1)
	waitStarted(1)
	run(2, 1)
	kill(&carillonv1.KillRequest{JobId: 1, RunId: 2, DatabaseId: "fedcba9876543210fedcba9876543210"}) // another database's run 2: nothing here
	kill(&carillonv1.KillRequest{JobId: 1, RunId: 2})                                                 // run 2 without a database: nothing here
	if got := idle(1); got != "job 1 is running run 1 with 1 more queued" {
		t.Errorf("after kills of other databases' run 2, job 1 %q", got)
	}
	kill(&carillonv1.KillRequest{JobId: 1, RunId: 2, DatabaseId: db})
	wantResult(2, carillonv1.RunStatus_RUN_STATUS_KILLED, "sdk: run killed by the admin before it started")
	if got := idle(1); got != "job 1 is running run 1" {
		t.Errorf("after the kill of queued run 2, job 1 %q, want run 1 still running", got)
	}
	close(gate(1))
	wantResult(1, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "")

	// Job 2: run 3 runs, run 4 waits; killing run 3 lets run 4 run.
	run(3, 2)
	waitStarted(3)
	run(4, 2)
	kill(&carillonv1.KillRequest{JobId: 2, RunId: 3, DatabaseId: db})
	wantResult(3, carillonv1.RunStatus_RUN_STATUS_KILLED, "sdk: run killed by the admin")
	waitStarted(4)
	if n := len(admin.Results(4)); n != 0 {
		t.Errorf("run 4 has %d results while it runs", n)
	}
	close(gate(4))
	wantResult(4, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "")

	// run_id 0: every run of the job, as before.
	run(5, 3)
	waitStarted(5)
	run(6, 3)
	kill(&carillonv1.KillRequest{JobId: 3})
	wantResult(5, carillonv1.RunStatus_RUN_STATUS_KILLED, "sdk: run killed by the admin")
	wantResult(6, carillonv1.RunStatus_RUN_STATUS_KILLED, "sdk: run killed by the admin before it started")
}

// TestExecutorKillReplace: a before_start Kill with replace, over the wire,
// drops a queued run without a result, and the same run sent again with a
// new param is accepted and runs once, with the new param.
func TestExecutorKillReplace(t *testing.T) {
	t.Parallel()
	const db = "0123456789abcdef0123456789abcdef"
	admin := sdktest.NewAdmin(t, "")
	gate := make(chan struct{})
	params := make(chan string, 10)
	ex := sdktest.Start(t, sdk.Config{AdminURLs: []string{admin.URL}}, func(ex *sdk.Executor) {
		ex.HandleFunc("wait", func(ctx context.Context, job *sdk.Job) error {
			params <- job.Param
			select {
			case <-gate:
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		})
	})
	run := func(runID int64, param string) error {
		_, err := ex.Client.Run(t.Context(), &carillonv1.RunRequest{RunId: runID, JobId: 1, Handler: "wait", Param: param, ShardTotal: 1,
			DatabaseId: db, BlockStrategy: carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL})
		return err
	}
	next := func() string {
		t.Helper()
		select {
		case p := <-params:
			return p
		case <-time.After(waitLimit):
			t.Fatal("no run started")
			return ""
		}
	}
	if err := run(1, "first"); err != nil {
		t.Fatal(err)
	}
	if p := next(); p != "first" {
		t.Fatalf("run 1 started with %q", p)
	}
	if err := run(2, "old"); err != nil { // queued behind run 1
		t.Fatal(err)
	}
	res, err := ex.Client.Kill(t.Context(), &carillonv1.KillRequest{JobId: 1, RunId: 2, DatabaseId: db, BeforeStart: true, Replace: true,
		Reason: "the job was updated"})
	if err != nil || !res.GetCancelled() {
		t.Fatalf("Kill(before_start, replace) of queued run 2 = %v, %v; want cancelled", res, err)
	}
	if err := run(2, "new"); err != nil {
		t.Fatalf("Run(2) again after its replace kill: %v", err)
	}
	close(gate)
	if p := next(); p != "new" {
		t.Errorf("run 2 started with %q, want %q", p, "new")
	}
	if r := admin.Result(t, 2); r.GetStatus() != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
		t.Errorf("run 2: %v %q, want SUCCEEDED", r.GetStatus(), r.GetMessage())
	}
	admin.Result(t, 1)
	select {
	case p := <-params:
		t.Errorf("a run started again, with %q", p)
	default:
	}
	if n := len(admin.Results(2)); n != 1 {
		t.Errorf("run 2 has %d results, want 1", n)
	}
}
