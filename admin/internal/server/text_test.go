package server_test

import (
	"context"
	"strings"
	"testing"

	"connectrpc.com/connect"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestMultiLineTextAllowed: control characters are refused in names and
// titles (TestValidation), but a description and a param may span lines.
func TestMultiLineTextAllowed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	j, err := f.as["admin"].job.CreateJob(context.Background(), &carillonv1.CreateJobRequest{Job: &carillonv1.Job{
		GroupId: f.groupA, Description: "first line\nsecond line", Handler: "h", Param: "key=1\n\tkey=2\r\n",
		Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE},
	}})
	if err != nil {
		t.Fatalf("multi-line description and param: %v, want accepted", err)
	}
	if j.Job.Description != "first line\nsecond line" || j.Job.Param != "key=1\n\tkey=2\r\n" {
		t.Errorf("stored %q and %q", j.Job.Description, j.Job.Param)
	}
}

// TestNeverFiringScheduleRefused: a job whose cron never fires after now
// cannot be created, enabled or not, nor updated onto such a cron, and a
// refused update changes nothing.
func TestNeverFiringScheduleRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	c := f.as["admin"].job
	for _, cron := range []string{"0 0 0 30 2 ?", "* * * * * ? 1970", "0 0 0 29 2 ? 2097"} {
		for _, enabled := range []bool{true, false} {
			job := &carillonv1.Job{GroupId: f.groupA, Description: "never", Handler: "h", Enabled: enabled,
				Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: cron, TimeZone: "UTC"}}
			_, err := c.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: job})
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "never fires") ||
				!strings.Contains(err.Error(), "cron") {
				t.Errorf("create %q enabled=%v: %v, want invalid_argument saying it never fires", cron, enabled, err)
			}
		}
		job := &carillonv1.Job{GroupId: f.groupA, Description: "fires", Handler: "h",
			Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "0 0 0 1 1 ?", TimeZone: "UTC"}}
		stopped, err := c.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: job})
		if err != nil {
			t.Fatal(err)
		}
		stopped.Job.Schedule.Cron = cron
		_, err = c.UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: stopped.Job})
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "never fires") {
			t.Errorf("update a stopped job to %q: %v, want invalid_argument saying it never fires", cron, err)
		}
		got, err := c.GetJob(ctx, &carillonv1.GetJobRequest{Id: stopped.Job.Id})
		if err != nil || got.Job.Schedule.Cron != "0 0 0 1 1 ?" {
			t.Errorf("after the refused update: %v, %v", got, err)
		}
	}
}
