package schedule_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/calendar"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func mustCalendars(t *testing.T, defs ...calendar.Definition) *calendar.Set {
	t.Helper()
	var cals []*calendar.Calendar
	for _, d := range defs {
		c, err := calendar.Compile(d)
		if err != nil {
			t.Fatal(err)
		}
		cals = append(cals, c)
	}
	return calendar.NewSet(cals...)
}

var weekend = calendar.Definition{Kind: carillonv1.CalendarKind_CALENDAR_KIND_WEEKLY, TimeZone: "UTC", ExcludedWeekdays: []string{"SAT", "SUN"}}

func TestFixRateSkipsExcludedInstantsKeepingItsPhase(t *testing.T) {
	t.Parallel()
	spec := schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 7 * 3600, Calendars: mustCalendars(t, weekend)}
	fri := time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC)
	got, err := schedule.Next(spec, fri)
	if err != nil {
		t.Fatal(err)
	}
	// fri + 7h·k, the first k landing on neither Saturday nor Sunday.
	want := fri.Add(7 * time.Hour)
	for want.Weekday() == time.Saturday || want.Weekday() == time.Sunday {
		want = want.Add(7 * time.Hour)
	}
	if !got.Equal(want) {
		t.Fatalf("Next = %v, want %v", got, want)
	}
}

func TestCalendarsExcludingEverythingEndTheSchedule(t *testing.T) {
	t.Parallel()
	// 00:00:00.001 to 23:59:59.998, and (as in Quartz) each day's first
	// and last millisecond: all of every day.
	allDay := calendar.Definition{Kind: carillonv1.CalendarKind_CALENDAR_KIND_DAILY, TimeZone: "UTC", RangeStart: "00:00:00.001", RangeEnd: "23:59:59.998"}
	spec := schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "* * * * * ?", TimeZone: "UTC", Calendars: mustCalendars(t, allDay)}
	from := time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC)
	began := time.Now()
	got, err := schedule.Next(spec, from)
	if err != nil || !got.IsZero() {
		t.Fatalf("Next = %v, %v; want zero: the calendar excludes every second", got, err)
	}
	times, err := schedule.Preview(spec, from, 5)
	if err != nil || len(times) != 0 {
		t.Fatalf("Preview = %v, %v; want none", times, err)
	}
	t.Logf("two searches to the budget took %s", time.Since(began))
}

func TestLateDoesNotCountExcludedInstants(t *testing.T) {
	t.Parallel()
	spec := schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "0 0 12 * * ?", TimeZone: "UTC", Calendars: mustCalendars(t, weekend)}
	fri := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	// Down from Friday noon to Tuesday 13:00: Friday and Monday missed,
	// the weekend excluded; Tuesday's noon is next.
	m, next, err := schedule.Late(spec, fri, time.Date(2026, 11, 24, 11, 0, 0, 0, time.UTC), 100)
	if err != nil {
		t.Fatal(err)
	}
	want := schedule.Missed{First: fri, Last: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC), Count: 2, Exact: true}
	if diff := cmp.Diff(want, m); diff != "" || !next.Equal(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("Late: next %v, missed (-want +got):\n%s", next, diff)
	}
	// Beyond maxCount, the last missed instant is found by bisection, still
	// skipping the excluded ones: Friday 2026-12-18 noon, cutoff Sunday.
	m, _, err = schedule.Late(spec, fri, time.Date(2026, 12, 20, 11, 0, 0, 0, time.UTC), 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 12, 18, 12, 0, 0, 0, time.UTC); m.Exact || !m.Last.Equal(want) {
		t.Fatalf("Late beyond maxCount: %+v, want Last %v, not exact", m, want)
	}
}
