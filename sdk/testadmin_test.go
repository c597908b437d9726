package sdk_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/client"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
	"github.com/carillonhq/carillon/sdk"
)

// waitLimit bounds every wait for an event in these tests, so that a broken
// executor fails a test instead of hanging it. Nothing is expected to take
// anywhere near that long.
const waitLimit = 30 * time.Second

// testAdmin is a real RegistryService on a loopback HTTP server (HTTP/1.1
// and h2c) that records what executors send it.
type testAdmin struct {
	URL   string
	token string

	down atomic.Bool // answer every call with unavailable

	mu             sync.Mutex
	changed        chan struct{} // closed and replaced on every change
	registered     []*carillonv1.RegisterRequest
	deregistered   []*carillonv1.DeregisterRequest
	results        map[int64][]*carillonv1.RunResult
	refused        int // calls refused for a bad token or while down
	refusedReports int // ReportResults calls among them
}

func newTestAdmin(t *testing.T, token string) *testAdmin {
	t.Helper()
	a := &testAdmin{token: token, changed: make(chan struct{}), results: make(map[int64][]*carillonv1.RunResult)}
	mux := http.NewServeMux()
	mux.Handle(carillonv1connect.NewRegistryServiceHandler(a))
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	a.URL = srv.URL
	return a
}

// deadURL is the URL of a port nobody listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	return u
}

// check refuses calls with a bad token, or all calls while down.
func (a *testAdmin) check(ctx context.Context) error {
	info, _ := connect.CallInfoForHandlerContext(ctx)
	switch {
	case a.down.Load():
		a.update(func() { a.refused++ })
		return connect.NewError(connect.CodeUnavailable, errors.New("test admin is down"))
	case a.token != "" && info.RequestHeader().Get("Authorization") != "Bearer "+a.token:
		a.update(func() { a.refused++ })
		return connect.NewError(connect.CodeUnauthenticated, errors.New("bad token"))
	}
	return nil
}

func (a *testAdmin) update(f func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f()
	close(a.changed)
	a.changed = make(chan struct{})
}

func (a *testAdmin) Register(ctx context.Context, req *carillonv1.RegisterRequest) (*carillonv1.RegisterResponse, error) {
	if err := a.check(ctx); err != nil {
		return nil, err
	}
	a.update(func() { a.registered = append(a.registered, req) })
	return &carillonv1.RegisterResponse{}, nil
}

func (a *testAdmin) Deregister(ctx context.Context, req *carillonv1.DeregisterRequest) (*carillonv1.DeregisterResponse, error) {
	if err := a.check(ctx); err != nil {
		return nil, err
	}
	a.update(func() { a.deregistered = append(a.deregistered, req) })
	return &carillonv1.DeregisterResponse{}, nil
}

func (a *testAdmin) ReportResults(ctx context.Context, req *carillonv1.ReportResultsRequest) (*carillonv1.ReportResultsResponse, error) {
	if err := a.check(ctx); err != nil {
		a.update(func() { a.refusedReports++ })
		return nil, err
	}
	a.update(func() {
		for _, r := range req.GetResults() {
			a.results[r.GetRunId()] = append(a.results[r.GetRunId()], r)
		}
	})
	return &carillonv1.ReportResultsResponse{}, nil
}

// waitFor blocks until cond, evaluated under the admin's lock after every
// change, holds.
func (a *testAdmin) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		a.mu.Lock()
		ok, ch := cond(), a.changed
		a.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("waited %v for %s", waitLimit, what)
		}
	}
}

// result waits for the result of one run and returns it.
func (a *testAdmin) result(t *testing.T, runID int64) *carillonv1.RunResult {
	t.Helper()
	var r *carillonv1.RunResult
	a.waitFor(t, "the result of run "+itoa(runID), func() bool {
		if rs := a.results[runID]; len(rs) > 0 {
			r = rs[0]
			return true
		}
		return false
	})
	return r
}

// resultCount says how many results of runID arrived.
func (a *testAdmin) resultCount(runID int64) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.results[runID])
}

// testExecutor is an Executor serving on a loopback listener.
type testExecutor struct {
	*sdk.Executor
	URL    string
	Client carillonv1connect.ExecutorServiceClient
	LogDir string
	cancel context.CancelFunc
	done   chan error
}

// startExecutor starts an executor for cfg (AppName, LogDir and a short
// ShutdownTimeout are filled in when empty) after setup registered its
// handlers, and stops it at the end of the test.
func startExecutor(t *testing.T, cfg sdk.Config, setup func(*sdk.Executor)) *testExecutor {
	t.Helper()
	if cfg.AppName == "" {
		cfg.AppName = "test"
	}
	if cfg.LogDir == "" {
		cfg.LogDir = filepath.Join(t.TempDir(), "executor")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), nil))
	}
	ex, err := sdk.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if setup != nil {
		setup(ex)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	te := &testExecutor{Executor: ex, URL: "http://" + ln.Addr().String(), LogDir: cfg.LogDir, cancel: cancel, done: make(chan error, 1)}
	var opts []connect.ClientOption
	if cfg.AccessToken != "" {
		opts = append(opts, client.WithToken(cfg.AccessToken))
	}
	te.Client = carillonv1connect.NewExecutorServiceClient(http.DefaultClient, te.URL, opts...)
	go func() { te.done <- ex.Serve(ctx, ln) }()
	t.Cleanup(func() { _ = te.stop(t) })
	return te
}

// stop ends Serve and returns its error; it is safe to call twice.
func (te *testExecutor) stop(t *testing.T) error {
	t.Helper()
	te.cancel()
	select {
	case err, ok := <-te.done:
		if ok {
			close(te.done)
		}
		return err
	case <-time.After(waitLimit):
		t.Fatalf("Serve did not return within %v of its context ending", waitLimit)
		return nil
	}
}

// h2cClient speaks cleartext HTTP/2 only.
func h2cClient() *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: p}}
}

func itoa(n int64) string {
	return strconv.FormatInt(n, 10)
}
