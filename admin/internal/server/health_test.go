package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"golang.org/x/crypto/bcrypt"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/server"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// serve serves a Server with cfg over a real store, on a new database of
// be, on loopback and returns its URL and an ADMIN's API token.
func serve(t *testing.T, be dbtest.Backend, cfg server.Config) (url string, st *store.Store, token string) {
	t.Helper()
	st = be.Open(t)
	trig, err := trigger.New(trigger.Config{Store: st, Queue: nopQueue{}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Trigger, cfg.PasswordCost = st, trig, bcrypt.MinCost
	srv := httptest.NewServer(server.New(cfg).Handler())
	t.Cleanup(srv.Close)
	return srv.URL, st, addUser(t, st, "root", auth.RoleAdmin)
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// TestHealth checks /healthz, /readyz and gRPC health, without a
// credential: /healthz answers 200 whatever the readiness; /readyz and
// grpc.health.v1 follow ReadyFunc.
func TestHealth(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		var notReady atomic.Pointer[error]
		url, _, _ := serve(t, be, server.Config{ReadyFunc: func(context.Context) error {
			if p := notReady.Load(); p != nil {
				return *p
			}
			return nil
		}})
		ctx := context.Background()
		health := grpchealth.NewClient(http.DefaultClient, url) // the Connect protocol: httptest serves HTTP/1.1
		check := func(service string) grpchealth.Status {
			t.Helper()
			res, err := health.Check(ctx, &grpchealth.CheckRequest{Service: service})
			if err != nil {
				t.Fatalf("health check %q: %v", service, err)
			}
			return res.Status
		}

		if code, body := get(t, url+"/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
			t.Errorf("/healthz: %d %q", code, body)
		}
		if code, body := get(t, url+"/readyz"); code != 200 {
			t.Errorf("/readyz when ready: %d %q", code, body)
		}
		for _, svc := range []string{"", carillonv1connect.JobServiceName} {
			if got := check(svc); got != grpchealth.StatusServing {
				t.Errorf("gRPC health %q when ready: %v", svc, got)
			}
		}

		reason := errors.New("store: the database's disk is full: database or disk is full (13)")
		notReady.Store(&reason)
		if code, body := get(t, url+"/healthz"); code != 200 {
			t.Errorf("/healthz when not ready: %d %q, want 200 (alive)", code, body)
		}
		if code, body := get(t, url+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "disk is full") {
			t.Errorf("/readyz when not ready: %d %q, want 503 with the reason", code, body)
		}
		for _, svc := range []string{"", carillonv1connect.JobServiceName} {
			if got := check(svc); got != grpchealth.StatusNotServing {
				t.Errorf("gRPC health %q when not ready: %v, want NOT_SERVING", svc, got)
			}
		}
		if _, err := health.Check(ctx, &grpchealth.CheckRequest{Service: "no.such.Service"}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Errorf("gRPC health of an unknown service: %v, want not_found", err)
		}
	})
}

// TestFullDiskResourceExhausted checks that a write on a full database
// answers resource_exhausted saying so (it was internal), simulated with
// store.LimitPages.
func TestFullDiskResourceExhausted(t *testing.T) {
	t.Parallel()
	// SQLite only: it fills the SQLite file up (LimitPages).
	be := dbtest.SQLite
	url, st, token := serve(t, be, server.Config{})
	ctx := context.Background()
	c := clientsOf(url, token)
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "app"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.LimitPages(ctx, 1); err != nil {
		t.Fatal(err)
	}
	param := strings.Repeat("p", 60<<10)
	for range 100 {
		_, err = c.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{
			GroupId: g.Group.Id, Description: "d", Handler: "h", Param: param,
			Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 60},
		}})
		if err != nil {
			break
		}
	}
	if connect.CodeOf(err) != connect.CodeResourceExhausted || !strings.Contains(err.Error(), "disk is full") {
		t.Fatalf("CreateJob on a full database: %v, want resource_exhausted saying the disk is full", err)
	}
}

// TestReadTimeout checks that an API read past Config.ReadTimeout fails
// with deadline_exceeded saying what to do.
func TestReadTimeout(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		url, _, token := serve(t, be, server.Config{ReadTimeout: time.Nanosecond})
		_, err := clientsOf(url, token).report.GetDashboard(context.Background(), &carillonv1.GetDashboardRequest{})
		if connect.CodeOf(err) != connect.CodeDeadlineExceeded || !strings.Contains(err.Error(), "narrow it") {
			t.Fatalf("GetDashboard past the read timeout: %v, want deadline_exceeded saying what to do", err)
		}
	})
}
