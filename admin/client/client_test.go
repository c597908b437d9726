package client_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"connectrpc.com/connect"
	"golang.org/x/crypto/bcrypt"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/client"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

const password = "client test password"

// serve runs a real admin on loopback until the test ends and returns its URL.
func serve(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := admin.Open(ctx, admin.Config{
		DBPath: filepath.Join(t.TempDir(), "carillon.db"), Token: "tok", AdminPassword: password,
		PasswordCost: bcrypt.MinCost, Console: io.Discard, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("admin Serve: %v", err)
		}
		a.Close()
	})
	return "http://" + ln.Addr().String()
}

// TestWithToken logs in through New's clients, then calls the admin with
// and without WithToken, over Connect and gRPC, and through a generated
// client made directly.
func TestWithToken(t *testing.T) {
	t.Parallel()
	url := serve(t)
	ctx := context.Background()

	anon := client.New(nil, url)
	login, err := anon.Users.Login(ctx, &carillonv1.LoginRequest{Username: "admin", Password: password})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anon.Jobs.ListJobs(ctx, &carillonv1.ListJobsRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("ListJobs without a token: %v, want unauthenticated", err)
	}
	if _, err := client.New(nil, url, client.WithToken("")).Runs.ListRuns(ctx, &carillonv1.ListRunsRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("ListRuns with WithToken(\"\"): %v, want unauthenticated", err)
	}
	if _, err := client.New(nil, url, client.WithToken("carillon_t_wrong")).Groups.ListGroups(ctx, &carillonv1.ListGroupsRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("ListGroups with a wrong token: %v, want unauthenticated", err)
	}

	for name, opts := range map[string][]connect.ClientOption{
		"connect": {client.WithToken(login.Token)},
		"grpc":    {client.WithToken(login.Token), connect.WithGRPC()},
		"json":    {client.WithToken(login.Token), connect.WithProtoJSON()},
	} {
		hc := http.DefaultClient
		if name == "grpc" {
			hc = h2cClient()
		}
		c := client.New(hc, url, opts...)
		me, err := c.Users.GetCurrentUser(ctx, &carillonv1.GetCurrentUserRequest{})
		if err != nil {
			t.Errorf("%s: GetCurrentUser: %v", name, err)
			continue
		}
		if me.User.Username != "admin" {
			t.Errorf("%s: GetCurrentUser = %q, want admin", name, me.User.Username)
		}
		if _, err := c.Reports.GetDashboard(ctx, &carillonv1.GetDashboardRequest{}); err != nil {
			t.Errorf("%s: GetDashboard: %v", name, err)
		}
	}

	jobs := carillonv1connect.NewJobServiceClient(http.DefaultClient, url, client.WithToken(login.Token))
	if _, err := jobs.ListJobs(ctx, &carillonv1.ListJobsRequest{}); err != nil {
		t.Errorf("a generated client with WithToken: %v", err)
	}
}

// h2cClient speaks HTTP/2 without TLS, as gRPC over http:// needs.
func h2cClient() *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &p}}
}
