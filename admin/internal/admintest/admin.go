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
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/internal/testkit"
	"github.com/carillonhq/carillon/internal/testsignal"
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
	// Changed is emitted after each write the admin commits (the
	// admin's Changed): wait on it, with Eventually, for what the API
	// shows.
	Changed *testsignal.Signal
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
	return StartAt(tb, cfg, "127.0.0.1:0")
}

// StartAt is Start on the loopback address addr: an admin restarted where
// its executors know it.
func StartAt(tb testing.TB, cfg admin.Config, addr string) *Admin {
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
	ln, err := net.Listen("tcp", addr)
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
	ta := &Admin{URL: "http://" + ln.Addr().String(), DB: cfg.DBPath, Changed: a.Changed(), Stop: stop}
	if cfg.TLSCert != "" {
		ta.URL = "https://" + ln.Addr().String()
	}
	serving.Store(ta.URL, ta)
	tb.Cleanup(func() { serving.Delete(ta.URL) })
	if addr := a.MetricsAddr(); addr != nil {
		ta.Metrics = "http://" + addr.String() + "/metrics"
	}
	return ta
}

// serving holds the admins Start serves, by URL (At).
var serving sync.Map

// At returns the admin Start serves at url, or nil if none: for helpers
// that know an admin by its URL only.
func At(url string) *Admin {
	a, _ := serving.Load(url)
	ta, _ := a.(*Admin)
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

// recheck is how often Eventually checks its condition again without a
// commit: for what changes outside the database (an executor's handler, a
// metric or a span made just after its commit).
const recheck = 100 * time.Millisecond

// Eventually waits, at most timeout, until cond returns nil, checking it
// at once, after each write the admin commits and at least every recheck;
// it fails the test with cond's last error when the time is up.
func (a *Admin) Eventually(tb testing.TB, timeout time.Duration, cond func() error) {
	tb.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		next := a.Changed.Next() // before the check: a commit after it closes next
		err := cond()
		if err == nil {
			return
		}
		select {
		case <-next:
		case <-time.After(recheck):
		case <-deadline.C:
			tb.Fatalf("after %s: %v", timeout, err)
		}
	}
}
