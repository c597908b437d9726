package admin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/client"
	"github.com/carillonhq/carillon/admin/internal/admintest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
	"github.com/carillonhq/carillon/sdk"
)

// TestFirstStart checks what a first start without --token or a password
// does: it generates both, prints the password once and never the token,
// keeps the token across restarts, and the printed password logs in.
func TestFirstStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "carillon.db")
	var console bytes.Buffer
	url := admintest.Start(t, admin.Config{DBPath: db, Console: &console}).URL
	m := regexp.MustCompile(`\n    (\S+)\n`).FindStringSubmatch(console.String())
	if m == nil {
		t.Fatalf("no password printed:\n%s", console.String())
	}
	users := carillonv1connect.NewUserServiceClient(http.DefaultClient, url)
	login, err := users.Login(ctx, &carillonv1.LoginRequest{Username: "admin", Password: m[1]})
	if err != nil {
		t.Fatalf("log in with the printed password: %v", err)
	}
	authed := carillonv1connect.NewUserServiceClient(http.DefaultClient, url, client.WithToken(login.Token))
	tok, err := authed.GetExecutorToken(ctx, &carillonv1.GetExecutorTokenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !tok.Generated || !strings.HasPrefix(tok.Token, "carillon_x_") || strings.Contains(console.String(), tok.Token) {
		t.Errorf("executor token %v: not generated, or printed:\n%s", tok, console.String())
	}
	if !strings.Contains(console.String(), "carillon executor-token") {
		t.Errorf("the console does not say how to read the token:\n%s", console.String())
	}
	// An executor without the token cannot register; with it, it can.
	reg := func(token string) error {
		var opts []connect.ClientOption
		if token != "" {
			opts = append(opts, client.WithToken(token))
		}
		_, err := carillonv1connect.NewRegistryServiceClient(http.DefaultClient, url, opts...).Register(ctx,
			&carillonv1.RegisterRequest{AppName: "app", Address: "http://127.0.0.1:1"})
		return err
	}
	if err := reg(""); connect.CodeOf(err) != connect.CodeUnauthenticated ||
		!strings.Contains(err.Error(), "carillon executor-token") || strings.Contains(err.Error(), "--token") {
		t.Errorf("register without the token: %v, want unauthenticated naming carillon executor-token, not an admin flag nobody set", err)
	}
	if err := reg(login.Token); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("register with a user's session: %v, want unauthenticated", err)
	}
	if err := reg(tok.Token); err != nil {
		t.Errorf("register with the token: %v", err)
	}
}

// TestTokenBothWays checks the executor token in both directions with a
// real SDK executor: the admin refuses an executor with another token, and
// the executor refuses the admin's dispatch when the admin's token differs.
func TestTokenBothWays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := admintest.Start(t, admin.Config{Token: "admin-token", AdminPassword: adminPassword}).URL
	login, err := carillonv1connect.NewUserServiceClient(http.DefaultClient, url).Login(ctx,
		&carillonv1.LoginRequest{Username: "admin", Password: adminPassword})
	if err != nil {
		t.Fatal(err)
	}
	auth := client.WithToken(login.Token)
	groups := carillonv1connect.NewGroupServiceClient(http.DefaultClient, url, auth)
	jobs := carillonv1connect.NewJobServiceClient(http.DefaultClient, url, auth)
	runs := carillonv1connect.NewRunServiceClient(http.DefaultClient, url, auth)

	// Executor -> admin: an executor with another token never registers.
	exURL := admintest.StartExecutor(t, sdk.Config{AdminURLs: []string{url}, AppName: "other", AccessToken: "executor-token"})
	_, err = carillonv1connect.NewRegistryServiceClient(http.DefaultClient, url, client.WithToken("executor-token")).
		Register(ctx, &carillonv1.RegisterRequest{AppName: "other", Address: exURL})
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("register with the executor's (wrong) token: %v, want unauthenticated", err)
	}

	// Admin -> executor: the admin's dispatch carries "admin-token", which
	// the executor refuses; the run fails and says so.
	g, err := groups.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{
		AppName: "manual", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_MANUAL, Addresses: []string{exURL}}})
	if err != nil {
		t.Fatal(err)
	}
	j, err := jobs.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{GroupId: g.Group.Id, Description: "d", Handler: "ok",
		Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}}})
	if err != nil {
		t.Fatal(err)
	}
	trig, err := jobs.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: j.Job.Id})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, url, 10*time.Second, func() error {
		r, err := runs.GetRun(ctx, &carillonv1.GetRunRequest{Id: trig.RunIds[0]})
		if err != nil {
			return err
		}
		if r.Run.Status != carillonv1.RunStatus_RUN_STATUS_FAILED {
			return fmt.Errorf("run is %s", r.Run.Status)
		}
		if !strings.Contains(r.Run.Message+r.Run.TriggerMessage, "unauthenticated") {
			t.Errorf("failed run does not say why: %q / %q", r.Run.Message, r.Run.TriggerMessage)
		}
		return nil
	})
	// The executor answers its own token only.
	for name, tc := range map[string]struct {
		token string
		want  connect.Code
	}{"None": {"", connect.CodeUnauthenticated}, "Admins": {"admin-token", connect.CodeUnauthenticated}, "Right": {"executor-token", 0}} {
		var opts []connect.ClientOption
		if tc.token != "" {
			opts = append(opts, client.WithToken(tc.token))
		}
		_, err := carillonv1connect.NewExecutorServiceClient(http.DefaultClient, exURL, opts...).Beat(ctx, &carillonv1.BeatRequest{})
		if connect.CodeOf(err) != tc.want && !(tc.want == 0 && err == nil) {
			t.Errorf("Beat with %s token: %v, want %v", name, err, tc.want)
		}
	}
}

// TestInsecure checks that --insecure runs without an executor token, and
// that the management API still needs a credential.
func TestInsecure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := admintest.Start(t, admin.Config{Insecure: true, AdminPassword: adminPassword}).URL
	if _, err := carillonv1connect.NewRegistryServiceClient(http.DefaultClient, url).Register(ctx,
		&carillonv1.RegisterRequest{AppName: "app", Address: "http://127.0.0.1:1"}); err != nil {
		t.Errorf("register without a token on an insecure admin: %v", err)
	}
	_, err := carillonv1connect.NewGroupServiceClient(http.DefaultClient, url).ListGroups(ctx, &carillonv1.ListGroupsRequest{})
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("management without a credential on an insecure admin: %v, want unauthenticated", err)
	}
	var ce *connect.Error
	if !errors.As(err, &ce) || !strings.Contains(ce.Message(), "Authorization: Bearer") {
		t.Errorf("the error does not say what to send: %v", err)
	}
}
