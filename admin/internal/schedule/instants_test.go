package schedule_test

import (
	"errors"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/schedule"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func TestInstants(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	day := func(d, h int) time.Time { return time.Date(2026, 3, d, h, 0, 0, 0, berlin) }
	cron := schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "0 0 2 * * ?", TimeZone: "Europe/Berlin"}
	rate := schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 3600}
	for _, c := range []struct {
		name     string
		spec     schedule.Spec
		from, to time.Time
		limit    int
		want     []time.Time
		count    int
	}{
		// 02:00 in Berlin, daily; on 29 March 2026 02:00 does not exist
		// (the clocks go from 02:00 to 03:00): the cron skips that day.
		{"cron in its zone, from included, to not", cron, day(27, 2), day(31, 2), 10,
			[]time.Time{day(27, 2), day(28, 2), day(30, 2)}, 3},
		{"limit", cron, day(1, 0), day(11, 0), 3, []time.Time{day(1, 2), day(2, 2), day(3, 2)}, 10},
		{"fixed rate from from", rate, day(1, 0), day(1, 3), 10, []time.Time{day(1, 0), day(1, 1), day(1, 2)}, 3},
		{"empty", rate, day(1, 0), day(1, 0), 10, nil, 0},
	} {
		got, n, err := schedule.Instants(c.spec, c.from, c.to, c.limit, 1000)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n != c.count || len(got) != len(c.want) {
			t.Fatalf("%s: %d instants (%v), count %d; want %v, count %d", c.name, len(got), got, n, c.want, c.count)
		}
		for i := range got {
			if !got[i].Equal(c.want[i]) {
				t.Errorf("%s: instant %d is %v, want %v", c.name, i, got[i], c.want[i])
			}
		}
	}
	if _, n, _ := schedule.Instants(rate, day(1, 0), day(30, 0), 1000, 100); n != 100 {
		t.Errorf("count bounded by 100: %d", n)
	}
	for _, typ := range []carillonv1.ScheduleType{carillonv1.ScheduleType_SCHEDULE_TYPE_NONE, carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY} {
		spec := schedule.Spec{Type: typ, IntervalSeconds: 60}
		if _, _, err := schedule.Instants(spec, day(1, 0), day(2, 0), 10, 100); !errors.Is(err, schedule.ErrNoInstants) {
			t.Errorf("%s: %v, want ErrNoInstants", typ, err)
		}
	}
}
