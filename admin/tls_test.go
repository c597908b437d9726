package admin_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/internal/admintest"
	"github.com/carillonhq/carillon/admin/internal/testca"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk"
)

// TestTLS serves the admin over https with a certificate of a CA made in
// the test: typed clients trusting the CA call it over Connect and gRPC, an
// SDK executor trusting it registers and runs a job, and a client trusting
// another CA is refused over the certificate.
func TestTLS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ca := testca.New(t, "Carillon test CA")
	leaf := ca.Leaf(t)
	a := startAdminWith(t, admin.Config{TLSCert: leaf.CertFile, TLSKey: leaf.KeyFile}, ca.Client())
	if !strings.HasPrefix(a.URL, "https://") {
		t.Fatalf("admin URL %s, want https", a.URL)
	}

	for name, c := range map[string]clients{
		"Connect": newClients(a.URL, ca.Client()),
		"GRPC":    newClients(a.URL, ca.Client(), connect.WithGRPC()), // HTTP/2 over TLS
	} {
		if _, err := c.group.ListGroups(ctx, &carillonv1.ListGroupsRequest{}); err != nil {
			t.Errorf("%s: ListGroups over https: %v", name, err)
		}
	}

	t.Run("OtherCA", func(t *testing.T) {
		other := testca.New(t, "Another CA")
		_, err := newClients(a.URL, other.Client()).group.ListGroups(ctx, &carillonv1.ListGroupsRequest{})
		var unknown x509.UnknownAuthorityError
		if connect.CodeOf(err) != connect.CodeUnavailable || !errors.As(err, &unknown) {
			t.Fatalf("ListGroups trusting another CA: %v; want unavailable, certificate signed by unknown authority", err)
		}
	})

	// The console's session cookie is Secure over https.
	req, _ := http.NewRequest(http.MethodPost, a.URL+"/carillon.v1.UserService/Login",
		strings.NewReader(`{"username":"admin","password":"`+adminPassword+`","cookie":true}`))
	req.Header.Set("Content-Type", "application/json")
	res, err := ca.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if sc := res.Header.Get("Set-Cookie"); !strings.Contains(sc, "Secure") || !strings.Contains(sc, "HttpOnly") {
		t.Errorf("session cookie over https: %q, want Secure and HttpOnly", sc)
	}

	c := newClients(a.URL, ca.Client())
	addr := admintest.StartExecutor(t, sdk.Config{AdminURLs: []string{a.URL}, AppName: "tls", AccessToken: token, HTTPClient: ca.Client()})
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "tls"}})
	if err != nil {
		t.Fatal(err)
	}
	waitAddresses(t, c, g.Group.Id, addr)
	job := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "ok", Handler: "ok", Enabled: true,
		Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "*/1 * * * * ?"}})
	waitSucceeded(t, c, job.Id, addr)
}

// TestExecutorTLS has the admin call an executor served over https with a
// certificate of a private CA: with --executor-ca-file naming the CA, runs
// reach it and succeed and their logs are read back; without it, the
// dispatch fails over the certificate.
func TestExecutorTLS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ca := testca.New(t, "Carillon executor CA")
	leaf := ca.Leaf(t)

	t.Run("Trusted", func(t *testing.T) {
		t.Parallel()
		a := startAdminWith(t, admin.Config{ExecutorCAFile: ca.CertFile}, http.DefaultClient)
		c := newClients(a.URL, http.DefaultClient)
		addr := admintest.StartExecutorTLS(t, sdk.Config{AdminURLs: []string{a.URL}, AppName: "https-executor", AccessToken: token}, leaf.Certificate)
		if !strings.HasPrefix(addr, "https://") {
			t.Fatalf("executor address %s, want https", addr)
		}
		g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "https-executor"}})
		if err != nil {
			t.Fatal(err)
		}
		waitAddresses(t, c, g.Group.Id, addr)
		job := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "ok", Handler: "ok", Enabled: true,
			Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "*/1 * * * * ?"}})
		run := waitSucceeded(t, c, job.Id, addr)
		page, err := c.run.ReadRunLog(ctx, &carillonv1.ReadRunLogRequest{RunId: run.Id, FromLine: 1})
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("ok run %d", run.Id); !strings.Contains(page.Content, want) {
			t.Errorf("run log over https = %q, want it to contain %q", page.Content, want)
		}
	})

	t.Run("Untrusted", func(t *testing.T) {
		t.Parallel()
		a := startAdminWith(t, admin.Config{}, http.DefaultClient)
		c := newClients(a.URL, http.DefaultClient)
		addr := admintest.StartExecutorTLS(t, sdk.Config{AdminURLs: []string{a.URL}, AppName: "https-untrusted", AccessToken: token}, leaf.Certificate)
		g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "https-untrusted"}})
		if err != nil {
			t.Fatal(err)
		}
		waitAddresses(t, c, g.Group.Id, addr)
		job := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "ok", Handler: "ok", Enabled: true,
			Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "*/1 * * * * ?"}})
		eventually(t, a.URL, 20*time.Second, func() error {
			for _, r := range listRuns(t, c, job.Id) {
				switch r.Status {
				case carillonv1.RunStatus_RUN_STATUS_SUCCEEDED:
					t.Fatalf("run %d succeeded on an executor whose CA the admin does not trust", r.Id)
				case carillonv1.RunStatus_RUN_STATUS_FAILED:
					if !strings.Contains(r.Message, "certificate signed by unknown authority") {
						t.Fatalf("failed run %d: message %q, want it to name the certificate", r.Id, r.Message)
					}
					return nil
				}
			}
			return errors.New("no FAILED run yet")
		})
	})

	t.Run("NotPEM", func(t *testing.T) {
		t.Parallel()
		bad := filepath.Join(t.TempDir(), "ca.pem")
		if err := os.WriteFile(bad, []byte("not a certificate\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := admin.Open(ctx, admin.Config{DBPath: filepath.Join(t.TempDir(), "carillon.db"), ExecutorCAFile: bad})
		if err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
			t.Fatalf("Open with a CA file holding no certificate: %v, want an error saying so", err)
		}
	})
}

// waitAddresses waits until the group's live executors are exactly addr.
func waitAddresses(t *testing.T, c clients, groupID int64, addr string) {
	t.Helper()
	eventually(t, c.url, 10*time.Second, func() error {
		res, err := c.group.GetGroup(context.Background(), &carillonv1.GetGroupRequest{Id: groupID})
		if err != nil {
			return err
		}
		if len(res.Group.Addresses) != 1 || res.Group.Addresses[0] != addr {
			return fmt.Errorf("group addresses %v, want [%s]", res.Group.Addresses, addr)
		}
		return nil
	})
}

// waitSucceeded waits for a run of the job to succeed on the executor at
// addr, failing at once if one fails, and returns it.
func waitSucceeded(t *testing.T, c clients, jobID int64, addr string) *carillonv1.Run {
	t.Helper()
	var run *carillonv1.Run
	eventually(t, c.url, 20*time.Second, func() error {
		for _, r := range listRuns(t, c, jobID) {
			switch r.Status {
			case carillonv1.RunStatus_RUN_STATUS_SUCCEEDED:
				if r.ExecutorAddress != addr {
					return fmt.Errorf("run %d ran on %q, want %q", r.Id, r.ExecutorAddress, addr)
				}
				run = r
				return nil
			case carillonv1.RunStatus_RUN_STATUS_FAILED:
				t.Fatalf("run %d failed: %s", r.Id, r.Message)
			}
		}
		return errors.New("no SUCCEEDED run yet")
	})
	return run
}
