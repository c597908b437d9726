package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/carillonhq/carillon/admin/client"
	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// login logs name in with passwordOf(name) and returns the session token.
func login(t *testing.T, url, name, password string) string {
	t.Helper()
	res, err := carillonv1connect.NewUserServiceClient(http.DefaultClient, url).Login(context.Background(),
		&carillonv1.LoginRequest{Username: name, Password: password})
	if err != nil {
		t.Fatalf("login %s: %v", name, err)
	}
	return res.Token
}

// works reports whether a credential is taken by the management API.
func works(t *testing.T, url, token string) bool {
	t.Helper()
	_, err := clientsOf(url, token).user.GetCurrentUser(context.Background(), &carillonv1.GetCurrentUserRequest{})
	if err != nil && connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatal(err)
	}
	return err == nil
}

// TestPasswordChangeRevokesTokens checks that a user's own password change
// and an ADMIN's reset end the user's sessions (but the one that changed
// it) and revoke its API tokens.
func TestPasswordChangeRevokesTokens(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "s3cret")
		apiToken := addUser(t, b.store, "ada", auth.RoleViewer)
		session := login(t, b.url, "ada", passwordOf("ada"))
		other := login(t, b.url, "ada", passwordOf("ada"))
		if _, err := clientsOf(b.url, session).user.ChangePassword(ctx, &carillonv1.ChangePasswordRequest{
			OldPassword: passwordOf("ada"), NewPassword: "a new password"}); err != nil {
			t.Fatal(err)
		}
		if works(t, b.url, apiToken) || works(t, b.url, other) || !works(t, b.url, session) {
			t.Errorf("after ChangePassword: API token works %v, other session works %v, own session works %v; want false, false, true",
				works(t, b.url, apiToken), works(t, b.url, other), works(t, b.url, session))
		}

		apiToken2, err := clientsOf(b.url, session).user.CreateApiToken(ctx, &carillonv1.CreateApiTokenRequest{Name: "second"})
		if err != nil {
			t.Fatal(err)
		}
		me, err := clientsOf(b.url, session).user.GetCurrentUser(ctx, &carillonv1.GetCurrentUserRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := clientsOf(b.url, b.admin).user.UpdateUser(ctx, &carillonv1.UpdateUserRequest{
			User: &carillonv1.User{Id: me.User.Id}, Password: "reset by an admin", UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"disabled"}}}); err != nil {
			t.Fatal(err)
		}
		if works(t, b.url, apiToken2.Token) || works(t, b.url, session) {
			t.Errorf("after an ADMIN's reset: API token works %v, session works %v; want neither",
				works(t, b.url, apiToken2.Token), works(t, b.url, session))
		}
	})
}

// TestDisableEndsCredentials checks that disabling a user ends its sessions
// and API tokens for good: enabling it again revives neither.
func TestDisableEndsCredentials(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "s3cret")
		apiToken := addUser(t, b.store, "ada", auth.RoleViewer)
		session := login(t, b.url, "ada", passwordOf("ada"))
		me, err := clientsOf(b.url, session).user.GetCurrentUser(ctx, &carillonv1.GetCurrentUserRequest{})
		if err != nil {
			t.Fatal(err)
		}
		admin := clientsOf(b.url, b.admin)
		for _, disabled := range []bool{true, false} {
			if _, err := admin.user.UpdateUser(ctx, &carillonv1.UpdateUserRequest{User: &carillonv1.User{Id: me.User.Id, Disabled: disabled},
				UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"disabled"}}}); err != nil {
				t.Fatal(err)
			}
		}
		if works(t, b.url, apiToken) || works(t, b.url, session) {
			t.Errorf("after disable and enable: API token works %v, session works %v; want neither", works(t, b.url, apiToken), works(t, b.url, session))
		}
		if !works(t, b.url, login(t, b.url, "ada", passwordOf("ada"))) {
			t.Error("a new login after enabling does not work")
		}
	})
}

// TestLoginOneMessage checks that an unknown user, a wrong password and a
// disabled user with the right password get the same answer: telling them
// apart would confirm a disabled user's password.
func TestLoginOneMessage(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "s3cret")
		addUser(t, b.store, "ada", auth.RoleViewer)
		addUser(t, b.store, "off", auth.RoleViewer)
		users := carillonv1connect.NewUserServiceClient(http.DefaultClient, b.url)
		off, err := clientsOf(b.url, b.admin).user.ListUsers(ctx, &carillonv1.ListUsersRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range off.Users {
			if u.Username == "off" {
				if _, err := clientsOf(b.url, b.admin).user.UpdateUser(ctx, &carillonv1.UpdateUserRequest{User: &carillonv1.User{Id: u.Id, Disabled: true},
					UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"disabled"}}}); err != nil {
					t.Fatal(err)
				}
			}
		}
		var first string
		for _, c := range []struct{ name, password string }{
			{"nobody", "whatever password"}, {"ada", "a wrong password"}, {"off", passwordOf("off")},
		} {
			_, err := users.Login(ctx, &carillonv1.LoginRequest{Username: c.name, Password: c.password})
			if connect.CodeOf(err) != connect.CodeUnauthenticated {
				t.Fatalf("login %s: %v, want unauthenticated", c.name, err)
			}
			if first == "" {
				first = err.Error()
			} else if err.Error() != first {
				t.Errorf("login %s: %q, want the same message as for an unknown user, %q", c.name, err, first)
			}
		}
	})
}

// TestUnlockUser checks an ADMIN's way through a username's login lock that
// someone else's failures keep: UnlockUser lets the right password in.
func TestUnlockUser(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "s3cret") // 3 attempts per username, then one a minute
		addUser(t, b.store, "ada", auth.RoleViewer)
		users := carillonv1connect.NewUserServiceClient(http.DefaultClient, b.url)
		for range 3 {
			_, _ = users.Login(ctx, &carillonv1.LoginRequest{Username: "ada", Password: "an attacker's guess"}) // refused: the attempt is what counts
		}
		if _, err := users.Login(ctx, &carillonv1.LoginRequest{Username: "ada", Password: passwordOf("ada")}); connect.CodeOf(err) != connect.CodeResourceExhausted {
			t.Fatalf("the right password while locked: %v, want resource_exhausted", err)
		}
		list, err := clientsOf(b.url, b.admin).user.ListUsers(ctx, &carillonv1.ListUsersRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range list.Users {
			if u.Username == "ada" {
				if _, err := clientsOf(b.url, b.admin).user.UnlockUser(ctx, &carillonv1.UnlockUserRequest{Id: u.Id}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := users.Login(ctx, &carillonv1.LoginRequest{Username: "ada", Password: passwordOf("ada")}); err != nil {
			t.Errorf("the right password after UnlockUser: %v", err)
		}
	})
}

// TestDeleteChildJobRefused checks that a job other jobs list as a child
// cannot be deleted (failed_precondition naming them) until they drop it.
func TestDeleteChildJobRefused(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		f := newFixture(t, be)
		jobs := f.as["admin"].job
		none := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
		child, err := jobs.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{GroupId: f.groupA, Description: "child", Handler: "h", Schedule: none}})
		if err != nil {
			t.Fatal(err)
		}
		parent, err := jobs.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{GroupId: f.groupA, Description: "the parent", Handler: "h",
			Schedule: none, ChildJobIds: []int64{child.Job.Id}}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = jobs.DeleteJob(ctx, &carillonv1.DeleteJobRequest{Id: child.Job.Id})
		if connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), fmt.Sprintf("job %d (\"the parent\")", parent.Job.Id)) {
			t.Fatalf("delete a child job: %v, want failed_precondition naming its parent", err)
		}
		if _, err := jobs.UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: &carillonv1.Job{Id: parent.Job.Id},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"child_job_ids"}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := jobs.DeleteJob(ctx, &carillonv1.DeleteJobRequest{Id: child.Job.Id}); err != nil {
			t.Errorf("delete the job once no parent lists it: %v", err)
		}
	})
}

// TestDashboardScoped checks that a MEMBER's dashboard counts the jobs and
// runs of their groups only, exactly, while an ADMIN's counts every group.
func TestDashboardScoped(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		f := newFixture(t, be)
		f.newJob(t, f.groupB) // B has two jobs, A one
		dash := func(role string) *carillonv1.GetDashboardResponse {
			res, err := f.as[role].report.GetDashboard(ctx, &carillonv1.GetDashboardRequest{})
			if err != nil {
				t.Fatalf("%s: %v", role, err)
			}
			return res
		}
		admin, a, b := dash("admin"), dash("memberA"), dash("memberB")
		if admin.JobCount != 3 || a.JobCount != 1 || b.JobCount != 2 {
			t.Errorf("job counts: admin %d, member of A %d, member of B %d; want 3, 1, 2", admin.JobCount, a.JobCount, b.JobCount)
		}
		if admin.RunCount != 2 || a.RunCount != 1 || b.RunCount != 1 {
			t.Errorf("run counts: admin %d, member of A %d, member of B %d; want 2, 1, 1", admin.RunCount, a.RunCount, b.RunCount)
		}
	})
}

// TestLiveExecutorsLastBeat checks that an AUTO group lists its live
// executors with their last heartbeat.
func TestLiveExecutorsLastBeat(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "s3cret")
		g, err := b.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "app"}})
		if err != nil {
			t.Fatal(err)
		}
		first := b.clock.Now()
		if _, err := b.registry.Register(ctx, &carillonv1.RegisterRequest{AppName: "app", Address: "http://10.0.0.1:9999"}); err != nil {
			t.Fatal(err)
		}
		b.clock.Add(20 * time.Second)
		if _, err := b.registry.Register(ctx, &carillonv1.RegisterRequest{AppName: "app", Address: "http://10.0.0.2:9999"}); err != nil {
			t.Fatal(err)
		}
		res, err := b.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: g.Group.Id})
		if err != nil {
			t.Fatal(err)
		}
		live := res.Group.LiveExecutors
		if len(live) != 2 || live[0].Address != "http://10.0.0.1:9999" || !live[0].LastBeat.AsTime().Equal(first) ||
			!live[1].LastBeat.AsTime().Equal(first.Add(20*time.Second)) {
			t.Errorf("live executors %v, want 10.0.0.1 beaten at %v and 10.0.0.2 20 s later", live, first)
		}
	})
}

// TestRunSettledByAdmin checks that GetRun says when a run's status is the
// admin's judgement (LOST), and when an executor's late result replaced it.
func TestRunSettledByAdmin(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "s3cret")
		r := runningRuns(t, b.store, b.clock.Now(), "http://10.0.0.1:9999")()
		if _, err := b.store.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_LOST,
			FinishedAt: b.clock.Now(), ByAdmin: true, Message: "lost: executor stopped heartbeating"}}); err != nil {
			t.Fatal(err)
		}
		runs := carillonv1connect.NewRunServiceClient(http.DefaultClient, b.url, client.WithToken(b.admin))
		got, err := runs.GetRun(ctx, &carillonv1.GetRunRequest{Id: r.ID})
		if err != nil {
			t.Fatal(err)
		}
		if !got.Run.SettledByAdmin || got.Run.LateResult {
			t.Errorf("a LOST run: settled_by_admin %v, late_result %v; want true, false", got.Run.SettledByAdmin, got.Run.LateResult)
		}
		if _, err := b.registry.ReportResults(ctx, &carillonv1.ReportResultsRequest{Results: []*carillonv1.RunResult{
			{RunId: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED}}}); err != nil {
			t.Fatal(err)
		}
		if got, err = runs.GetRun(ctx, &carillonv1.GetRunRequest{Id: r.ID}); err != nil {
			t.Fatal(err)
		}
		if got.Run.SettledByAdmin || !got.Run.LateResult || got.Run.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
			t.Errorf("after a late result: %v, settled_by_admin %v, late_result %v; want SUCCEEDED, false, true",
				got.Run.Status, got.Run.SettledByAdmin, got.Run.LateResult)
		}
	})
}
