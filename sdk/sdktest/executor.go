package sdktest

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/client"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
	"github.com/carillonhq/carillon/sdk"
)

// Executor is an [sdk.Executor] serving on a loopback listener, started
// by [Start].
type Executor struct {
	*sdk.Executor
	// URL is the base URL it serves on (and registers).
	URL string
	// Client calls its ExecutorService as the admin does, with
	// [sdk.Config].AccessToken.
	Client carillonv1connect.ExecutorServiceClient
	// LogDir is its [sdk.Config].LogDir.
	LogDir string

	cancel context.CancelFunc
	done   chan error
}

// Start makes an executor for cfg, lets setup register its handlers and
// middleware (setup may be nil), and serves it on a loopback listener
// until [Executor.Stop] or the end of the test. Empty fields of cfg are
// filled in for a test: AppName "test", LogDir under t.TempDir(), and a
// Logger that writes to t.Output().
func Start(t testing.TB, cfg sdk.Config, setup func(*sdk.Executor)) *Executor {
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
		t.Fatalf("sdktest: New: %v", err)
	}
	if setup != nil {
		setup(ex)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	te := &Executor{Executor: ex, URL: "http://" + ln.Addr().String(), LogDir: cfg.LogDir, cancel: cancel, done: make(chan error, 1)}
	var opts []connect.ClientOption
	if cfg.AccessToken != "" {
		opts = append(opts, client.WithToken(cfg.AccessToken))
	}
	te.Client = carillonv1connect.NewExecutorServiceClient(http.DefaultClient, te.URL, opts...)
	go func() { te.done <- ex.Serve(ctx, ln) }()
	t.Cleanup(func() { _ = te.Stop(t) })
	return te
}

// Stop stops the executor gracefully and returns what Serve returned; it
// is safe to call twice (the second call returns nil). It fails the test
// when Serve does not return within [WaitLimit].
func (te *Executor) Stop(t testing.TB) error {
	t.Helper()
	te.cancel()
	select {
	case err, ok := <-te.done:
		if ok {
			close(te.done)
		}
		return err
	case <-time.After(WaitLimit):
		t.Fatalf("sdktest: Serve did not return within %v of its context ending", WaitLimit)
		return nil
	}
}

// Log returns the whole log of run runID, once the run has ended: it pages
// through ReadLog until the log's end, as the admin's console does.
func (te *Executor) Log(t testing.TB, runID int64) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitLimit)
	defer cancel()
	var b strings.Builder
	for from := int32(1); ; {
		res, err := te.Client.ReadLog(ctx, &carillonv1.ReadLogRequest{RunId: runID, FromLine: from})
		if err != nil {
			t.Fatalf("sdktest: ReadLog(%d, %d): %v", runID, from, err)
		}
		b.WriteString(res.GetContent())
		if res.GetEnd() {
			return b.String()
		}
		from = res.GetToLine() + 1
	}
}
