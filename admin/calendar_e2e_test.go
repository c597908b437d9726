package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/client"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// TestCalendarEndToEnd: a real admin and executor run an every-second job
// whose CRON calendar excludes the even seconds; its runs are all of odd
// seconds, and none records an excluded instant.
func TestCalendarEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmin(t)
	c := newClients(a.URL, http.DefaultClient)
	tok, _ := credentials.Load(a.URL)
	cals := carillonv1connect.NewCalendarServiceClient(http.DefaultClient, a.URL, client.WithToken(tok.(string)))
	startExecutor(t, a.URL, "cal")
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "cal"}})
	if err != nil {
		t.Fatal(err)
	}
	even, err := cals.CreateCalendar(ctx, &carillonv1.CreateCalendarRequest{Calendar: &carillonv1.Calendar{
		Name: "even seconds", Kind: carillonv1.CalendarKind_CALENDAR_KIND_CRON, TimeZone: "UTC", Cron: "0/2 * * * * ?"}})
	if err != nil {
		t.Fatal(err)
	}
	job := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "odd seconds", Handler: "ok", Enabled: true,
		Schedule:    &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "* * * * * ?", TimeZone: "UTC"},
		CalendarIds: []int64{even.Calendar.Id}})
	eventually(t, a.URL, 20*time.Second, func() error {
		succeeded := 0
		for _, r := range listRuns(t, c, job.Id) {
			if r.Status == carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
				succeeded++
			}
		}
		if succeeded < 3 {
			return fmt.Errorf("%d runs succeeded, want 3", succeeded)
		}
		return nil
	})
	for _, r := range listRuns(t, c, job.Id) {
		if at := r.ScheduledAt.AsTime(); at.Second()%2 == 0 || r.Status == carillonv1.RunStatus_RUN_STATUS_SKIPPED {
			t.Errorf("run %d of %v: %s; want only odd seconds, none skipped", r.Id, at, r.Status)
		}
	}
}
