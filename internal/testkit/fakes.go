package testkit

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// ServeExecutor serves h, a test's own ExecutorService (what an admin
// calls: Run, RunBatch, Kill, HeldRuns...), on a loopback HTTP server
// until the test ends, and returns the server's URL.
func ServeExecutor(tb testing.TB, h carillonv1connect.ExecutorServiceHandler) string {
	tb.Helper()
	path, handler := carillonv1connect.NewExecutorServiceHandler(h)
	return Serve(tb, path, handler)
}

// ServeRegistry serves h, a test's own RegistryService (what an executor
// calls: Register, ReportResults...), on a loopback HTTP server until the
// test ends, and returns the server's URL.
func ServeRegistry(tb testing.TB, h carillonv1connect.RegistryServiceHandler) string {
	tb.Helper()
	path, handler := carillonv1connect.NewRegistryServiceHandler(h)
	return Serve(tb, path, handler)
}

// Serve serves handler at pattern (a Connect service's path and handler,
// as its New...Handler returns them) on a loopback HTTP server until the
// test ends, and returns the server's URL.
func Serve(tb testing.TB, pattern string, handler http.Handler) string {
	tb.Helper()
	mux := http.NewServeMux()
	mux.Handle(pattern, handler)
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv.URL
}

// DeadURL returns the URL of a loopback port nobody listens on: a call to
// it is refused.
func DeadURL(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		tb.Fatal(err)
	}
	return "http://" + addr
}
