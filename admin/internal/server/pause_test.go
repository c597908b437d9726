package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestPauseGroup: a MEMBER of the group pauses it; while paused, manual
// triggers of its jobs (now or at a later instant) and workflows are
// refused with failed_precondition naming the pause, and nothing is
// stored; the group shows paused; the resume lets them through again;
// both are audited; bad ids are refused.
func TestPauseGroup(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		f := newFixture(t, be)
		ctx := context.Background()
		member, adm := f.as["memberA"], f.as["admin"]
		flow, err := adm.flow.CreateWorkflow(ctx, &carillonv1.CreateWorkflowRequest{Workflow: flowOf(f.groupA, "paused-flow", f.jobA)})
		if err != nil {
			t.Fatal(err)
		}
		res, err := member.group.PauseGroup(ctx, &carillonv1.PauseGroupRequest{Id: f.groupA})
		if err != nil || !res.Group.Paused {
			t.Fatalf("PauseGroup: %v, %v; want the group, paused", res, err)
		}
		got, err := adm.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: f.groupA})
		if err != nil || !got.Group.Paused {
			t.Fatalf("GetGroup after the pause: %v, %v; want paused", got, err)
		}
		before := runCount(t, f, f.jobA)
		refused := func(what string, err error) {
			t.Helper()
			if connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "paused") {
				t.Errorf("%s while paused: %v, want failed_precondition naming the pause", what, err)
			}
		}
		_, err = member.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: f.jobA})
		refused("TriggerJob", err)
		_, err = member.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: f.jobA, RunAt: timestamppb.New(f.clock.Now().Add(time.Hour))})
		refused("TriggerJob with run_at", err)
		_, err = adm.flow.TriggerWorkflow(ctx, &carillonv1.TriggerWorkflowRequest{WorkflowId: flow.Workflow.Id})
		refused("TriggerWorkflow", err)
		if n := runCount(t, f, f.jobA); n != before {
			t.Errorf("%d runs of the job after the refused triggers, want %d", n, before)
		}
		// Group B is not paused.
		if _, err := adm.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: f.jobB}); err != nil {
			t.Errorf("TriggerJob of another group's job: %v", err)
		}

		if res, err := member.group.ResumeGroup(ctx, &carillonv1.ResumeGroupRequest{Id: f.groupA}); err != nil || res.Group.Paused {
			t.Fatalf("ResumeGroup: %v, %v; want the group, not paused", res, err)
		}
		if _, err := member.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: f.jobA}); err != nil {
			t.Errorf("TriggerJob after the resume: %v", err)
		}

		audited := auditTargets(t, adm)
		for _, action := range []string{"GroupService.PauseGroup", "GroupService.ResumeGroup"} {
			if want := "group " + fmt.Sprint(f.groupA); audited[action] != want {
				t.Errorf("audit of %s: target %q, want %q", action, audited[action], want)
			}
		}

		for _, tt := range []struct {
			id   int64
			code connect.Code
		}{{0, connect.CodeInvalidArgument}, {-1, connect.CodeInvalidArgument}, {999, connect.CodeNotFound}} {
			if _, err := adm.group.PauseGroup(ctx, &carillonv1.PauseGroupRequest{Id: tt.id}); connect.CodeOf(err) != tt.code {
				t.Errorf("PauseGroup id %d: %v, want %v", tt.id, err, tt.code)
			}
			if _, err := adm.group.ResumeGroup(ctx, &carillonv1.ResumeGroupRequest{Id: tt.id}); connect.CodeOf(err) != tt.code {
				t.Errorf("ResumeGroup id %d: %v, want %v", tt.id, err, tt.code)
			}
		}
	})
}

// TestStartStopJobs: StopJobs and StartJobs change all their jobs or,
// refused for one (unknown, not the caller's, a bad list), none, naming
// it; each call is audited with its jobs.
func TestStartStopJobs(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		f := newFixture(t, be)
		ctx := context.Background()
		member, adm := f.as["memberA"], f.as["admin"]
		jobA2 := f.newJob(t, f.groupA)
		enabled := func(ids ...int64) []bool {
			t.Helper()
			var out []bool
			for _, id := range ids {
				j, err := adm.job.GetJob(ctx, &carillonv1.GetJobRequest{Id: id})
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, j.Job.Enabled)
			}
			return out
		}
		all := []int64{f.jobA, jobA2, f.jobB}
		want := enabled(all...)

		for _, tt := range []struct {
			name string
			ids  []int64
			code connect.Code
			says string
		}{
			{"unknown id", []int64{f.jobA, 999}, connect.CodeNotFound, "ids[1]"},
			{"another group's job", []int64{f.jobA, f.jobB}, connect.CodePermissionDenied, "ids[1] (job " + fmt.Sprint(f.jobB) + ")"},
			{"no ids", nil, connect.CodeInvalidArgument, "ids"},
			{"an id twice", []int64{f.jobA, f.jobA}, connect.CodeInvalidArgument, "ids"},
			{"id 0", []int64{0}, connect.CodeInvalidArgument, "ids[0]"},
		} {
			_, err := member.job.StopJobs(ctx, &carillonv1.StopJobsRequest{Ids: tt.ids})
			if connect.CodeOf(err) != tt.code || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("StopJobs, %s: %v, want %v naming %q", tt.name, err, tt.code, tt.says)
			}
			_, err = member.job.StartJobs(ctx, &carillonv1.StartJobsRequest{Ids: tt.ids})
			if connect.CodeOf(err) != tt.code || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("StartJobs, %s: %v, want %v naming %q", tt.name, err, tt.code, tt.says)
			}
			if got := enabled(all...); !slices.Equal(got, want) {
				t.Errorf("after the refused calls (%s): enabled %v, want unchanged %v", tt.name, got, want)
			}
		}

		stopped, err := member.job.StopJobs(ctx, &carillonv1.StopJobsRequest{Ids: []int64{jobA2, f.jobA}})
		if err != nil || len(stopped.Jobs) != 2 || stopped.Jobs[0].Id != jobA2 || stopped.Jobs[0].Enabled || stopped.Jobs[1].Enabled {
			t.Fatalf("StopJobs: %v, %v; want both jobs, stopped, in order", stopped, err)
		}
		if got := enabled(f.jobA, jobA2); !slices.Equal(got, []bool{false, false}) {
			t.Errorf("after StopJobs: enabled %v, want both stopped", got)
		}
		started, err := member.job.StartJobs(ctx, &carillonv1.StartJobsRequest{Ids: []int64{f.jobA, jobA2}})
		if err != nil || len(started.Jobs) != 2 || !started.Jobs[0].Enabled || !started.Jobs[1].Enabled {
			t.Fatalf("StartJobs: %v, %v; want both jobs, started", started, err)
		}
		targets := auditTargets(t, adm)
		if want := "jobs " + fmt.Sprint(jobA2) + ", " + fmt.Sprint(f.jobA); targets["JobService.StopJobs"] != want {
			t.Errorf("audit of StopJobs: target %q, want %q", targets["JobService.StopJobs"], want)
		}
		if want := "jobs " + fmt.Sprint(f.jobA) + ", " + fmt.Sprint(jobA2); targets["JobService.StartJobs"] != want {
			t.Errorf("audit of StartJobs: target %q, want %q", targets["JobService.StartJobs"], want)
		}
	})
}

// runCount returns how many runs job id has.
func runCount(t *testing.T, f *fixture, id int64) int {
	t.Helper()
	res, err := f.as["admin"].run.ListRuns(context.Background(), &carillonv1.ListRunsRequest{JobId: id})
	if err != nil {
		t.Fatal(err)
	}
	return len(res.Runs)
}

// auditTargets returns the target of the latest audit entry of each
// action.
func auditTargets(t *testing.T, c mgmt) map[string]string {
	t.Helper()
	log, err := c.user.ListAuditLog(context.Background(), &carillonv1.ListAuditLogRequest{})
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]string{}
	for i := len(log.Entries) - 1; i >= 0; i-- { // newest first: the newest wins
		targets[log.Entries[i].Action] = log.Entries[i].Target
	}
	return targets
}
