package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/crypto/bcrypt"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/carillonhq/carillon/admin/client"
	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// passwordOf is the password addUser gives a user.
func passwordOf(name string) string { return "password-of-" + name }

// addUser creates a user straight in the store, with passwordOf(name), and
// returns a new API token of theirs.
func addUser(t testing.TB, st *store.Store, name string, role auth.Role, groups ...int64) string {
	t.Helper()
	ctx := context.Background()
	hash, err := auth.HashPassword(passwordOf(name), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	u, err := st.Users.Create(ctx, store.User{Username: name, PasswordHash: hash, Role: role, Groups: groups}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	token, tokenHash := auth.NewAPIToken()
	if _, err := st.Auth.CreateToken(ctx, store.APIToken{UserID: u.ID, Name: "test", TokenHash: tokenHash}, time.Now()); err != nil {
		t.Fatal(err)
	}
	return token
}

// mgmt are the management clients of one credential.
type mgmt struct {
	group  carillonv1connect.GroupServiceClient
	job    carillonv1connect.JobServiceClient
	run    carillonv1connect.RunServiceClient
	report carillonv1connect.ReportServiceClient
	user   carillonv1connect.UserServiceClient
	flow   carillonv1connect.WorkflowServiceClient
	cal    carillonv1connect.CalendarServiceClient
	apply  carillonv1connect.ApplyServiceClient
}

func clientsOf(url, token string) mgmt {
	opts := []connect.ClientOption{client.WithToken(token)}
	return mgmt{
		group:  carillonv1connect.NewGroupServiceClient(http.DefaultClient, url, opts...),
		job:    carillonv1connect.NewJobServiceClient(http.DefaultClient, url, opts...),
		run:    carillonv1connect.NewRunServiceClient(http.DefaultClient, url, opts...),
		report: carillonv1connect.NewReportServiceClient(http.DefaultClient, url, opts...),
		user:   carillonv1connect.NewUserServiceClient(http.DefaultClient, url, opts...),
		flow:   carillonv1connect.NewWorkflowServiceClient(http.DefaultClient, url, opts...),
		cal:    carillonv1connect.NewCalendarServiceClient(http.DefaultClient, url, opts...),
		apply:  carillonv1connect.NewApplyServiceClient(http.DefaultClient, url, opts...),
	}
}

// fixture is a server with two groups, a job and a run in each, and one
// user per role: memberA may operate group A only, memberB group B only.
type fixture struct {
	*bundle
	groupA, groupB int64
	jobA, jobB     int64
	runA, runB     int64
	as             map[string]mgmt // by role name
	seq            atomic.Int64
}

var roleNames = []string{"admin", "memberA", "viewer", "memberB"}

func newFixture(t testing.TB, be dbtest.Backend) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{bundle: setup(t, be, "s3cret"), as: map[string]mgmt{}}
	admin := clientsOf(f.url, f.admin)
	f.as["admin"] = admin
	for i, app := range []string{"app-a", "app-b"} {
		g, err := admin.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: app}})
		if err != nil {
			t.Fatal(err)
		}
		j := f.newJob(t, g.Group.Id)
		res, err := admin.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: j})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			f.groupA, f.jobA, f.runA = g.Group.Id, j, res.RunIds[0]
		} else {
			f.groupB, f.jobB, f.runB = g.Group.Id, j, res.RunIds[0]
		}
	}
	f.as["memberA"] = clientsOf(f.url, addUser(t, f.store, "member-a", auth.RoleMember, f.groupA))
	f.as["memberB"] = clientsOf(f.url, addUser(t, f.store, "member-b", auth.RoleMember, f.groupB))
	f.as["viewer"] = clientsOf(f.url, addUser(t, f.store, "viewer", auth.RoleViewer))
	return f
}

// newJob creates a job in the group, as the ADMIN.
func (f *fixture) newJob(t testing.TB, group int64, children ...int64) int64 {
	t.Helper()
	res, err := clientsOf(f.url, f.admin).job.CreateJob(context.Background(), &carillonv1.CreateJobRequest{Job: &carillonv1.Job{
		GroupId: group, Description: "d", Handler: "h", ChildJobIds: children,
		Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Job.Id
}

// calendar creates a weekend calendar, as the ADMIN, and returns its id.
func (f *fixture) calendar(t testing.TB) int64 {
	t.Helper()
	res, err := clientsOf(f.url, f.admin).cal.CreateCalendar(context.Background(), &carillonv1.CreateCalendarRequest{Calendar: weekendCalendar(f.name("cal"))})
	if err != nil {
		t.Fatal(err)
	}
	return res.Calendar.Id
}

// weekendCalendar is a WEEKLY calendar excluding Saturday and Sunday in UTC.
func weekendCalendar(name string) *carillonv1.Calendar {
	return &carillonv1.Calendar{Name: name, Kind: carillonv1.CalendarKind_CALENDAR_KIND_WEEKLY, TimeZone: "UTC", ExcludedWeekdays: []string{"SAT", "SUN"}}
}

func (f *fixture) name(prefix string) string { return fmt.Sprintf("%s-%d", prefix, f.seq.Add(1)) }

// TestPermissionMatrix calls every management RPC (a test fails for an RPC
// without a row) as each role, on objects of group A, and checks who is
// refused with permission_denied: ADMIN may do everything, MEMBER of A
// operates A's jobs and runs, VIEWER only reads, and a MEMBER of B is
// refused A's jobs and runs. TestEveryRPCNeedsCredential calls them all
// without a credential.
func TestPermissionMatrix(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		f := newFixture(t, be)
		ctx := context.Background()
		adm := f.as["admin"]
		other := clientsOf(f.url, addUser(t, f.store, "other", auth.RoleViewer)) // owns tokens no role under test owns
		const (
			all       = "admin memberA viewer memberB"
			readA     = "admin memberA viewer"
			writeA    = "admin memberA"
			adminOnly = "admin"
		)
		tests := []struct {
			name    string
			allowed string
			call    func(t *testing.T, c mgmt) error
		}{
			{"GroupService.CreateGroup", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: f.name("g")}})
				return err
			}},
			{"GroupService.GetGroup", readA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: f.groupA})
				return err
			}},
			{"GroupService.ListGroups", all, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.group.ListGroups(ctx, &carillonv1.ListGroupsRequest{})
				return err
			}},
			{"GroupService.UpdateGroup", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.group.UpdateGroup(ctx, &carillonv1.UpdateGroupRequest{Group: &carillonv1.Group{Id: f.groupA, Title: f.name("t")},
					UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"title"}}})
				return err
			}},
			{"GroupService.RotateGroupToken", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.group.RotateGroupToken(ctx, &carillonv1.RotateGroupTokenRequest{Id: f.groupA})
				return err
			}},
			{"GroupService.ClearGroupToken", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.group.ClearGroupToken(ctx, &carillonv1.ClearGroupTokenRequest{Id: f.groupA})
				return err
			}},
			{"GroupService.PauseGroup", writeA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.group.PauseGroup(ctx, &carillonv1.PauseGroupRequest{Id: f.groupA})
				return err
			}},
			{"GroupService.ResumeGroup", writeA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.group.ResumeGroup(ctx, &carillonv1.ResumeGroupRequest{Id: f.groupA})
				return err
			}},
			{"GroupService.DeleteGroup", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				g, err := adm.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: f.name("del")}})
				if err != nil {
					t.Fatal(err)
				}
				_, err = c.group.DeleteGroup(ctx, &carillonv1.DeleteGroupRequest{Id: g.Group.Id})
				return err
			}},
			{"JobService.CreateJob", writeA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{GroupId: f.groupA, Description: "d", Handler: "h",
					Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}}})
				return err
			}},
			{"JobService.CreateJob/ChildInGroupB", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{GroupId: f.groupA, Description: "d", Handler: "h",
					ChildJobIds: []int64{f.jobB}, Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}}})
				return err
			}},
			{"JobService.ImportJobs", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.job.ImportJobs(ctx, &carillonv1.ImportJobsRequest{
					Groups: []*carillonv1.Group{{Id: 1, AppName: f.name("imp")}},
					Jobs: []*carillonv1.Job{{Id: 1, GroupId: 1, Description: "d", Handler: "h",
						Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}}},
				})
				return err
			}},
			{"ApplyService.Apply", writeA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.apply.Apply(ctx, &carillonv1.ApplyRequest{Jobs: []*carillonv1.ApplyJob{{Group: "app-a", Job: &carillonv1.Job{
					Name: f.name("j"), Description: "d", Handler: "h", Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}}}}})
				return err
			}},
			{"ApplyService.Apply/GroupChange", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.apply.Apply(ctx, &carillonv1.ApplyRequest{Groups: []*carillonv1.Group{{AppName: "app-a", Title: f.name("t")}}, DryRun: true})
				return err
			}},
			{"ApplyService.Export", all, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.apply.Export(ctx, &carillonv1.ExportRequest{})
				return err
			}},
			{"JobService.GetJob", readA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.job.GetJob(ctx, &carillonv1.GetJobRequest{Id: f.jobA})
				return err
			}},
			{"JobService.ListJobs/GroupA", readA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.job.ListJobs(ctx, &carillonv1.ListJobsRequest{GroupId: f.groupA})
				return err
			}},
			{"JobService.UpdateJob", writeA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.job.UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: &carillonv1.Job{Id: f.jobA, Param: f.name("p")},
					UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"param"}}})
				return err
			}},
			{"JobService.UpdateJob/MoveToGroupB", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				j := f.newJob(t, f.groupA)
				_, err := c.job.UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: &carillonv1.Job{Id: j, GroupId: f.groupB},
					UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"group_id"}}})
				return err
			}},
			{"JobService.DeleteJob", writeA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.job.DeleteJob(ctx, &carillonv1.DeleteJobRequest{Id: f.newJob(t, f.groupA)})
				return err
			}},
			{"JobService.StartJob", writeA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.job.StartJob(ctx, &carillonv1.StartJobRequest{Id: f.jobA})
				return err
			}},
			{"JobService.StopJob", writeA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.job.StopJob(ctx, &carillonv1.StopJobRequest{Id: f.jobA})
				return err
			}},
			{"JobService.StartJobs", writeA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.job.StartJobs(ctx, &carillonv1.StartJobsRequest{Ids: []int64{f.jobA}})
				return err
			}},
			{"JobService.StopJobs", writeA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.job.StopJobs(ctx, &carillonv1.StopJobsRequest{Ids: []int64{f.jobA}})
				return err
			}},
			{"JobService.TriggerJob", writeA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: f.jobA})
				return err
			}},
			{"JobService.BackfillJob", writeA, func(t *testing.T, c mgmt) error {
				t.Helper()
				from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				_, err := c.job.BackfillJob(ctx, &carillonv1.BackfillJobRequest{JobId: f.jobA, From: timestamppb.New(from),
					To: timestamppb.New(from.Add(time.Hour)), DryRun: true})
				if connect.CodeOf(err) == connect.CodeInvalidArgument && strings.Contains(err.Error(), "has a NONE schedule") {
					return nil // past the permission check: the handler refused the job's schedule
				}
				return err
			}},
			{"JobService.PreviewSchedule", all, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.job.PreviewSchedule(ctx, &carillonv1.PreviewScheduleRequest{
					Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 5}})
				return err
			}},
			{"RunService.ListRuns/GroupA", readA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.run.ListRuns(ctx, &carillonv1.ListRunsRequest{GroupId: f.groupA})
				return err
			}},
			{"RunService.ListRuns/JobA", readA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.run.ListRuns(ctx, &carillonv1.ListRunsRequest{JobId: f.jobA})
				return err
			}},
			{"RunService.GetRun", readA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.run.GetRun(ctx, &carillonv1.GetRunRequest{Id: f.runA})
				return err
			}},
			{"RunService.ReadRunLog", readA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.run.ReadRunLog(ctx, &carillonv1.ReadRunLogRequest{RunId: f.runA})
				return err
			}},
			{"RunService.KillRun", writeA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.run.KillRun(ctx, &carillonv1.KillRunRequest{RunId: f.runA})
				return err
			}},
			{"RunService.DeleteRuns/GroupA", writeA, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.run.DeleteRuns(ctx, &carillonv1.DeleteRunsRequest{GroupId: f.groupA, KeepLast: 1000})
				return err
			}},
			{"RunService.DeleteRuns/EveryGroup", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.run.DeleteRuns(ctx, &carillonv1.DeleteRunsRequest{KeepLast: 1000})
				return err
			}},
			{"ReportService.GetDashboard", all, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.report.GetDashboard(ctx, &carillonv1.GetDashboardRequest{})
				return err
			}},
			{"UserService.GetCurrentUser", all, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.user.GetCurrentUser(ctx, &carillonv1.GetCurrentUserRequest{})
				return err
			}},
			{"UserService.ChangePassword", all, func(t *testing.T, c mgmt) error {
				t.Helper()
				me, err := c.user.GetCurrentUser(ctx, &carillonv1.GetCurrentUserRequest{})
				if err != nil {
					t.Fatal(err)
				}
				// A wrong old password: the call reaches the handler, and the
				// role's API token is not revoked by a real change.
				pw := passwordOf(me.User.Username)
				_, err = c.user.ChangePassword(ctx, &carillonv1.ChangePasswordRequest{OldPassword: pw + "x", NewPassword: pw})
				if connect.CodeOf(err) == connect.CodeInvalidArgument {
					return nil
				}
				return err
			}},
			{"UserService.Logout", all, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.user.Logout(ctx, &carillonv1.LogoutRequest{})
				if connect.CodeOf(err) == connect.CodeFailedPrecondition {
					return nil // an API token is not a session: allowed, and told so
				}
				return err
			}},
			{"UserService.CreateUser", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.user.CreateUser(ctx, &carillonv1.CreateUserRequest{
					User: &carillonv1.User{Username: f.name("user"), Role: carillonv1.Role_ROLE_VIEWER}, Password: "long enough"})
				return err
			}},
			{"UserService.GetUser", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.user.GetUser(ctx, &carillonv1.GetUserRequest{Id: 1})
				return err
			}},
			{"UserService.UnlockUser", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.user.UnlockUser(ctx, &carillonv1.UnlockUserRequest{Id: 1})
				return err
			}},
			{"UserService.ListUsers", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.user.ListUsers(ctx, &carillonv1.ListUsersRequest{})
				return err
			}},
			{"UserService.UpdateUser", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				u, err := adm.user.CreateUser(ctx, &carillonv1.CreateUserRequest{
					User: &carillonv1.User{Username: f.name("upd"), Role: carillonv1.Role_ROLE_VIEWER}, Password: "long enough"})
				if err != nil {
					t.Fatal(err)
				}
				_, err = c.user.UpdateUser(ctx, &carillonv1.UpdateUserRequest{User: &carillonv1.User{Id: u.User.Id, Role: carillonv1.Role_ROLE_ADMIN},
					UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"role"}}})
				return err
			}},
			{"UserService.DeleteUser", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				u, err := adm.user.CreateUser(ctx, &carillonv1.CreateUserRequest{
					User: &carillonv1.User{Username: f.name("del"), Role: carillonv1.Role_ROLE_VIEWER}, Password: "long enough"})
				if err != nil {
					t.Fatal(err)
				}
				_, err = c.user.DeleteUser(ctx, &carillonv1.DeleteUserRequest{Id: u.User.Id})
				return err
			}},
			{"UserService.CreateApiToken", all, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.user.CreateApiToken(ctx, &carillonv1.CreateApiTokenRequest{Name: f.name("tok")})
				return err
			}},
			{"UserService.ListApiTokens/Own", all, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.user.ListApiTokens(ctx, &carillonv1.ListApiTokensRequest{})
				return err
			}},
			{"UserService.ListApiTokens/AllUsers", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.user.ListApiTokens(ctx, &carillonv1.ListApiTokensRequest{AllUsers: true})
				return err
			}},
			{"UserService.RevokeApiToken/Own", all, func(t *testing.T, c mgmt) error {
				t.Helper()
				tok, err := c.user.CreateApiToken(ctx, &carillonv1.CreateApiTokenRequest{Name: f.name("own")})
				if err != nil {
					t.Fatal(err)
				}
				_, err = c.user.RevokeApiToken(ctx, &carillonv1.RevokeApiTokenRequest{Id: tok.ApiToken.Id})
				return err
			}},
			{"UserService.RevokeApiToken/Others", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				tok, err := other.user.CreateApiToken(ctx, &carillonv1.CreateApiTokenRequest{Name: f.name("theirs")})
				if err != nil {
					t.Fatal(err)
				}
				_, err = c.user.RevokeApiToken(ctx, &carillonv1.RevokeApiTokenRequest{Id: tok.ApiToken.Id})
				return err
			}},
			{"UserService.ListAuditLog", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.user.ListAuditLog(ctx, &carillonv1.ListAuditLogRequest{})
				return err
			}},
			{"UserService.GetExecutorToken", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.user.GetExecutorToken(ctx, &carillonv1.GetExecutorTokenRequest{})
				return err
			}},
			{"CalendarService.CreateCalendar", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.cal.CreateCalendar(ctx, &carillonv1.CreateCalendarRequest{Calendar: weekendCalendar(f.name("cal"))})
				return err
			}},
			{"CalendarService.GetCalendar", all, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.cal.GetCalendar(ctx, &carillonv1.GetCalendarRequest{Id: f.calendar(t)})
				return err
			}},
			{"CalendarService.ListCalendars", all, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.cal.ListCalendars(ctx, &carillonv1.ListCalendarsRequest{})
				return err
			}},
			{"CalendarService.UpdateCalendar", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.cal.UpdateCalendar(ctx, &carillonv1.UpdateCalendarRequest{Calendar: &carillonv1.Calendar{Id: f.calendar(t), Description: f.name("d")},
					UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"description"}}})
				return err
			}},
			{"CalendarService.DeleteCalendar", adminOnly, func(t *testing.T, c mgmt) error {
				t.Helper()
				_, err := c.cal.DeleteCalendar(ctx, &carillonv1.DeleteCalendarRequest{Id: f.calendar(t)})
				return err
			}},
		}
		// Every RPC of every management service has a row: a new RPC without
		// one fails here, by name.
		rows := map[string]bool{}
		for _, tt := range tests {
			rows[strings.SplitN(tt.name, "/", 2)[0]] = true
		}
		for _, svc := range []string{carillonv1connect.GroupServiceName, carillonv1connect.JobServiceName, carillonv1connect.RunServiceName,
			carillonv1connect.ReportServiceName, carillonv1connect.UserServiceName, carillonv1connect.CalendarServiceName} {
			for _, m := range methodsOf(t, svc) {
				name := strings.TrimPrefix(svc, "carillon.v1.") + "." + m
				if !rows[name] && name != "UserService.Login" { // Login needs no credential: TestLogin*
					t.Errorf("no permission row for %s", name)
				}
			}
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				for _, role := range roleNames {
					err := tt.call(t, f.as[role])
					allowed := strings.Contains(" "+tt.allowed+" ", " "+role+" ")
					switch code := connect.CodeOf(err); {
					case !allowed && code != connect.CodePermissionDenied:
						t.Errorf("%s: got %v, want permission_denied", role, err)
					case allowed && (code == connect.CodePermissionDenied || code == connect.CodeUnauthenticated):
						t.Errorf("%s: refused: %v", role, err)
					case allowed && err != nil && code != connect.CodeFailedPrecondition:
						t.Errorf("%s: %v", role, err)
					}
				}
			})
		}
	})
}

// TestEveryRPCNeedsCredential calls every RPC of every management service,
// found from the protobuf descriptors, without a credential, with the
// executor token, and with a made-up token: each is unauthenticated, but
// Login, which takes none.
func TestEveryRPCNeedsCredential(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		b := setup(t, be, "s3cret")
		services := []string{
			carillonv1connect.GroupServiceName, carillonv1connect.JobServiceName, carillonv1connect.RunServiceName,
			carillonv1connect.ReportServiceName, carillonv1connect.UserServiceName, carillonv1connect.CalendarServiceName,
		}
		n := 0
		for _, svc := range services {
			for _, method := range methodsOf(t, svc) {
				if svc == carillonv1connect.UserServiceName && method == "Login" {
					continue
				}
				n++
				for name, header := range map[string]string{
					"None": "", "ExecutorToken": "Bearer s3cret", "MadeUp": "Bearer carillon_t_madeup", "Basic": "Basic cm9vdDpyb290",
				} {
					status, body := postJSON(t, b.url, "/"+svc+"/"+method, "{}", header)
					if status != http.StatusUnauthorized || !strings.Contains(body, `"unauthenticated"`) {
						t.Errorf("%s/%s with %s credential: %d %s, want 401 unauthenticated", svc, method, name, status, body)
					}
				}
			}
		}
		if n < 30 {
			t.Errorf("checked only %d RPCs", n)
		}
		// Health and reflection stay open.
		status, body := postJSON(t, b.url, "/grpc.health.v1.Health/Check", "{}", "")
		if status != http.StatusOK {
			t.Errorf("health check: %d %s", status, body)
		}
	})
}

func TestLogin(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "")
		anon := clientsOf(b.url, "")
		if _, err := anon.user.Login(ctx, &carillonv1.LoginRequest{Username: "root", Password: "wrong password"}); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Fatalf("wrong password: %v, want unauthenticated", err)
		}
		_, errUnknown := anon.user.Login(ctx, &carillonv1.LoginRequest{Username: "nobody", Password: "wrong password"})
		var ce1, ce2 *connect.Error
		_, errWrong := anon.user.Login(ctx, &carillonv1.LoginRequest{Username: "ROOT", Password: "wrong password"})
		if !errors.As(errUnknown, &ce1) || !errors.As(errWrong, &ce2) || ce1.Message() != ce2.Message() || ce1.Code() != connect.CodeUnauthenticated {
			t.Errorf("unknown user and wrong password answer differently: %v / %v", errUnknown, errWrong)
		}
		// The limiter allows 3 attempts per username per minute (setup): root
		// has spent 2; the 3rd passes, the 4th is refused even with the right
		// password, and a minute later it passes again.
		res, err := anon.user.Login(ctx, &carillonv1.LoginRequest{Username: "root", Password: passwordOf("root")})
		if err != nil {
			t.Fatalf("right password: %v", err)
		}
		if !strings.HasPrefix(res.Token, auth.SessionPrefix) || res.User.Username != "root" || res.User.Role != carillonv1.Role_ROLE_ADMIN ||
			!res.ExpiresAt.AsTime().Equal(b.clock.Now().Add(24*time.Hour)) {
			t.Errorf("login: %v", res)
		}
		if _, err := anon.user.Login(ctx, &carillonv1.LoginRequest{Username: "root", Password: passwordOf("root")}); connect.CodeOf(err) != connect.CodeResourceExhausted {
			t.Errorf("4th attempt in a minute: %v, want resource_exhausted", err)
		}
		b.clock.Add(time.Minute)
		if _, err := anon.user.Login(ctx, &carillonv1.LoginRequest{Username: "root", Password: passwordOf("root")}); err != nil {
			t.Errorf("a minute later: %v", err)
		}

		// The session works until it expires, and Logout ends it.
		session := clientsOf(b.url, res.Token)
		if me, err := session.user.GetCurrentUser(ctx, &carillonv1.GetCurrentUserRequest{}); err != nil || me.User.Username != "root" {
			t.Fatalf("GetCurrentUser with the session: %v, %v", me, err)
		}
		b.clock.Add(24 * time.Hour)
		if _, err := session.user.GetCurrentUser(ctx, &carillonv1.GetCurrentUserRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Errorf("expired session: %v, want unauthenticated", err)
		}
		res, err = anon.user.Login(ctx, &carillonv1.LoginRequest{Username: "root", Password: passwordOf("root")})
		if err != nil {
			t.Fatal(err)
		}
		session = clientsOf(b.url, res.Token)
		if _, err := session.user.Logout(ctx, &carillonv1.LogoutRequest{}); err != nil {
			t.Fatal(err)
		}
		if _, err := session.user.GetCurrentUser(ctx, &carillonv1.GetCurrentUserRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Errorf("after logout: %v, want unauthenticated", err)
		}
	})
}

// TestUsersAndTokens covers the user lifecycle: roles take effect at once,
// a disabled user's tokens stop working, the last ADMIN stays, a revoked
// token stops working, and no list shows a secret.
func TestUsersAndTokens(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		f := newFixture(t, be)
		adm := f.as["admin"]
		created, err := adm.user.CreateUser(ctx, &carillonv1.CreateUserRequest{
			User: &carillonv1.User{Username: "ops", Role: carillonv1.Role_ROLE_VIEWER}, Password: "ops password"})
		if err != nil {
			t.Fatal(err)
		}
		login, err := clientsOf(f.url, "").user.Login(ctx, &carillonv1.LoginRequest{Username: "ops", Password: "ops password"})
		if err != nil {
			t.Fatal(err)
		}
		ops := clientsOf(f.url, login.Token)
		tok, err := ops.user.CreateApiToken(ctx, &carillonv1.CreateApiTokenRequest{Name: "ci", ExpiresInSeconds: 3600})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(tok.Token, auth.APITokenPrefix) || !tok.ApiToken.ExpiresAt.AsTime().Equal(f.clock.Now().Add(time.Hour)) {
			t.Errorf("CreateApiToken: %v", tok)
		}
		if _, err := ops.user.CreateApiToken(ctx, &carillonv1.CreateApiTokenRequest{Name: "ci"}); connect.CodeOf(err) != connect.CodeAlreadyExists {
			t.Errorf("second token named ci: %v, want already_exists", err)
		}
		ci := clientsOf(f.url, tok.Token)
		if _, err := ci.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: f.jobA}); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Errorf("viewer's token triggers: %v, want permission_denied", err)
		}
		// Made a MEMBER of A: the same token may trigger A's job at once.
		if _, err := adm.user.UpdateUser(ctx, &carillonv1.UpdateUserRequest{
			User:       &carillonv1.User{Id: created.User.Id, Role: carillonv1.Role_ROLE_MEMBER, GroupIds: []int64{f.groupA}},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"role", "group_ids"}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := ci.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: f.jobA}); err != nil {
			t.Errorf("member's token triggers its group's job: %v", err)
		}
		// Grants are for MEMBERs only.
		if _, err := adm.user.UpdateUser(ctx, &carillonv1.UpdateUserRequest{User: &carillonv1.User{Id: created.User.Id, Role: carillonv1.Role_ROLE_VIEWER},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"role"}}}); connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("viewer with grants: %v, want invalid_argument", err)
		}
		// Tokens expire.
		f.clock.Add(time.Hour)
		if _, err := ci.user.GetCurrentUser(ctx, &carillonv1.GetCurrentUserRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Errorf("expired API token: %v, want unauthenticated", err)
		}
		// Disabled: the session stops working.
		if _, err := adm.user.UpdateUser(ctx, &carillonv1.UpdateUserRequest{User: &carillonv1.User{Id: created.User.Id, Disabled: true},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"disabled"}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := ops.user.GetCurrentUser(ctx, &carillonv1.GetCurrentUserRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Errorf("disabled user's session: %v, want unauthenticated", err)
		}
		// The last ADMIN stays; an ADMIN does not delete themselves.
		me, err := adm.user.GetCurrentUser(ctx, &carillonv1.GetCurrentUserRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := adm.user.UpdateUser(ctx, &carillonv1.UpdateUserRequest{User: &carillonv1.User{Id: me.User.Id, Role: carillonv1.Role_ROLE_VIEWER},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"role"}}}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Errorf("demote the last admin: %v, want failed_precondition", err)
		}
		if _, err := adm.user.DeleteUser(ctx, &carillonv1.DeleteUserRequest{Id: me.User.Id}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Errorf("delete yourself: %v, want failed_precondition", err)
		}
		// No list carries a secret.
		list, err := adm.user.ListApiTokens(ctx, &carillonv1.ListApiTokensRequest{AllUsers: true})
		if err != nil {
			t.Fatal(err)
		}
		users, err := adm.user.ListUsers(ctx, &carillonv1.ListUsersRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{list.String(), users.String()} {
			if strings.Contains(s, auth.APITokenPrefix) || strings.Contains(s, tok.Token) || strings.Contains(s, "$2a$") {
				t.Errorf("a list shows a secret: %s", s)
			}
		}
		// Revoked: gone.
		mine, err := adm.user.CreateApiToken(ctx, &carillonv1.CreateApiTokenRequest{Name: "short-lived"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := adm.user.RevokeApiToken(ctx, &carillonv1.RevokeApiTokenRequest{Id: mine.ApiToken.Id}); err != nil {
			t.Fatal(err)
		}
		if _, err := clientsOf(f.url, mine.Token).user.GetCurrentUser(ctx, &carillonv1.GetCurrentUserRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Errorf("revoked token: %v, want unauthenticated", err)
		}
	})
}

// TestMemberLists checks that a MEMBER's lists show only their groups'
// groups, jobs and runs, with exact paging across several granted groups.
func TestMemberLists(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		f := newFixture(t, be)
		adm := f.as["admin"]
		gc, err := adm.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "app-c"}})
		if err != nil {
			t.Fatal(err)
		}
		groupC := gc.Group.Id
		want := []int64{f.jobA}
		for range 3 {
			want = append(want, f.newJob(t, groupC), f.newJob(t, f.groupA))
			f.newJob(t, f.groupB)
		}
		m := clientsOf(f.url, addUser(t, f.store, "member-ac", auth.RoleMember, f.groupA, groupC))
		var got []int64
		token := ""
		for pages := 0; ; pages++ {
			if pages > 4 {
				t.Fatal("more than 4 pages of 2 for 7 jobs")
			}
			res, err := m.job.ListJobs(ctx, &carillonv1.ListJobsRequest{PageSize: 2, PageToken: token})
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range res.Jobs {
				got = append(got, j.Id)
			}
			if token = res.NextPageToken; token == "" {
				break
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(sortedCopy(want)) {
			t.Errorf("member's jobs, paged: %v, want %v", got, sortedCopy(want))
		}
		groups, err := m.group.ListGroups(ctx, &carillonv1.ListGroupsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(groups.Groups) != 2 || groups.Groups[0].Id == f.groupB || groups.Groups[1].Id == f.groupB {
			t.Errorf("member's groups: %v", groups.Groups)
		}
		runs, err := f.as["memberA"].run.ListRuns(ctx, &carillonv1.ListRunsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs.Runs) != 1 || runs.Runs[0].Id != f.runA {
			t.Errorf("member A's runs: %v, want only run %d", runs.Runs, f.runA)
		}
		if res, err := f.as["memberB"].run.ListRuns(ctx, &carillonv1.ListRunsRequest{JobId: f.jobA}); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Errorf("member B lists job A's runs: %v, %v; want permission_denied", res, err)
		}
		nobody := clientsOf(f.url, addUser(t, f.store, "member-none", auth.RoleMember))
		if res, err := nobody.job.ListJobs(ctx, &carillonv1.ListJobsRequest{}); err != nil || len(res.Jobs) != 0 {
			t.Errorf("member without groups lists %v, %v; want nothing", res, err)
		}
	})
}

func sortedCopy(ids []int64) []int64 {
	out := append([]int64(nil), ids...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestAuditLog checks that changes are recorded with who, what and when,
// without secrets, and that only an ADMIN reads them.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		f := newFixture(t, be)
		if _, err := f.as["memberA"].job.UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: &carillonv1.Job{Id: f.jobA, Param: "audited"},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"param"}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.as["admin"].user.CreateUser(ctx, &carillonv1.CreateUserRequest{
			User: &carillonv1.User{Username: "newbie", Role: carillonv1.Role_ROLE_VIEWER}, Password: "secret-password-1"}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.as["memberA"].job.GetJob(ctx, &carillonv1.GetJobRequest{Id: f.jobA}); err != nil {
			t.Fatal(err)
		}
		res, err := f.as["admin"].user.ListAuditLog(ctx, &carillonv1.ListAuditLogRequest{})
		if err != nil {
			t.Fatal(err)
		}
		e := res.Entries
		if len(e) < 2 || e[0].Action != "UserService.CreateUser" || e[0].Username != "root" || e[0].Target != "user 5" ||
			e[1].Action != "JobService.UpdateJob" || e[1].Username != "member-a" || e[1].Target != fmt.Sprintf("job %d", f.jobA) ||
			!e[1].Time.AsTime().Equal(f.clock.Now().Truncate(time.Millisecond)) || !strings.Contains(e[1].Detail, "audited") {
			t.Fatalf("audit log, newest first: %v", e)
		}
		if strings.Contains(res.String(), "secret-password-1") {
			t.Error("the audit log holds a password")
		}
		for _, x := range e {
			if x.Action == "JobService.GetJob" {
				t.Error("a read was audited")
			}
		}
	})
}
