package server_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/bcrypt"

	"github.com/carillonhq/carillon/admin/client"
	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/server"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	"github.com/carillonhq/carillon/internal/clock"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// nopQueue is a trigger.Queue that drops what it is given: these tests
// run no scheduler.
type nopQueue struct{}

func (nopQueue) Enqueue(...store.Run) {}
func (nopQueue) Wake()                {}

type bundle struct {
	clock    *clock.Fake
	url      string
	db       string // the database: a SQLite file or a PostgreSQL URL
	store    *store.Store
	admin    string // an ADMIN's API token
	registry carillonv1connect.RegistryServiceClient
	group    carillonv1connect.GroupServiceClient
}

// setup serves a Server over a real store, on a new database of be, on a
// loopback HTTP server, with an injected clock.
func setup(t testing.TB, be dbtest.Backend, token string) *bundle {
	t.Helper()
	return setupLogged(t, be, token, nil)
}

// setupLogged is setup with the Server's logger (nil: slog's default).
func setupLogged(t testing.TB, be dbtest.Backend, token string, logger *slog.Logger) *bundle {
	t.Helper()
	return setupWith(t, be, token, func(c *server.Config, _ string) { c.Logger = logger })
}

// setupWith is setup with the Server's configuration changed by mod, which
// is given the server's URL.
func setupWith(t testing.TB, be dbtest.Backend, token string, mod func(c *server.Config, url string)) *bundle {
	t.Helper()
	db := be.DB(t)
	st := dbtest.Open(t, db)
	t.Cleanup(func() { closeDigestPool(db) })
	clk := clock.NewFake(time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC))
	trig, err := trigger.New(trigger.Config{Store: st, Token: token, Clock: clk, Queue: nopQueue{}})
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler // set before the first request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	cfg := server.Config{
		Store: st, Trigger: trig, NowFunc: clk.Now, PasswordCost: bcrypt.MinCost,
		LoginLimiter: auth.NewLoginLimiter(3, time.Minute, 10, time.Second),
	}
	mod(&cfg, srv.URL)
	h = server.New(cfg).Handler()
	admin := addUser(t, st, "root", auth.RoleAdmin)
	return &bundle{
		clock:    clk,
		url:      srv.URL,
		db:       db,
		store:    st,
		admin:    admin,
		registry: carillonv1connect.NewRegistryServiceClient(http.DefaultClient, srv.URL, client.WithToken(token)),
		group:    carillonv1connect.NewGroupServiceClient(http.DefaultClient, srv.URL, client.WithToken(admin)),
	}
}

func TestRegistryExpiry(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "")
		g, err := b.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "app"}})
		if err != nil {
			t.Fatal(err)
		}
		addresses := func() []string {
			t.Helper()
			res, err := b.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: g.Group.Id})
			if err != nil {
				t.Fatal(err)
			}
			return res.Group.Addresses
		}
		register := func(addr string) {
			t.Helper()
			res, err := b.registry.Register(ctx, &carillonv1.RegisterRequest{AppName: "app", Address: addr})
			if err != nil {
				t.Fatal(err)
			}
			// The admin's id among those sharing a PostgreSQL database;
			// none over SQLite.
			if want := b.store.AdminID(); res.AdminId != want || (be.Name == dbtest.Postgres.Name) == (want == "") {
				t.Errorf("RegisterResponse.admin_id %q, want %q", res.AdminId, want)
			}
		}
		register("http://10.0.0.2:9999")
		register("http://10.0.0.1:9999")
		if diff := cmp.Diff([]string{"http://10.0.0.1:9999", "http://10.0.0.2:9999"}, addresses()); diff != "" {
			t.Fatalf("live executors, sorted (-want +got):\n%s", diff)
		}

		b.clock.Add(60 * time.Second)
		register("http://10.0.0.2:9999") // heartbeat of one of them
		b.clock.Add(31 * time.Second)    // 91 s after the first registration
		if diff := cmp.Diff([]string{"http://10.0.0.2:9999"}, addresses()); diff != "" {
			t.Fatalf("after 91 s without a heartbeat (-want +got):\n%s", diff)
		}

		if _, err := b.registry.Deregister(ctx, &carillonv1.DeregisterRequest{AppName: "app", Address: "http://10.0.0.2:9999"}); err != nil {
			t.Fatal(err)
		}
		if got := addresses(); len(got) != 0 {
			t.Fatalf("after deregister: %v, want none", got)
		}
	})
}

func TestRegistryToken(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "s3cret")
		req := &carillonv1.RegisterRequest{AppName: "app", Address: "http://10.0.0.1:9999"}
		if _, err := b.registry.Register(ctx, req); err != nil {
			t.Fatalf("with the token: %v", err)
		}
		for name, c := range map[string]carillonv1connect.RegistryServiceClient{
			"Missing": carillonv1connect.NewRegistryServiceClient(http.DefaultClient, b.url),
			"Wrong":   carillonv1connect.NewRegistryServiceClient(http.DefaultClient, b.url, client.WithToken("guess")),
		} {
			_, err := c.Register(ctx, req)
			if connect.CodeOf(err) != connect.CodeUnauthenticated {
				t.Errorf("%s token: got %v, want unauthenticated", name, err)
			}
		}
		// The scheme is read as everywhere else in the admin: any case, extra
		// spaces around the token.
		for _, header := range []string{"bearer s3cret", "BEARER  s3cret ", " Bearer s3cret"} {
			c := carillonv1connect.NewRegistryServiceClient(http.DefaultClient, b.url, connect.WithInterceptors(
				connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
					return func(ctx context.Context, r connect.AnyRequest) (connect.AnyResponse, error) {
						r.Header().Set("Authorization", header)
						return next(ctx, r)
					}
				})))
			if _, err := c.Register(ctx, req); err != nil {
				t.Errorf("Authorization %q: %v, want accepted as the management API accepts it", header, err)
			}
		}
	})
}

func TestRegisterValidation(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "")
		for _, req := range []*carillonv1.RegisterRequest{
			{AppName: "", Address: "http://10.0.0.1:9999"},
			{AppName: "has space", Address: "http://10.0.0.1:9999"},
			{AppName: "app", Address: "10.0.0.1:9999"},
			{AppName: "app", Address: "ftp://10.0.0.1"},
			{AppName: "app", Address: "http://10.0.0.1:9999", Codec: "xml"},
		} {
			_, err := b.registry.Register(ctx, req)
			var ce *connect.Error
			if !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument {
				t.Errorf("Register(%v): got %v, want invalid_argument", req, err)
			}
		}
	})
}

// TestRegisterStoresCapabilities: a heartbeat's capabilities are stored
// with the registration, where the trigger (and every admin of the
// database) reads them, and each heartbeat replaces the last one's.
func TestRegisterStoresCapabilities(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "")
		for i, caps := range [][]carillonv1.Capability{{carillonv1.Capability_CAPABILITY_DUE_AT}, nil} {
			if _, err := b.registry.Register(ctx, &carillonv1.RegisterRequest{AppName: "app", Address: "http://10.0.0.1:9999", Capabilities: caps}); err != nil {
				t.Fatal(err)
			}
			regs, err := b.store.Registry.List(ctx, "app", time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			want := []store.Registration{{Address: "http://10.0.0.1:9999", Capabilities: store.CapabilitiesOf(caps)}}
			if diff := cmp.Diff(want, regs); diff != "" {
				t.Errorf("heartbeat %d, capabilities %v (-want +got):\n%s", i, caps, diff)
			}
		}
	})
}

// TestReportResultsRefusesEachMalformedResult: a batch with malformed
// results settles the good ones (with their outputs) and refuses each bad
// one in its outcome, naming the field and the rule (outputs over 64 KiB,
// an empty output key); the call succeeds.
func TestReportResultsRefusesEachMalformedResult(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "")
		newRun := runningRuns(t, b.store, b.clock.Now(), "http://10.0.0.1:9999")
		good, bad, ours, foreign, big, emptyKey := newRun(), newRun(), newRun(), newRun(), newRun(), newRun()
		res, err := b.registry.ReportResults(ctx, &carillonv1.ReportResultsRequest{Results: []*carillonv1.RunResult{
			{RunId: good.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, Outputs: map[string]string{"rows": "42"}},
			{RunId: bad.ID, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING},
			{RunId: -1, Status: carillonv1.RunStatus_RUN_STATUS_FAILED},
			{RunId: ours.ID, Status: carillonv1.RunStatus_RUN_STATUS_FAILED, Message: "boom", DatabaseId: b.store.DatabaseID()},
			{RunId: foreign.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, DatabaseId: strings.Repeat("f", 32)},
			{RunId: big.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, Outputs: map[string]string{"k": strings.Repeat("v", store.MaxOutputsSize)}},
			{RunId: emptyKey.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, Outputs: map[string]string{"": "v"}},
		}})
		if err != nil {
			t.Fatalf("ReportResults with malformed results: %v, want the call to succeed", err)
		}
		type outcome struct {
			RunID   int64
			Code    string
			Message string // its prefix
		}
		want := []outcome{
			{good.ID, "", ""},
			{bad.ID, "invalid_argument", "results[1].status: must be a final status"},
			{-1, "invalid_argument", "results[2].run_id: must be positive"},
			{ours.ID, "", ""},
			{foreign.ID, "", ""}, // of another database: acknowledged and ignored
			{big.ID, "invalid_argument", "results[5].outputs: at most 65536 bytes of keys and values, got 65537"},
			{emptyKey.ID, "invalid_argument", "results[6].outputs: keys must not be empty"},
		}
		var got []outcome
		for i, o := range res.GetOutcomes() {
			got = append(got, outcome{o.GetRunId(), o.GetCode(), o.GetMessage()})
			if i < len(want) && strings.HasPrefix(o.GetMessage(), want[i].Message) {
				got[i].Message = want[i].Message
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("outcomes, messages by prefix (-want +got):\n%s", diff)
		}
		for _, w := range []struct {
			run  store.Run
			want carillonv1.RunStatus
		}{
			{good, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED},
			{bad, carillonv1.RunStatus_RUN_STATUS_RUNNING},
			{ours, carillonv1.RunStatus_RUN_STATUS_FAILED},
			{foreign, carillonv1.RunStatus_RUN_STATUS_RUNNING},
			{big, carillonv1.RunStatus_RUN_STATUS_RUNNING},
			{emptyKey, carillonv1.RunStatus_RUN_STATUS_RUNNING},
		} {
			if r, err := b.store.Runs.Get(ctx, w.run.ID); err != nil || r.Status != w.want {
				t.Errorf("run %d after the batch: %s (%v), want %s", w.run.ID, r.Status, err, w.want)
			}
		}
		if r, err := b.store.Runs.Get(ctx, good.ID); err != nil || r.Outputs["rows"] != "42" || len(r.Outputs) != 1 {
			t.Errorf("the good run's outputs %v (%v), want rows=42", r.Outputs, err)
		}
	})
}
