package schedule_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/schedule"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func TestPreview(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 11, 22, 13, 7, 16, 0, time.UTC) // 08:07:16 in New York, a Sunday
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no zoneinfo on this machine:", err)
	}
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name string
		spec schedule.Spec
		n    int
		want []time.Time
	}{
		{"CronInZone", schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "0 15 10 ? * 6#3", TimeZone: "America/New_York"}, 2,
			[]time.Time{at("2026-12-18T10:15:00-05:00"), at("2027-01-15T10:15:00-05:00")}},
		{"CronEnds", schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "0 0 0 1 1 ? 2027", TimeZone: "UTC"}, 5,
			[]time.Time{at("2027-01-01T00:00:00Z")}},
		{"FixRate", schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 90}, 3,
			[]time.Time{from.Add(90 * time.Second), from.Add(180 * time.Second), from.Add(270 * time.Second)}},
		{"FixDelayAssumesInstantRuns", schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY, IntervalSeconds: 60}, 2,
			[]time.Time{from.Add(time.Minute), from.Add(2 * time.Minute)}},
		{"None", schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}, 5, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := schedule.Preview(tt.spec, from, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
				t.Errorf("Preview (-want +got):\n%s", diff)
			}
			for _, g := range got {
				if tt.spec.TimeZone == "America/New_York" && g.Location().String() != ny.String() {
					t.Errorf("fire time %v is not in the job's zone", g)
				}
			}
		})
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		spec  schedule.Spec
		field string
	}{
		{schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "0 0 12 ? * 0"}, "cron"},
		{schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "* * * * * ?", TimeZone: "Nowhere/Else"}, "time_zone"},
		{schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE}, "interval_seconds"},
		{schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY, IntervalSeconds: -1}, "interval_seconds"},
		{schedule.Spec{}, "type"},
		{schedule.Spec{Type: 99}, "type"},
	} {
		err := schedule.Check(tt.spec)
		var se *schedule.SpecError
		if !errors.As(err, &se) || se.Field != tt.field {
			t.Errorf("Check(%+v) = %v, want a SpecError on %s", tt.spec, err, tt.field)
		}
	}
}
