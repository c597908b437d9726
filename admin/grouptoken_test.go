package admin_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/client"
	"github.com/carillonhq/carillon/admin/internal/admintest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
	"github.com/carillonhq/carillon/sdk"
)

// recorder is an HTTP server on loopback that answers 404 to everything
// and remembers each request it got, with its Authorization header.
type recorder struct {
	url  string
	mu   sync.Mutex
	reqs []string // "<path> <Authorization>"
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	r := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.reqs = append(r.reqs, req.URL.Path+" "+req.Header.Get("Authorization"))
		r.mu.Unlock()
		http.NotFound(w, req)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

// clientsAs returns the management clients of a user's token (newClients
// would send the first ADMIN's).
func clientsAs(url, token string) clients {
	opt := client.WithToken(token)
	return clients{
		group: carillonv1connect.NewGroupServiceClient(http.DefaultClient, url, opt),
		job:   carillonv1connect.NewJobServiceClient(http.DefaultClient, url, opt),
		run:   carillonv1connect.NewRunServiceClient(http.DefaultClient, url, opt),
	}
}

// newUser creates a user through the API as the first ADMIN and returns a
// session token of theirs.
func newUser(t *testing.T, url string, u *carillonv1.User) string {
	t.Helper()
	ctx := context.Background()
	tok, _ := credentials.Load(url)
	users := carillonv1connect.NewUserServiceClient(http.DefaultClient, url, client.WithToken(tok.(string)))
	const password = "a member's password"
	if _, err := users.CreateUser(ctx, &carillonv1.CreateUserRequest{User: u, Password: password}); err != nil {
		t.Fatal(err)
	}
	login, err := carillonv1connect.NewUserServiceClient(http.DefaultClient, url).Login(ctx,
		&carillonv1.LoginRequest{Username: u.Username, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	return login.Token
}

// TestCredentialsStayInGroup checks that the admin sends no request, and so
// no credential, to an address that is not one of the group's executors:
// TriggerJob's addresses outside the group are refused for a MEMBER and an
// ADMIN alike, and the runs, logs and kills of the group's real executor
// never reach the outside listener.
func TestCredentialsStayInGroup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmin(t)
	outside := newRecorder(t)
	c := newClients(a.URL, http.DefaultClient)
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "team-a"}})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	exURL := startExecutor(t, a.URL, "team-a", func(ex *sdk.Executor) {
		ex.HandleFunc("wait", func(ctx context.Context, job *sdk.Job) error {
			job.Logf("waiting")
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-release:
				return nil
			}
		})
	})
	defer close(release)
	waitAddresses(t, c, g.Group.Id, exURL)
	ok := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "d", Handler: "ok", Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}})
	wait := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "d", Handler: "wait", Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}})

	member := clientsAs(a.URL, newUser(t, a.URL, &carillonv1.User{Username: "member", Role: carillonv1.Role_ROLE_MEMBER, GroupIds: []int64{g.Group.Id}}))
	for name, cl := range map[string]clients{"ADMIN": c, "MEMBER": member} {
		for _, addrs := range [][]string{{outside.url}, {exURL, outside.url}} {
			_, err := cl.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: ok.Id, Addresses: addrs})
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "addresses[") ||
				!strings.Contains(err.Error(), "not") && !strings.Contains(err.Error(), "must be an executor") {
				t.Errorf("%s TriggerJob to %v: %v, want invalid_argument naming the address outside the group", name, addrs, err)
			}
		}
	}
	// The group's own executor, named or not, is served; its log read and a
	// run killed, as a MEMBER.
	res, err := member.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: ok.Id, Addresses: []string{exURL}})
	if err != nil {
		t.Fatal(err)
	}
	waitSucceeded(t, c, ok.Id, exURL)
	if _, err := member.run.ReadRunLog(ctx, &carillonv1.ReadRunLogRequest{RunId: res.RunIds[0]}); err != nil {
		t.Fatal(err)
	}
	res, err = member.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: wait.Id})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, a.URL, 10*time.Second, func() error {
		_, err := member.run.KillRun(ctx, &carillonv1.KillRunRequest{RunId: res.RunIds[0]})
		return err
	})
	if got := outside.requests(); len(got) != 0 {
		t.Errorf("the outside listener got %d requests: %q", len(got), got)
	}
}

// TestGroupTokens checks a group's own executor token: only it serves the
// group's app, both ways, and it reports no other group's runs; the global
// token goes on serving the other groups, and serves this one again once
// its token is cleared.
func TestGroupTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmin(t)
	c := newClients(a.URL, http.DefaultClient)
	tok, _ := credentials.Load(a.URL)
	groups := carillonv1connect.NewGroupServiceClient(http.DefaultClient, a.URL, client.WithToken(tok.(string)))
	ga, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "team-a"}})
	if err != nil {
		t.Fatal(err)
	}
	gb, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "team-b"}})
	if err != nil {
		t.Fatal(err)
	}
	rot, err := groups.RotateGroupToken(ctx, &carillonv1.RotateGroupTokenRequest{Id: ga.Group.Id})
	if err != nil {
		t.Fatal(err)
	}
	tokenA := rot.Token
	got, err := groups.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: ga.Group.Id})
	if err != nil || !got.Group.HasOwnToken {
		t.Fatalf("GetGroup after RotateGroupToken: %v, %v; want has_own_token", got, err)
	}
	if other, _ := groups.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: gb.Group.Id}); other.GetGroup().GetHasOwnToken() {
		t.Errorf("group b says it has its own token")
	}

	registry := func(token string) carillonv1connect.RegistryServiceClient {
		return carillonv1connect.NewRegistryServiceClient(http.DefaultClient, a.URL, client.WithToken(token))
	}
	for _, tc := range []struct {
		name, token, app string
		want             connect.Code
	}{
		{"a's token for a", tokenA, "team-a", 0},
		{"a's token for b", tokenA, "team-b", connect.CodePermissionDenied},
		{"the global token for a", token, "team-a", connect.CodePermissionDenied},
		{"the global token for b", token, "team-b", 0},
		{"a wrong token for a", "guess", "team-a", connect.CodeUnauthenticated},
	} {
		_, err := registry(tc.token).Register(ctx, &carillonv1.RegisterRequest{AppName: tc.app, Address: "http://127.0.0.1:1"})
		if connect.CodeOf(err) != tc.want && !(tc.want == 0 && err == nil) {
			t.Errorf("Register with %s: %v, want %v", tc.name, err, tc.want)
		}
		_, err = registry(tc.token).Deregister(ctx, &carillonv1.DeregisterRequest{AppName: tc.app, Address: "http://127.0.0.1:1"})
		if connect.CodeOf(err) != tc.want && !(tc.want == 0 && err == nil) {
			t.Errorf("Deregister with %s: %v, want %v", tc.name, err, tc.want)
		}
	}

	// A real executor of a, with a's token: registers, is sent a's token
	// (it refuses any other), runs the job and reports.
	exA := startExecutorToken(t, a.URL, "team-a", tokenA)
	waitAddresses(t, c, ga.Group.Id, exA)
	jobA := createJob(t, c, &carillonv1.Job{GroupId: ga.Group.Id, Description: "d", Handler: "ok", Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}})
	if _, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: jobA.Id}); err != nil {
		t.Fatal(err)
	}
	runA := waitSucceeded(t, c, jobA.Id, exA)
	if _, err := c.run.ReadRunLog(ctx, &carillonv1.ReadRunLogRequest{RunId: runA.Id}); err != nil {
		t.Errorf("read the log of a's run from a's executor: %v", err)
	}

	// b's executor has the global token; a's token reports none of its runs.
	release := make(chan struct{})
	defer close(release)
	exB := startExecutor(t, a.URL, "team-b", func(ex *sdk.Executor) {
		ex.HandleFunc("wait", func(ctx context.Context, job *sdk.Job) error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-release:
				return nil
			}
		})
	})
	waitAddresses(t, c, gb.Group.Id, exB)
	jobB := createJob(t, c, &carillonv1.Job{GroupId: gb.Group.Id, Description: "d", Handler: "wait", Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}})
	trig, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: jobB.Id})
	if err != nil {
		t.Fatal(err)
	}
	runB := trig.RunIds[0]
	forged := &carillonv1.ReportResultsRequest{Results: []*carillonv1.RunResult{
		{RunId: runB, Status: carillonv1.RunStatus_RUN_STATUS_FAILED, Message: "forged"},
	}}
	rep, err := registry(tokenA).ReportResults(ctx, forged)
	if err != nil {
		t.Fatal(err)
	}
	if o := rep.Outcomes[0]; o.Code != connect.CodePermissionDenied.String() {
		t.Errorf("a's token reporting b's run: outcome %v, want permission_denied", o)
	}
	r, err := c.run.GetRun(ctx, &carillonv1.GetRunRequest{Id: runB})
	if err != nil {
		t.Fatal(err)
	}
	if r.Run.Status == carillonv1.RunStatus_RUN_STATUS_FAILED {
		t.Errorf("b's run was settled by a forged result of a's token: %v", r.Run)
	}

	// Cleared: a's token is refused, the global token serves a again.
	if _, err := groups.ClearGroupToken(ctx, &carillonv1.ClearGroupTokenRequest{Id: ga.Group.Id}); err != nil {
		t.Fatal(err)
	}
	_, err = registry(tokenA).Register(ctx, &carillonv1.RegisterRequest{AppName: "team-a", Address: "http://127.0.0.1:1"})
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("Register with a's cleared token: %v, want unauthenticated", err)
	}
	if _, err := registry(token).Register(ctx, &carillonv1.RegisterRequest{AppName: "team-a", Address: "http://127.0.0.1:1"}); err != nil {
		t.Errorf("Register with the global token after a's was cleared: %v", err)
	}
}

// startExecutorToken starts a real SDK executor for app with its own
// access token and an "ok" handler.
func startExecutorToken(t *testing.T, adminURL, app, accessToken string) string {
	t.Helper()
	return admintest.StartExecutor(t, sdk.Config{AdminURLs: []string{adminURL}, AppName: app, AccessToken: accessToken})
}
