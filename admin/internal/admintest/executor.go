package admintest

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/carillonhq/carillon/internal/testkit"
	"github.com/carillonhq/carillon/sdk"
)

// StartExecutor starts a real SDK executor with cfg on a loopback port
// until the test ends, and returns the address it registers. Where cfg
// leaves them out, it fills in LogDir (a new temporary directory) and
// Logger (testkit.Logger). The executor has an "ok" handler that succeeds
// (logging "ok run <id>") and a "fail" handler that fails with "boom:
// <param>"; setup, if given, registers more before it serves.
func StartExecutor(tb testing.TB, cfg sdk.Config, setup ...func(*sdk.Executor)) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	serve(tb, newExecutor(tb, cfg, setup), ln)
	if cfg.AdvertiseURL != "" {
		return cfg.AdvertiseURL
	}
	return "http://" + ln.Addr().String() // what the executor derives from ln
}

// StartExecutorTLS is StartExecutor over https: the executor's handler
// (Executor.Handler) is served with cert on a loopback server of the
// test's own, and the executor advertises that https URL.
func StartExecutorTLS(tb testing.TB, cfg sdk.Config, cert tls.Certificate, setup ...func(*sdk.Executor)) string {
	tb.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewUnstartedServer(mux)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = slog.NewLogLogger(testkit.Logger(tb).Handler(), slog.LevelWarn) // refused handshakes
	srv.StartTLS()
	tb.Cleanup(srv.Close)
	cfg.AdvertiseURL = srv.URL
	ex := newExecutor(tb, cfg, setup)
	mux.Handle(ex.Handler())
	serve(tb, ex, nil)
	return cfg.AdvertiseURL
}

// newExecutor makes the executor of StartExecutor.
func newExecutor(tb testing.TB, cfg sdk.Config, setup []func(*sdk.Executor)) *sdk.Executor {
	tb.Helper()
	if cfg.LogDir == "" {
		cfg.LogDir = tb.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = testkit.Logger(tb)
	}
	ex, err := sdk.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ex.HandleFunc("ok", func(ctx context.Context, job *sdk.Job) error {
		job.Logf("ok run %d", job.RunID)
		return nil
	})
	ex.HandleFunc("fail", func(ctx context.Context, job *sdk.Job) error {
		return fmt.Errorf("boom: %s", job.Param)
	})
	for _, f := range setup {
		f(ex)
	}
	return ex
}

// serve serves ex on ln (nil: its own registrations and results only, its
// handler served elsewhere) until the test ends.
func serve(tb testing.TB, ex *sdk.Executor, ln net.Listener) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Serve(ctx, ln) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("executor Serve: %v", err)
		}
	})
}
