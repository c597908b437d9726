package server_test

import (
	"context"
	"testing"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestImportJobs: a dry run checks and creates nothing; an import creates
// its groups and jobs with group and child ids remapped; a group whose app
// name is taken, last of its import, leaves nothing of the import behind.
func TestImportJobs(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		f := newFixture(t, be)
		ctx := context.Background()
		c := clientsOf(f.url, f.admin)
		none := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
		req := func(apps ...string) *carillonv1.ImportJobsRequest {
			r := &carillonv1.ImportJobsRequest{}
			for i, app := range apps {
				r.Groups = append(r.Groups, &carillonv1.Group{Id: int64(10 + i), AppName: app,
					ExecutorProtocol: carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB})
			}
			r.Jobs = []*carillonv1.Job{
				{Id: 100, GroupId: 10, Description: "parent", Handler: "h", Schedule: none, ChildJobIds: []int64{101}},
				{Id: 101, GroupId: 10, Description: "child", Handler: "h", Enabled: true,
					Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "0 0 * * * ?"}},
			}
			return r
		}

		groups := func() int {
			t.Helper()
			l, err := c.group.ListGroups(ctx, &carillonv1.ListGroupsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			return len(l.Groups)
		}
		n := groups()
		dry := req("imp-dry")
		dry.DryRun = true
		res, err := c.job.ImportJobs(ctx, dry)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Groups) != 1 || len(res.Jobs) != 2 || len(res.JobIds) != 0 || res.Groups[0].Id != 0 {
			t.Errorf("dry run answered %v, want the group and two jobs without ids", res)
		}
		if groups() != n {
			t.Error("a dry run created a group")
		}
		if _, err := c.job.GetJob(ctx, &carillonv1.GetJobRequest{Id: f.jobB + 1}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Errorf("a dry run created a job: %v", err)
		}
		before := digest(t, f.db) // the dry run is in the audit log

		// app-a is the fixture's: the second group fails, the first is not kept.
		_, err = c.job.ImportJobs(ctx, req("imp-first", "app-a"))
		if connect.CodeOf(err) != connect.CodeAlreadyExists {
			t.Fatalf("import with a taken app name: %v, want already_exists", err)
		}
		if digest(t, f.db) != before {
			t.Error("a refused import changed the database")
		}

		res, err = c.job.ImportJobs(ctx, req("imp-ok"))
		if err != nil {
			t.Fatal(err)
		}
		gid, parent, child := res.GroupIds[10], res.JobIds[100], res.JobIds[101]
		if gid == 0 || parent == 0 || child == 0 {
			t.Fatalf("ids %v %v, want the group and both jobs", res.GroupIds, res.JobIds)
		}
		g, err := c.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: gid})
		if err != nil || g.Group.AppName != "imp-ok" || g.Group.ExecutorProtocol != carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB {
			t.Errorf("group %d: %v, %v", gid, g, err)
		}
		p, err := c.job.GetJob(ctx, &carillonv1.GetJobRequest{Id: parent})
		if err != nil || p.Job.GroupId != gid || len(p.Job.ChildJobIds) != 1 || p.Job.ChildJobIds[0] != child {
			t.Errorf("parent job %d: %v, %v; want group %d and child %d", parent, p, err, gid, child)
		}
		ch, err := c.job.GetJob(ctx, &carillonv1.GetJobRequest{Id: child})
		if err != nil || !ch.Job.Enabled || ch.Job.NextFireAt == nil {
			t.Errorf("child job %d: %v, %v; want it started with a next fire", child, ch, err)
		}
	})
}

// TestRegisterProtocol: an executor registers only into a group of its
// protocol (or an app without a group); otherwise failed_precondition, and
// it is not registered.
func TestRegisterProtocol(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		b := setup(t, be, "s3cret")
		ctx := context.Background()
		c := clientsOf(b.url, b.admin)
		for _, g := range []*carillonv1.Group{
			{AppName: "xxl", ExecutorProtocol: carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB},
			{AppName: "go"},
		} {
			if _, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: g}); err != nil {
				t.Fatal(err)
			}
		}
		xxl, carillon := carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB, carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_UNSPECIFIED
		for _, tt := range []struct {
			app      string
			protocol carillonv1.ExecutorProtocol
			want     connect.Code
		}{
			{"xxl", xxl, 0},
			{"xxl", carillon, connect.CodeFailedPrecondition},
			{"go", carillon, 0},
			{"go", carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_CARILLON, 0},
			{"go", xxl, connect.CodeFailedPrecondition},
			{"nogroup", xxl, 0},
			{"go", carillonv1.ExecutorProtocol(9), connect.CodeInvalidArgument},
		} {
			_, err := b.registry.Register(ctx, &carillonv1.RegisterRequest{AppName: tt.app, Address: "http://10.0.0.9:9999", Protocol: tt.protocol})
			if got := connect.CodeOf(err); (err == nil) != (tt.want == 0) || (err != nil && got != tt.want) {
				t.Errorf("register %s speaking %s: %v, want code %v", tt.app, tt.protocol, err, tt.want)
			}
		}
		l, err := c.group.ListGroups(ctx, &carillonv1.ListGroupsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range l.Groups {
			if len(g.Addresses) != 1 {
				t.Errorf("group %s has executors %v, want the one of its protocol", g.AppName, g.Addresses)
			}
		}
	})
}
