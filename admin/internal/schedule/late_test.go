package schedule_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/schedule"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func cronSpec(expr string) schedule.Spec {
	return schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: expr, TimeZone: "UTC"}
}

func TestLate(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 20, 16, 0, 0, 0, time.UTC) // a Friday
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	everySecond := cronSpec("* * * * * ?")
	office := cronSpec("* * 9-16 ? * MON-FRI") // every second, 09:00-16:59:59 on weekdays
	daily := cronSpec("0 0 12 * * ?")
	noon := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	monday9 := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	rate := schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 60}
	delay := schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY, IntervalSeconds: 60}
	for _, tt := range []struct {
		name        string
		spec        schedule.Spec
		due, cutoff time.Time
		max         int64
		want        schedule.Missed
		next        time.Time
	}{
		{"cron, cutoff on an instant", everySecond, t0, sec(55), 1000, schedule.Missed{First: t0, Last: sec(54), Count: 55, Exact: true}, sec(55)},
		{"cron, cutoff between instants", everySecond, t0, sec(55).Add(300 * time.Millisecond), 1000,
			schedule.Missed{First: t0, Last: sec(55), Count: 56, Exact: true}, sec(56)},
		{"cron, one instant", everySecond, t0, t0.Add(time.Millisecond), 1000, schedule.Missed{First: t0, Last: t0, Count: 1, Exact: true}, sec(1)},
		{"cron, more than max", everySecond, t0, sec(7200), 1000, schedule.Missed{First: t0, Last: sec(7199), Count: 1000}, sec(7200)},
		{"cron, max exactly", everySecond, t0, sec(1000), 1000, schedule.Missed{First: t0, Last: sec(999), Count: 1000, Exact: true}, sec(1000)},
		{"cron, more than max, cutoff between instants", everySecond, t0, sec(7200).Add(999 * time.Millisecond), 10,
			schedule.Missed{First: t0, Last: sec(7200), Count: 10}, sec(7201)},
		{"daily cron, over a year", daily, noon, noon.AddDate(1, 0, 0).Add(time.Hour), 100,
			schedule.Missed{First: noon, Last: noon.AddDate(1, 0, 0), Count: 100}, noon.AddDate(1, 0, 1)},
		{"cron with a weekend gap", office, t0.Add(59 * time.Minute), monday9.Add(-time.Hour), 1000,
			schedule.Missed{First: t0.Add(59 * time.Minute), Last: t0.Add(time.Hour - time.Second), Count: 60, Exact: true}, monday9},
		{"cron with a weekend gap, more than max", office, t0.Add(59 * time.Minute), monday9.Add(10 * time.Second), 10,
			schedule.Missed{First: t0.Add(59 * time.Minute), Last: monday9.Add(9 * time.Second), Count: 10}, monday9.Add(10 * time.Second)},
		{"FIX_RATE, exact however many", rate, t0, t0.Add(100 * time.Hour), 10, schedule.Missed{First: t0, Last: t0.Add(100*time.Hour - time.Minute), Count: 6000, Exact: true}, t0.Add(100 * time.Hour)},
		{"FIX_RATE, cutoff between instants", rate, t0, t0.Add(time.Hour + time.Millisecond), 1000,
			schedule.Missed{First: t0, Last: t0.Add(time.Hour), Count: 61, Exact: true}, t0.Add(61 * time.Minute)},
		{"FIX_DELAY: one instant, then none", delay, t0, t0.Add(time.Hour), 1000, schedule.Missed{First: t0, Last: t0, Count: 1, Exact: true}, time.Time{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, next, err := schedule.Late(tt.spec, tt.due, tt.cutoff, tt.max)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || !next.Equal(tt.next) {
				t.Errorf("Late: next %v, want %v; missed (-want +got):\n%s", next, tt.next, diff)
			}
		})
	}
}

// BenchmarkLate is the work of a misfire of an every-second cron job after
// an outage of a day: what the scan spends on each such job.
func BenchmarkLate(b *testing.B) {
	spec := cronSpec("* * * * * ?")
	due := time.Date(2026, 11, 20, 16, 0, 0, 0, time.UTC)
	for _, outage := range []time.Duration{time.Minute, 24 * time.Hour} {
		b.Run(fmt.Sprint("outage=", outage), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := schedule.Late(spec, due, due.Add(outage), schedule.MissedCountMax); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
