package store_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestDueJobsReadsScanColumns checks that DueJobs reads every field the
// scan's claims use (a field left out would fire runs without it, or
// schedule the job wrongly) and no other.
func TestDueJobsReadsScanColumns(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			cal, err := s.Calendars.Create(ctx, store.Calendar{Name: "holidays", Definition: christmas}, t0)
			if err != nil {
				t.Fatal(err)
			}
			j := newJob(b.group.ID, t0)
			j.ScheduleType, j.Cron, j.TimeZone = carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, "0 0 12 * * ?", "Asia/Shanghai"
			j.Handler, j.Param = "report", "daily"
			j.MisfireStrategy = carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW
			j.CalendarIDs, j.MaxConcurrency = []int64{cal.ID}, 2
			// Not read by the scan.
			j.Description, j.Owner, j.ScriptSource, j.AlarmWebhookURL = "d", "o", "echo hi", "http://127.0.0.1:1/hook"
			j, err = s.Jobs.Create(ctx, j, t0)
			if err != nil {
				t.Fatal(err)
			}
			due, err := s.Fires.DueJobs(ctx, t0, t0, 10)
			if err != nil {
				t.Fatal(err)
			}
			want := []store.Job{{
				ID: j.ID, GroupID: j.GroupID, Handler: "report", Param: "daily",
				ScheduleType: j.ScheduleType, Cron: j.Cron, TimeZone: j.TimeZone, IntervalSeconds: j.IntervalSeconds,
				MisfireStrategy: j.MisfireStrategy, CalendarIDs: []int64{cal.ID}, NextFireAt: t0, Capped: true, Enabled: true,
			}}
			if diff := cmp.Diff(want, due); diff != "" {
				t.Errorf("DueJobs (-want +got):\n%s", diff)
			}
		})
	}
}
