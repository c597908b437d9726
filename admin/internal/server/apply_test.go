package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// applySpec is a set of definitions: a calendar, a group and three jobs
// of it, one the child of another, one using the calendar.
func applySpec(app string) *carillonv1.ApplyRequest {
	none := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
	return &carillonv1.ApplyRequest{
		Calendars: []*carillonv1.Calendar{weekendCalendar(app + "-weekend")},
		Groups:    []*carillonv1.Group{{AppName: app, Title: "Billing"}},
		Jobs: []*carillonv1.ApplyJob{
			{Group: app, Job: &carillonv1.Job{Name: "invoices", Description: "nightly invoices", Handler: "invoices", Enabled: true,
				Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "0 0 2 * * ?", TimeZone: "UTC"}},
				ChildJobs: []string{"mails"}, Calendars: []string{app + "-weekend"}},
			{Group: app, Job: &carillonv1.Job{Name: "mails", Description: "send the invoices", Handler: "mails", Schedule: none}},
			{Group: app, Job: &carillonv1.Job{Name: "cleanup", Description: "cleanup", Handler: "cleanup", Schedule: none}},
		},
		Workflows: []*carillonv1.ApplyWorkflow{{Group: app, NodeJobs: []string{"invoices", "mails"}, Workflow: &carillonv1.Workflow{
			Name: "month-end", Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "0 0 4 1 * ?", TimeZone: "UTC"},
			Nodes: []*carillonv1.WorkflowNode{{Key: "bill"}, {Key: "mail", DependsOn: []string{"bill"}}}}}},
	}
}

// planOf is a plan as "kind name ACTION fields" lines.
func planOf(res *carillonv1.ApplyResponse) []string {
	var out []string
	for _, c := range res.Changes {
		line := fmt.Sprintf("%s %s %s", c.Kind, c.Name, strings.TrimPrefix(c.Action.String(), "APPLY_ACTION_"))
		if len(c.Fields) > 0 {
			line += " " + strings.Join(c.Fields, ",")
		}
		out = append(out, line)
	}
	return out
}

func wantPlan(t *testing.T, what string, res *carillonv1.ApplyResponse, want ...string) {
	t.Helper()
	if got := planOf(res); !slices.Equal(got, want) {
		t.Errorf("%s: plan\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// jobsOf returns the jobs of group app by name.
func jobsOf(t *testing.T, c mgmt, app string) map[string]*carillonv1.Job {
	t.Helper()
	ctx := context.Background()
	gs, err := c.group.ListGroups(ctx, &carillonv1.ListGroupsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*carillonv1.Job{}
	for _, g := range gs.Groups {
		if g.AppName != app {
			continue
		}
		js, err := c.job.ListJobs(ctx, &carillonv1.ListJobsRequest{GroupId: g.Id})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range js.Jobs {
			j.LastRunId, j.LastRunStatus = 0, 0
			out[j.Name] = j
		}
	}
	return out
}

// TestApply: a plan creates what is missing, a second apply of the same
// definitions changes nothing (no updated_at moves), a change is an update
// listing its fields, a dry run and a refused request change nothing
// (a later bad item refuses the earlier good ones), --prune deletes the
// group's jobs the request does not list, and export applies as an empty
// plan. Each change is audited.
func TestApply(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		f := newFixture(t, be)
		adm := f.as["admin"]
		const app = "billing"

		dry := applySpec(app)
		dry.DryRun = true
		res, err := adm.apply.Apply(ctx, dry)
		if err != nil {
			t.Fatal(err)
		}
		wantPlan(t, "dry run", res, "calendar billing-weekend CREATE", "group billing CREATE",
			"job billing/invoices CREATE", "job billing/mails CREATE", "job billing/cleanup CREATE", "workflow billing/month-end CREATE")
		if res.Applied || len(jobsOf(t, adm, app)) != 0 {
			t.Fatalf("dry run: applied %v, jobs %v; want nothing made", res.Applied, jobsOf(t, adm, app))
		}

		if res, err = adm.apply.Apply(ctx, applySpec(app)); err != nil {
			t.Fatal(err)
		}
		wantPlan(t, "first apply", res, "calendar billing-weekend CREATE", "group billing CREATE",
			"job billing/invoices CREATE", "job billing/mails CREATE", "job billing/cleanup CREATE", "workflow billing/month-end CREATE")
		jobs := jobsOf(t, adm, app)
		inv := jobs["invoices"]
		if len(jobs) != 3 || !slices.Equal(inv.ChildJobIds, []int64{jobs["mails"].Id}) || len(inv.CalendarIds) != 1 || !inv.Enabled || inv.NextFireAt == nil {
			t.Fatalf("jobs after apply: %v", jobs)
		}

		if res, err = adm.apply.Apply(ctx, applySpec(app)); err != nil {
			t.Fatal(err)
		}
		wantPlan(t, "second apply", res, "calendar billing-weekend UNCHANGED", "group billing UNCHANGED",
			"job billing/invoices UNCHANGED", "job billing/mails UNCHANGED", "job billing/cleanup UNCHANGED", "workflow billing/month-end UNCHANGED")
		for name, j := range jobsOf(t, adm, app) {
			if !proto.Equal(j, jobs[name]) {
				t.Errorf("job %s after a second apply:\n%v\nwant it as it was:\n%v", name, j, jobs[name])
			}
		}

		// A change, then a bad job after it: nothing of the request is made.
		bad := applySpec(app)
		bad.Jobs[0].Job.Description = "changed"
		bad.Jobs = append(bad.Jobs, &carillonv1.ApplyJob{Group: app, Job: &carillonv1.Job{Name: "broken", Description: "d", Handler: "h",
			Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "not a cron"}}})
		_, err = adm.apply.Apply(ctx, bad)
		wantCode(t, "a bad job", err, connect.CodeInvalidArgument, "jobs[3] (billing/broken).schedule.cron")
		bad.Jobs = bad.Jobs[:3]
		bad.Jobs[2].ChildJobs = []string{"invoices"} // cleanup -> invoices -> mails: fine
		bad.Jobs[1].ChildJobs = []string{"cleanup"}  // mails -> cleanup -> invoices -> mails: a cycle
		_, err = adm.apply.Apply(ctx, bad)
		wantCode(t, "a cycle", err, connect.CodeInvalidArgument, "the child links form a cycle")
		for name, j := range jobsOf(t, adm, app) {
			if !proto.Equal(j, jobs[name]) {
				t.Errorf("job %s after refused applies:\n%v\nwant it as it was:\n%v", name, j, jobs[name])
			}
		}

		// An update lists its fields; enabled alone starts or stops.
		upd := applySpec(app)
		upd.Jobs[0].Job.Description = "changed"
		upd.Jobs[0].Job.Schedule.Cron = "0 0 3 * * ?"
		upd.Jobs[1].Job.Enabled = true
		upd.Groups[0].MaxConcurrency = 5
		upd.Workflows[0].NodeJobs[1] = "cleanup"
		upd.Workflows[0].Workflow.Enabled = true
		upd.Calendars[0].ExcludedWeekdays = []string{"SUN"}
		if res, err = adm.apply.Apply(ctx, upd); err != nil {
			t.Fatal(err)
		}
		wantPlan(t, "update", res, "calendar billing-weekend UPDATE excludedWeekdays", "group billing UPDATE maxConcurrency",
			"job billing/invoices UPDATE description,schedule.cron", "job billing/mails UPDATE enabled", "job billing/cleanup UNCHANGED",
			"workflow billing/month-end UPDATE enabled,nodeJobs")
		wf, err := adm.flow.ListWorkflows(ctx, &carillonv1.ListWorkflowsRequest{})
		if err != nil || len(wf.Workflows) != 1 || !wf.Workflows[0].Enabled || wf.Workflows[0].Nodes[1].JobId != jobs["cleanup"].Id {
			t.Fatalf("workflows after the update: %v, %v; want month-end started, its mail node on cleanup", wf, err)
		}
		after := jobsOf(t, adm, app)
		if after["invoices"].Description != "changed" || !after["mails"].Enabled || !proto.Equal(after["cleanup"], jobs["cleanup"]) {
			t.Errorf("jobs after the update: %v", after)
		}

		// --prune deletes cleanup and month-end, which upd no longer lists;
		// without month-end, cleanup, one of its nodes, could not go.
		upd.Jobs, upd.Workflows = upd.Jobs[:2], nil
		upd.Prune = true
		if res, err = adm.apply.Apply(ctx, upd); err != nil {
			t.Fatal(err)
		}
		wantPlan(t, "prune", res, "calendar billing-weekend UNCHANGED", "group billing UNCHANGED",
			"job billing/invoices UNCHANGED", "job billing/mails UNCHANGED", "workflow billing/month-end DELETE", "job billing/cleanup DELETE")
		if after := jobsOf(t, adm, app); len(after) != 2 || after["cleanup"] != nil {
			t.Errorf("jobs after prune: %v", after)
		}

		// Export, applied again, is an empty plan.
		exp, err := adm.apply.Export(ctx, &carillonv1.ExportRequest{Group: app})
		if err != nil {
			t.Fatal(err)
		}
		res, err = adm.apply.Apply(ctx, &carillonv1.ApplyRequest{Groups: exp.Groups, Jobs: exp.Jobs, Calendars: exp.Calendars, Prune: true})
		if err != nil {
			t.Fatal(err)
		}
		wantPlan(t, "export applied", res, "calendar billing-weekend UNCHANGED", "group billing UNCHANGED",
			"job billing/invoices UNCHANGED", "job billing/mails UNCHANGED")

		log, err := adm.user.ListAuditLog(ctx, &carillonv1.ListAuditLogRequest{Action: "ApplyService.Apply"})
		if err != nil {
			t.Fatal(err)
		}
		var targets []string
		for _, e := range log.Entries {
			if strings.Contains(e.Detail, `"action"`) {
				targets = append(targets, e.Target)
			}
		}
		// Newest first: the prune (2), the update (calendar, group,
		// invoices, mails, month-end), the first apply (6 creates).
		if len(targets) != 13 || targets[0] != fmt.Sprintf("job %d", jobs["cleanup"].Id) {
			t.Errorf("audited changes: %v; want 13, the deletion of job %d first", targets, jobs["cleanup"].Id)
		}
	})
}

// TestApplyRefusals: bad definitions are invalid_argument naming the item
// and field; a MEMBER may apply the jobs of their group but not change a
// group or another group's jobs, and a refused plan changes nothing.
func TestApplyRefusals(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		f := newFixture(t, be)
		none := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
		job := func(group, name string) *carillonv1.ApplyJob {
			return &carillonv1.ApplyJob{Group: group, Job: &carillonv1.Job{Name: name, Description: "d", Handler: "h", Schedule: none}}
		}
		for _, tt := range []struct {
			name string
			req  *carillonv1.ApplyRequest
			code connect.Code
			want string
		}{
			{"NoName", &carillonv1.ApplyRequest{Jobs: []*carillonv1.ApplyJob{job("app-a", "")}}, connect.CodeInvalidArgument,
				"jobs[0] (app-a/).name: required"},
			{"BadName", &carillonv1.ApplyRequest{Jobs: []*carillonv1.ApplyJob{job("app-a", "no spaces")}}, connect.CodeInvalidArgument,
				"jobs[0] (app-a/no spaces).name: does not match regex pattern"},
			{"UnknownGroup", &carillonv1.ApplyRequest{Jobs: []*carillonv1.ApplyJob{job("nope", "j")}}, connect.CodeInvalidArgument,
				`jobs[0] (nope/j).group: no group "nope"`},
			{"Twice", &carillonv1.ApplyRequest{Jobs: []*carillonv1.ApplyJob{job("app-a", "j"), job("app-a", "j")}}, connect.CodeInvalidArgument,
				`jobs[1] (app-a/j).name: job "j" of group "app-a" is listed twice`},
			{"UnknownChild", &carillonv1.ApplyRequest{Jobs: []*carillonv1.ApplyJob{{Group: "app-a", ChildJobs: []string{"app-b/x"},
				Job: job("", "j").Job}}}, connect.CodeInvalidArgument, `jobs[0] (app-a/j).childJobs[0]: no job "x" in group "app-b"`},
			{"UnknownCalendar", &carillonv1.ApplyRequest{Jobs: []*carillonv1.ApplyJob{{Group: "app-a", Calendars: []string{"x"},
				Job: job("", "j").Job}}}, connect.CodeInvalidArgument, `jobs[0] (app-a/j).calendars[0]: no calendar "x"`},
			{"IDs", &carillonv1.ApplyRequest{Jobs: []*carillonv1.ApplyJob{{Group: "app-a",
				Job: &carillonv1.Job{Name: "j", Description: "d", Handler: "h", Schedule: none, ChildJobIds: []int64{f.jobA}}}}},
				connect.CodeInvalidArgument, "jobs[0] (app-a/j).child_job_ids: ids differ from admin to admin"},
			{"BadGroup", &carillonv1.ApplyRequest{Groups: []*carillonv1.Group{{AppName: "g", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_MANUAL}}},
				connect.CodeInvalidArgument, "groups[0] (g).addresses"},
			{"Secret", &carillonv1.ApplyRequest{Jobs: []*carillonv1.ApplyJob{{Group: "app-a",
				Job: &carillonv1.Job{Name: "j", Description: "d", Handler: "h", Schedule: none, AlarmWebhookUrl: "https://hooks.example.com/x",
					AlarmWebhookFormat: carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_DINGTALK, AlarmWebhookSecret: "s"}}}},
				connect.CodeInvalidArgument, "jobs[0] (app-a/j).alarm_webhook_secret: secrets are not applied from files"},
		} {
			_, err := f.as["admin"].apply.Apply(ctx, tt.req)
			wantCode(t, tt.name, err, tt.code, tt.want)
		}

		memberA := f.as["memberA"]
		before := jobsOf(t, f.as["admin"], "app-a")
		res, err := memberA.apply.Apply(ctx, &carillonv1.ApplyRequest{Groups: []*carillonv1.Group{{AppName: "app-a"}},
			Jobs: []*carillonv1.ApplyJob{job("app-a", "mine")}})
		if err != nil {
			t.Fatalf("a MEMBER applying their group's job beside it unchanged: %v", err)
		}
		wantPlan(t, "member", res, "group app-a UNCHANGED", "job app-a/mine CREATE")
		_, err = memberA.apply.Apply(ctx, &carillonv1.ApplyRequest{Groups: []*carillonv1.Group{{AppName: "app-a", Title: "mine now"}},
			Jobs: []*carillonv1.ApplyJob{job("app-a", "second")}})
		wantCode(t, "a MEMBER changing a group", err, connect.CodePermissionDenied, "groups[0] (app-a): only an ADMIN may update a group")
		_, err = memberA.apply.Apply(ctx, &carillonv1.ApplyRequest{Jobs: []*carillonv1.ApplyJob{job("app-a", "second"), job("app-b", "theirs")}})
		wantCode(t, "a MEMBER applying another group's job", err, connect.CodePermissionDenied, "jobs[1] (app-b/theirs)")
		if _, err := f.as["admin"].apply.Apply(ctx, &carillonv1.ApplyRequest{Jobs: []*carillonv1.ApplyJob{job("app-b", "theirs")}}); err != nil {
			t.Fatal(err)
		}
		_, err = memberA.apply.Apply(ctx, &carillonv1.ApplyRequest{Workflows: []*carillonv1.ApplyWorkflow{{Group: "app-a", NodeJobs: []string{"mine", "app-b/theirs"},
			Workflow: &carillonv1.Workflow{Name: "w", Nodes: []*carillonv1.WorkflowNode{{Key: "a"}, {Key: "b"}}}}}})
		wantCode(t, "a MEMBER's workflow on another group's job", err, connect.CodePermissionDenied, "workflows[0] (app-a/w).nodes[1].job")
		_, err = f.as["admin"].apply.Apply(ctx, &carillonv1.ApplyRequest{Workflows: []*carillonv1.ApplyWorkflow{{Group: "app-a", NodeJobs: []string{"mine"},
			Workflow: &carillonv1.Workflow{Name: "w", Nodes: []*carillonv1.WorkflowNode{{Key: "a"}, {Key: "b", DependsOn: []string{"a"}}}}}}})
		wantCode(t, "a workflow with a node without its job", err, connect.CodeInvalidArgument, "workflows[0] (app-a/w).node_jobs: want one job for each of the 2 nodes, got 1")
		after := jobsOf(t, f.as["admin"], "app-a")
		if len(after) != len(before)+1 || after["second"] != nil {
			t.Errorf("jobs of app-a after refused plans: %v; want one more (mine) than %v", after, before)
		}
	})
}

// TestJobName: a job's name is checked, shown, unique within its group
// (already_exists) and free in another group.
func TestJobName(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		f := newFixture(t, be)
		adm := f.as["admin"].job
		newJob := func(group int64, name string) (*carillonv1.CreateJobResponse, error) {
			return adm.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{GroupId: group, Name: name, Description: "d", Handler: "h",
				Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}}})
		}
		_, err := newJob(f.groupA, "has space")
		wantCode(t, "a bad name", err, connect.CodeInvalidArgument, "job.name")
		_, err = newJob(f.groupA, strings.Repeat("n", 129))
		wantCode(t, "a long name", err, connect.CodeInvalidArgument, "job.name")
		a, err := newJob(f.groupA, "etl.daily_1")
		if err != nil || a.Job.Name != "etl.daily_1" {
			t.Fatalf("CreateJob with a name: %v, %v", a, err)
		}
		_, err = newJob(f.groupA, "etl.daily_1")
		wantCode(t, "a taken name", err, connect.CodeAlreadyExists, `a job named "etl.daily_1"`)
		if _, err := newJob(f.groupB, "etl.daily_1"); err != nil {
			t.Errorf("the same name in another group: %v", err)
		}
		other, err := newJob(f.groupA, "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = adm.UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: &carillonv1.Job{Id: other.Job.Id, Name: "etl.daily_1"},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"name"}}})
		wantCode(t, "renamed to a taken name", err, connect.CodeAlreadyExists, `a job named "etl.daily_1"`)
		got, err := adm.GetJob(ctx, &carillonv1.GetJobRequest{Id: other.Job.Id})
		if err != nil || got.Job.Name != "" {
			t.Errorf("the job after a refused rename: %v, %v; want it without a name", got, err)
		}
	})
}

// TestApplyKeepsSecret: a job's webhook secret, which files never hold,
// is kept by an apply that changes the job, and an apply that changes
// nothing says so.
func TestApplyKeepsSecret(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		adm := newFixture(t, be).as["admin"]
		spec := func(desc string) *carillonv1.ApplyRequest {
			return &carillonv1.ApplyRequest{Jobs: []*carillonv1.ApplyJob{{Group: "app-a", Job: &carillonv1.Job{Name: "robot", Description: desc, Handler: "h",
				Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}, AlarmWebhookUrl: "https://hooks.example.com/x",
				AlarmWebhookFormat: carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_DINGTALK}}}}
		}
		if _, err := adm.apply.Apply(ctx, spec("first")); err != nil {
			t.Fatal(err)
		}
		id := jobsOf(t, adm, "app-a")["robot"].Id
		if _, err := adm.job.UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: &carillonv1.Job{Id: id, AlarmWebhookSecret: "SEC"},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"alarm_webhook_secret"}}}); err != nil {
			t.Fatal(err)
		}
		res, err := adm.apply.Apply(ctx, spec("first"))
		if err != nil {
			t.Fatal(err)
		}
		wantPlan(t, "the same file again", res, "job app-a/robot UNCHANGED")
		if res, err = adm.apply.Apply(ctx, spec("second")); err != nil {
			t.Fatal(err)
		}
		wantPlan(t, "a new description", res, "job app-a/robot UPDATE description")
		if j := jobsOf(t, adm, "app-a")["robot"]; j.Description != "second" || !j.HasAlarmWebhookSecret {
			t.Errorf("after apply: description %q, has secret %v; want \"second\" and the secret kept", j.Description, j.HasAlarmWebhookSecret)
		}
	})
}

// TestApplyChildOrder: a job's child jobs keep the order the file lists
// them in (not their ids'), through an apply that creates them, the API's
// reads, an export, and an apply that only reorders them.
func TestApplyChildOrder(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		adm := newFixture(t, be).as["admin"]
		none := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
		spec := func(children ...string) *carillonv1.ApplyRequest {
			return &carillonv1.ApplyRequest{Groups: []*carillonv1.Group{{AppName: "ord", Title: "Order"}},
				Jobs: []*carillonv1.ApplyJob{
					{Group: "ord", Job: &carillonv1.Job{Name: "first", Description: "d", Handler: "h", Schedule: none}},
					{Group: "ord", Job: &carillonv1.Job{Name: "second", Description: "d", Handler: "h", Schedule: none}},
					{Group: "ord", Job: &carillonv1.Job{Name: "parent", Description: "d", Handler: "h", Schedule: none}, ChildJobs: children},
				}}
		}
		check := func(what string, want ...string) {
			t.Helper()
			jobs := jobsOf(t, adm, "ord")
			var ids []int64
			for _, name := range want {
				ids = append(ids, jobs[name].Id)
			}
			if got := jobs["parent"].ChildJobIds; !slices.Equal(got, ids) {
				t.Errorf("%s: children %v, want %v (%v)", what, got, ids, want)
			}
			exp, err := adm.apply.Export(ctx, &carillonv1.ExportRequest{Group: "ord"})
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range exp.Jobs {
				if j.Job.Name == "parent" && !slices.Equal(j.ChildJobs, want) {
					t.Errorf("%s: exported children %v, want %v", what, j.ChildJobs, want)
				}
			}
		}
		if _, err := adm.apply.Apply(ctx, spec("second", "first")); err != nil {
			t.Fatal(err)
		}
		check("created", "second", "first")
		res, err := adm.apply.Apply(ctx, spec("first", "second"))
		if err != nil {
			t.Fatal(err)
		}
		wantPlan(t, "reordered", res, "group ord UNCHANGED", "job ord/first UNCHANGED", "job ord/second UNCHANGED", "job ord/parent UPDATE childJobs")
		check("reordered", "first", "second")
	})
}
