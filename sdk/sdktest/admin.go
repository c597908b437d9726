// Package sdktest tests job handlers end to end, against a real
// [sdk.Executor] and a fake admin: [NewAdmin] serves the admin's
// RegistryService on a loopback server and records the registrations,
// heartbeats and results executors send it; [Start] serves an executor
// that calls it; [Admin.Run] sends a run of a handler to an executor, as
// the admin would, and waits for its result.
//
// It is the fake admin the SDK's own tests use. Every wait is bounded by
// [WaitLimit], so a broken handler fails a test instead of hanging it.
package sdktest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/client"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// WaitLimit bounds every wait of this package for an event. Nothing is
// expected to take anywhere near that long.
const WaitLimit = 30 * time.Second

// Admin is a fake Carillon admin: a real RegistryService on a loopback
// HTTP server (HTTP/1.1 and h2c) that records what executors send it.
// Its methods are safe for concurrent use.
type Admin struct {
	// URL is the admin's base URL, for [sdk.Config].AdminURLs.
	URL   string
	token string

	mu             sync.Mutex
	down           bool
	changed        chan struct{} // closed and replaced on every change
	registered     []*carillonv1.RegisterRequest
	deregistered   []*carillonv1.DeregisterRequest
	results        map[int64][]*carillonv1.RunResult
	refused        int // calls refused for a bad token or while down
	refusedReports int // ReportResults calls among them
}

// NewAdmin starts an admin that takes the calls carrying token ("" for
// any), and stops it at the end of the test.
func NewAdmin(t testing.TB, token string) *Admin {
	t.Helper()
	a := &Admin{token: token, changed: make(chan struct{}), results: make(map[int64][]*carillonv1.RunResult)}
	mux := http.NewServeMux()
	mux.Handle(carillonv1connect.NewRegistryServiceHandler(registry{a}))
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	a.URL = srv.URL
	return a
}

// SetDown makes the admin refuse every call as unavailable while down is
// set, as an admin that is down or unreachable.
func (a *Admin) SetDown(down bool) {
	a.update(func() { a.down = down })
}

// Registered returns the registrations (heartbeats) received, in order.
func (a *Admin) Registered() []*carillonv1.RegisterRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.registered)
}

// Deregistered returns the deregistrations received, in order.
func (a *Admin) Deregistered() []*carillonv1.DeregisterRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.deregistered)
}

// Results returns the results of run runID received, in order: more than
// one when it was reported again.
func (a *Admin) Results(runID int64) []*carillonv1.RunResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.results[runID])
}

// Refused says how many calls the admin refused, for a bad token or while
// down; reports how many of them were ReportResults calls.
func (a *Admin) Refused() (calls, reports int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refused, a.refusedReports
}

// WaitFor blocks until cond holds, evaluating it now and after every call
// the admin receives; it fails the test, naming what, after [WaitLimit].
// cond may call the admin's methods.
func (a *Admin) WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(WaitLimit)
	defer deadline.Stop()
	for {
		a.mu.Lock()
		ch := a.changed
		a.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("waited %v for %s", WaitLimit, what)
		}
	}
}

// Result waits for the result of run runID and returns the first one.
func (a *Admin) Result(t testing.TB, runID int64) *carillonv1.RunResult {
	t.Helper()
	a.WaitFor(t, "the result of run "+strconv.FormatInt(runID, 10), func() bool { return len(a.Results(runID)) > 0 })
	return a.Results(runID)[0]
}

// Run sends run req (its run id, job id, handler, param...; ShardTotal 0
// is taken as 1) to the executor that registered with the admin last, as
// the admin would, and waits for its result. It fails the test when the
// executor refuses the run.
func (a *Admin) Run(t testing.TB, req *carillonv1.RunRequest) *carillonv1.RunResult {
	t.Helper()
	var address string
	a.WaitFor(t, "an executor's registration", func() bool {
		regs := a.Registered()
		if len(regs) > 0 {
			address = regs[len(regs)-1].GetAddress()
		}
		return address != ""
	})
	if req.GetShardTotal() == 0 {
		req.ShardTotal = 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), WaitLimit)
	defer cancel()
	if _, err := a.Client(address).Run(ctx, req); err != nil {
		t.Fatalf("run %d of handler %q: %v", req.GetRunId(), req.GetHandler(), err)
	}
	return a.Result(t, req.GetRunId())
}

// Client returns a client of the ExecutorService of the executor at
// address that calls it as the admin does, with the admin's token.
func (a *Admin) Client(address string) carillonv1connect.ExecutorServiceClient {
	var opts []connect.ClientOption
	if a.token != "" {
		opts = append(opts, client.WithToken(a.token))
	}
	return carillonv1connect.NewExecutorServiceClient(http.DefaultClient, address, opts...)
}

// update changes the admin under its lock and wakes its waiters.
func (a *Admin) update(f func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f()
	close(a.changed)
	a.changed = make(chan struct{})
}

// check refuses calls with a bad token, or all calls while down.
func (a *Admin) check(ctx context.Context, report bool) error {
	info, _ := connect.CallInfoForHandlerContext(ctx)
	a.mu.Lock()
	down := a.down
	a.mu.Unlock()
	var err error
	switch {
	case down:
		err = connect.NewError(connect.CodeUnavailable, errors.New("sdktest: admin is down"))
	case a.token != "" && info.RequestHeader().Get("Authorization") != "Bearer "+a.token:
		err = connect.NewError(connect.CodeUnauthenticated, errors.New("sdktest: bad token"))
	default:
		return nil
	}
	a.update(func() {
		a.refused++
		if report {
			a.refusedReports++
		}
	})
	return err
}

// registry is the admin's RegistryService.
type registry struct{ a *Admin }

// Register records a registration.
func (r registry) Register(ctx context.Context, req *carillonv1.RegisterRequest) (*carillonv1.RegisterResponse, error) {
	if err := r.a.check(ctx, false); err != nil {
		return nil, err
	}
	r.a.update(func() { r.a.registered = append(r.a.registered, req) })
	return &carillonv1.RegisterResponse{}, nil
}

// Deregister records a deregistration.
func (r registry) Deregister(ctx context.Context, req *carillonv1.DeregisterRequest) (*carillonv1.DeregisterResponse, error) {
	if err := r.a.check(ctx, false); err != nil {
		return nil, err
	}
	r.a.update(func() { r.a.deregistered = append(r.a.deregistered, req) })
	return &carillonv1.DeregisterResponse{}, nil
}

// ReportResults records results, and takes them all.
func (r registry) ReportResults(ctx context.Context, req *carillonv1.ReportResultsRequest) (*carillonv1.ReportResultsResponse, error) {
	if err := r.a.check(ctx, true); err != nil {
		return nil, err
	}
	r.a.update(func() {
		for _, res := range req.GetResults() {
			r.a.results[res.GetRunId()] = append(r.a.results[res.GetRunId()], res)
		}
	})
	return &carillonv1.ReportResultsResponse{}, nil
}
