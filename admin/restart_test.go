package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestGracefulStopSendsClaimedFires: the scheduler claims fires up to
// 1.5 s ahead; a graceful stop sends every one of them on its instant
// before the admin exits, so none is left claimed and unsent (which the
// next admin would have to reconcile) and none fails.
func TestGracefulStopSendsClaimedFires(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdminWith(t, admin.Config{}, http.DefaultClient)
	url := a.URL
	c := newClients(url, http.DefaultClient)
	startExecutor(t, url, "stop")
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "stop"}})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, a.URL, 15*time.Second, func() error { // registered before the first fire, which would fail without it
		res, err := c.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: g.Group.Id})
		if err != nil {
			return err
		}
		if len(res.Group.Addresses) == 0 {
			return fmt.Errorf("the executor has not registered")
		}
		return nil
	})
	every := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "* * * * * ?"}
	for i := range 5 {
		createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: fmt.Sprint("every second ", i), Schedule: every,
			Handler: "ok", Enabled: true})
	}
	eventually(t, a.URL, 15*time.Second, func() error {
		res, err := c.run.ListRuns(ctx, &carillonv1.ListRunsRequest{Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, PageSize: 100})
		if err != nil {
			return err
		}
		if len(res.Runs) < 10 {
			return fmt.Errorf("%d runs succeeded, want 10", len(res.Runs))
		}
		return nil
	})
	if err := a.Stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}

	st := dbtest.Open(t, a.DB)
	runs, err := st.Runs.List(ctx, store.RunFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		switch {
		case r.Status == carillonv1.RunStatus_RUN_STATUS_RUNNING && r.ExecutorAddress == "":
			t.Errorf("run %d (instant %s) claimed and left unsent by a graceful stop", r.ID, r.ScheduledAt.Format(time.TimeOnly))
		case r.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING && r.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED:
			t.Errorf("run %d: %s (%s), want RUNNING (sent, result on its way) or SUCCEEDED", r.ID, r.Status, r.Message)
		}
	}
}
