package admin_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
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

const (
	token         = "e2e-secret"
	adminPassword = "e2e admin password"
)

// credentials holds, by admin URL, the session token startAdmin logged in
// with as the first ADMIN; newClients sends it.
var credentials sync.Map

// testAdmin is a real admin on a real SQLite file, served on loopback.
type testAdmin = admintest.Admin

// startAdmin starts an admin and stops it when the test ends.
func startAdmin(t *testing.T) *testAdmin {
	t.Helper()
	return startAdminWith(t, admin.Config{}, http.DefaultClient)
}

// startAdminWith starts an admin with cfg (admintest.Start), its token and
// first ADMIN's password those of these tests, and logs in through client
// as that ADMIN (newClients sends the session).
func startAdminWith(t *testing.T, cfg admin.Config, client *http.Client) *testAdmin {
	t.Helper()
	cfg.Token, cfg.AdminPassword = token, adminPassword
	a := admintest.Start(t, cfg)
	credentials.Store(a.URL, a.Login(t, client, admin.FirstAdminUsername, adminPassword))
	return a
}

// startExecutor starts a real SDK executor for app (admintest.StartExecutor:
// an "ok" handler that succeeds and a "fail" handler that fails with
// "boom: <param>"); setup, if given, registers more.
func startExecutor(t *testing.T, adminURL, app string, setup ...func(*sdk.Executor)) string {
	t.Helper()
	return admintest.StartExecutor(t, sdk.Config{AdminURLs: []string{adminURL}, AppName: app, AccessToken: token}, setup...)
}

// clients are the management clients of one protocol.
type clients struct {
	url   string // the admin's
	group carillonv1connect.GroupServiceClient
	job   carillonv1connect.JobServiceClient
	run   carillonv1connect.RunServiceClient
}

func newClients(url string, httpClient *http.Client, opts ...connect.ClientOption) clients {
	if tok, ok := credentials.Load(url); ok {
		opts = append(opts, client.WithToken(tok.(string)))
	}
	return clients{
		url:   url,
		group: carillonv1connect.NewGroupServiceClient(httpClient, url, opts...),
		job:   carillonv1connect.NewJobServiceClient(httpClient, url, opts...),
		run:   carillonv1connect.NewRunServiceClient(httpClient, url, opts...),
	}
}

// h2cClient speaks cleartext HTTP/2 only, as gRPC clients do.
func h2cClient() *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: p, TLSClientConfig: &tls.Config{}}}
}

// eventually waits until cond, what the admin at url shows through its
// API, returns nil: checked after each write the admin commits
// (admintest.Admin.Eventually), failing with cond's last error after
// timeout.
func eventually(t *testing.T, url string, timeout time.Duration, cond func() error) {
	t.Helper()
	a := admintest.At(url)
	if a == nil {
		t.Fatalf("no admin of admintest.Start at %s to wait on", url)
	}
	a.Eventually(t, timeout, cond)
}

// TestEndToEnd drives a real admin and a real SDK executor through the
// management API over each protocol: jobs on a one-second cron fire and
// succeed, a failing handler's run fails with its message, and a stopped
// job fires no more.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	protocols := map[string]func(url string) clients{
		"ConnectProto": func(url string) clients { return newClients(url, http.DefaultClient) },
		"ConnectJSON":  func(url string) clients { return newClients(url, http.DefaultClient, connect.WithProtoJSON()) },
		"GRPC":         func(url string) clients { return newClients(url, h2cClient(), connect.WithGRPC()) },
		"GRPCWeb":      func(url string) clients { return newClients(url, http.DefaultClient, connect.WithGRPCWeb()) },
	}
	for name, newC := range protocols {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			a := startAdmin(t)
			c := newC(a.URL)
			addr := startExecutor(t, a.URL, "e2e")

			g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "e2e"}})
			if err != nil {
				t.Fatal(err)
			}
			eventually(t, a.URL, 10*time.Second, func() error {
				res, err := c.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: g.Group.Id})
				if err != nil {
					return err
				}
				if len(res.Group.Addresses) != 1 || res.Group.Addresses[0] != addr {
					return fmt.Errorf("group addresses %v, want [%s]", res.Group.Addresses, addr)
				}
				return nil
			})

			every := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "*/1 * * * * ?"}
			okJob := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "ok", Schedule: every, Handler: "ok",
				RouteStrategy: carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN, Enabled: true})
			failJob := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "fail", Schedule: every, Handler: "fail",
				Param: "on purpose", Enabled: true})

			eventually(t, a.URL, 20*time.Second, func() error {
				runs := listRuns(t, c, okJob.Id)
				succeeded := 0
				for _, r := range runs {
					switch r.Status {
					case carillonv1.RunStatus_RUN_STATUS_SUCCEEDED:
						succeeded++
						if r.ExecutorAddress != addr || r.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE {
							return fmt.Errorf("run %d: executor %q trigger %s", r.Id, r.ExecutorAddress, r.TriggerType)
						}
					case carillonv1.RunStatus_RUN_STATUS_FAILED:
						t.Fatalf("ok job run %d failed: %s", r.Id, r.Message)
					}
				}
				if succeeded < 3 {
					return fmt.Errorf("%d succeeded runs, want at least 3", succeeded)
				}
				return nil
			})
			// The run's log, fetched by the admin from the executor.
			var okRun *carillonv1.Run
			for _, r := range listRuns(t, c, okJob.Id) {
				if r.Status == carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
					okRun = r
				}
			}
			page, err := c.run.ReadRunLog(ctx, &carillonv1.ReadRunLogRequest{RunId: okRun.Id, FromLine: 1})
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("ok run %d", okRun.Id); !strings.Contains(page.Content, want) || !page.End {
				t.Errorf("run log = %q (end %v), want it to contain %q and end", page.Content, page.End, want)
			}

			eventually(t, a.URL, 10*time.Second, func() error {
				for _, r := range listRuns(t, c, failJob.Id) {
					if r.Status == carillonv1.RunStatus_RUN_STATUS_FAILED {
						if r.Message != "boom: on purpose" {
							t.Fatalf("failed run message = %q, want %q", r.Message, "boom: on purpose")
						}
						return nil
					}
				}
				return errors.New("no FAILED run of the failing job yet")
			})

			// Stop means stop: after StopJob returns, no new run appears.
			for _, j := range []*carillonv1.Job{okJob, failJob} {
				if _, err := c.job.StopJob(ctx, &carillonv1.StopJobRequest{Id: j.Id}); err != nil {
					t.Fatal(err)
				}
			}
			before := len(listRuns(t, c, okJob.Id))
			// A canary made after the stop: once it has succeeded three
			// times, the scheduler has passed instants the stopped jobs
			// would have fired on.
			canary := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "canary", Schedule: every, Handler: "ok", Enabled: true})
			eventually(t, a.URL, 20*time.Second, func() error {
				succeeded := 0
				for _, r := range listRuns(t, c, canary.Id) {
					if r.Status == carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
						succeeded++
					}
				}
				if succeeded < 3 {
					return fmt.Errorf("canary job: %d succeeded runs, want 3", succeeded)
				}
				return nil
			})
			if after := len(listRuns(t, c, okJob.Id)); after != before {
				t.Errorf("stopped job: runs went from %d to %d", before, after)
			}
			for _, r := range listRuns(t, c, okJob.Id) {
				if r.Status == carillonv1.RunStatus_RUN_STATUS_PENDING {
					t.Errorf("stopped job still has pending run %d", r.Id)
				}
			}
		})
	}
}

func createJob(t *testing.T, c clients, j *carillonv1.Job) *carillonv1.Job {
	t.Helper()
	res, err := c.job.CreateJob(context.Background(), &carillonv1.CreateJobRequest{Job: j})
	if err != nil {
		t.Fatal(err)
	}
	return res.Job
}

func listRuns(t *testing.T, c clients, jobID int64) []*carillonv1.Run {
	t.Helper()
	res, err := c.run.ListRuns(context.Background(), &carillonv1.ListRunsRequest{JobId: jobID, PageSize: 500})
	if err != nil {
		t.Fatal(err)
	}
	return res.Runs
}

// TestInvalidJob checks that bad input is invalid_argument naming the field,
// and stores nothing.
func TestInvalidJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmin(t)
	c := newClients(a.URL, http.DefaultClient)
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "bad-input"}})
	if err != nil {
		t.Fatal(err)
	}
	valid := func() *carillonv1.Job {
		return &carillonv1.Job{GroupId: g.Group.Id, Description: "d", Handler: "h", Enabled: true,
			Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "*/5 * * * * ?"}}
	}
	tests := []struct {
		name  string
		edit  func(j *carillonv1.Job)
		field string
	}{
		{"UnknownGroup", func(j *carillonv1.Job) { j.GroupId = 12345 }, "job.group_id"},
		{"MissingGroup", func(j *carillonv1.Job) { j.GroupId = 0 }, "job.group_id"},
		{"EmptyHandler", func(j *carillonv1.Job) { j.Handler = "" }, "job.handler"},
		{"UnparsableCron", func(j *carillonv1.Job) { j.Schedule.Cron = "every minute" }, "job.schedule.cron"},
		{"BadTimeZone", func(j *carillonv1.Job) { j.Schedule.TimeZone = "Mars/Olympus" }, "job.schedule.time_zone"},
		{"NoSchedule", func(j *carillonv1.Job) { j.Schedule = nil }, "job.schedule"},
		{"ZeroInterval", func(j *carillonv1.Job) {
			j.Schedule = &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE}
		}, "job.schedule.interval_seconds"},
		{"UnknownRoute", func(j *carillonv1.Job) { j.RouteStrategy = 99 }, "job.route_strategy"},
		{"MissingChild", func(j *carillonv1.Job) { j.ChildJobIds = []int64{777} }, "job.child_job_ids[0]"},
		{"NegativeTimeout", func(j *carillonv1.Job) { j.TimeoutSeconds = -1 }, "job.timeout_seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := valid()
			tt.edit(j)
			_, err := c.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: j})
			if connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Fatalf("CreateJob: got %v, want invalid_argument", err)
			}
			var ce *connect.Error
			if errors.As(err, &ce) && !strings.HasPrefix(ce.Message(), tt.field+": ") {
				t.Errorf("message %q does not start with the field %q", ce.Message(), tt.field)
			}
		})
	}
	res, err := c.job.ListJobs(ctx, &carillonv1.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Jobs) != 0 {
		t.Errorf("invalid requests stored %d jobs", len(res.Jobs))
	}
}
