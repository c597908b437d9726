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
// cannot be created enabled, nor started; it can be stored stopped.
func TestNeverFiringScheduleRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	c := f.as["admin"].job
	for _, cron := range []string{"0 0 0 30 2 ?", "* * * * * ? 1970", "0 0 0 29 2 ? 2097"} {
		job := &carillonv1.Job{GroupId: f.groupA, Description: "never", Handler: "h", Enabled: true,
			Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: cron, TimeZone: "UTC"}}
		_, err := c.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: job})
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "never fires") {
			t.Errorf("create %q enabled: %v, want invalid_argument saying it never fires", cron, err)
		}
		job.Enabled = false
		stopped, err := c.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: job})
		if err != nil {
			t.Fatalf("create %q stopped: %v", cron, err)
		}
		_, err = c.StartJob(ctx, &carillonv1.StartJobRequest{Id: stopped.Job.Id})
		if connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("start %q: %v, want invalid_argument", cron, err)
		}
	}
}
