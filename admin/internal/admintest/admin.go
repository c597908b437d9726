// Package admintest starts, for a test, a real admin (package admin) served
// on a loopback port, and real SDK executors (package sdk) that register
// with it. It is apart from admin/internal/dbtest so that the tests of the
// admin's inner packages (store, trigger, schedule, server), which the
// admin imports, do not build the whole admin into theirs.
package admintest

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// Admin is an admin that Start serves until the test ends.
type Admin struct {
	// URL is the admin's base URL: https:// where Config.TLSCert is set,
	// http:// otherwise.
	URL string
	// DB is the database it opened (Config.DBPath).
	DB string
	// Metrics is the URL of its /metrics where Config.MetricsListen was
	// set, "" otherwise.
	Metrics string
	// Stop stops it gracefully, once, and returns Serve's and Close's
	// errors; the test's cleanup calls it too, and fails the test on an
	// error.
	Stop func() error
}

// Start opens an admin with cfg and serves it on a loopback port until the
// test ends. Where cfg leaves them out, it fills in: DBPath (a SQLite file
// in a new temporary directory), Logger (testkit.Logger), PasswordCost
// (bcrypt.MinCost: quick logins) and Console (io.Discard). It sets no
// token and no password: an admin without them generates both.
func Start(tb testing.TB, cfg admin.Config) *Admin {
	tb.Helper()
	if cfg.DBPath == "" {
		cfg.DBPath = filepath.Join(tb.TempDir(), "carillon.db")
	}
	if cfg.Logger == nil {
		cfg.Logger = testkit.Logger(tb)
	}
	if cfg.PasswordCost == 0 {
		cfg.PasswordCost = bcrypt.MinCost
	}
	if cfg.Console == nil {
		cfg.Console = io.Discard
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := admin.Open(ctx, cfg)
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		tb.Fatal(errors.Join(err, a.Close()))
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	stop := sync.OnceValue(func() error {
		cancel()
		err := <-done
		return errors.Join(err, a.Close())
	})
	tb.Cleanup(func() {
		if err := stop(); err != nil {
			tb.Errorf("admin Serve: %v", err)
		}
	})
	ta := &Admin{URL: "http://" + ln.Addr().String(), DB: cfg.DBPath, Stop: stop}
	if cfg.TLSCert != "" {
		ta.URL = "https://" + ln.Addr().String()
	}
	if addr := a.MetricsAddr(); addr != nil {
		ta.Metrics = "http://" + addr.String() + "/metrics"
	}
	return ta
}

// Login logs in to a as username with password through client, and
// returns the session token.
func (a *Admin) Login(tb testing.TB, client *http.Client, username, password string) string {
	tb.Helper()
	res, err := carillonv1connect.NewUserServiceClient(client, a.URL).Login(context.Background(),
		&carillonv1.LoginRequest{Username: username, Password: password})
	if err != nil {
		tb.Fatal(err)
	}
	return res.Token
}
