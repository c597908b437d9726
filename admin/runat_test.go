package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestTriggerAt runs a job once at a later instant through the real admin
// and a real SDK executor: the run waits PENDING, is sent on its instant
// (not before) and succeeds.
func TestTriggerAt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmin(t)
	c := newClients(a.URL, http.DefaultClient)
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "later"}})
	if err != nil {
		t.Fatal(err)
	}
	startExecutor(t, a.URL, "later")
	job := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "at a time", Handler: "ok",
		Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}})

	at := time.Now().Add(1500 * time.Millisecond).Truncate(time.Millisecond)
	res, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: job.Id, RunAt: timestamppb.New(at)})
	if err != nil {
		t.Fatal(err)
	}
	id := res.RunIds[0]
	var run *carillonv1.Run
	eventually(t, a.URL, 15*time.Second, func() error {
		got, err := c.run.GetRun(ctx, &carillonv1.GetRunRequest{Id: id})
		if err != nil {
			return err
		}
		if run = got.Run; run.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
			return fmt.Errorf("run %d is %s", id, run.Status)
		}
		return nil
	})
	if !run.ScheduledAt.AsTime().Equal(at) || run.TriggeredAt.AsTime().Before(at) {
		t.Errorf("run scheduled %v, sent %v; want scheduled at %v and sent then or after", run.ScheduledAt.AsTime(), run.TriggeredAt.AsTime(), at)
	}
}
