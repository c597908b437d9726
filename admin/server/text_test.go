package server_test

import (
	"context"
	"testing"

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
