package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

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

// TestNext checks that Next reads, in one query, the earliest next fire of
// the jobs and of the workflows as NextFireAt and Workflows.NextFireAt read
// them: none, then each kind's earliest, whichever kind comes first.
func TestNext(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			check := func(when string, jobs, workflows time.Time) {
				t.Helper()
				n, err := s.Fires.Next(ctx)
				if want := (store.NextFires{Jobs: jobs, Workflows: workflows}); err != nil || !n.Jobs.Equal(want.Jobs) ||
					!n.Workflows.Equal(want.Workflows) || !n.JobsOthers.IsZero() || !n.WorkflowsOthers.IsZero() {
					t.Errorf("%s: Next = %+v, %v; want %+v", when, n, err, want)
				}
				j, _, err := s.Fires.NextFireAt(ctx)
				w, _, werr := s.Workflows.NextFireAt(ctx)
				if err != nil || werr != nil || !j.Equal(n.Jobs) || !w.Equal(n.Workflows) {
					t.Errorf("%s: NextFireAt = %v, %v and Workflows.NextFireAt = %v, %v; Next read %+v", when, j, err, w, werr, n)
				}
			}
			check("nothing scheduled", time.Time{}, time.Time{})
			for _, at := range []time.Time{t0.Add(3 * time.Second), t0.Add(time.Second)} {
				if _, err := s.Jobs.Create(ctx, newJob(b.group.ID, at), t0); err != nil {
					t.Fatal(err)
				}
			}
			check("jobs only", t0.Add(time.Second), time.Time{})
			node := newJob(b.group.ID, time.Time{})
			node.ScheduleType = carillonv1.ScheduleType_SCHEDULE_TYPE_NONE
			node, err := s.Jobs.Create(ctx, node, t0)
			if err != nil {
				t.Fatal(err)
			}
			for i, at := range []time.Time{t0.Add(2 * time.Second), t0.Add(500 * time.Millisecond)} {
				if _, err := s.Workflows.Create(ctx, store.Workflow{GroupID: b.group.ID, Name: fmt.Sprint("w", i), Enabled: true, NextFireAt: at,
					ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 1,
					Nodes: []store.WorkflowNode{{Key: "only", JobID: node.ID}}}, t0); err != nil {
					t.Fatal(err)
				}
			}
			check("jobs and workflows", t0.Add(time.Second), t0.Add(500*time.Millisecond))
		})
	}
}
