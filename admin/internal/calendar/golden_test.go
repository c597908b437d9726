package calendar_test

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/calendar"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// testdata/quartz.golden holds the answers of real Quartz 2.3.2's calendar
// classes (testdata/QuartzCalendarRef.java; regenerate with testdata/run):
// "fire" lines the fire times of a cron trigger over calendars, "incl"
// lines whether the calendars include given instants. The test needs no
// Java: it compares schedule.Next and calendar.Set with the file.
func TestQuartzGolden(t *testing.T) {
	f, err := os.Open("testdata/quartz.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		p := strings.Split(sc.Text(), "|")
		if len(p) < 6 {
			continue
		}
		n++
		id, zone, want := p[1], p[3], p[len(p)-1]
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		set := parseCalendars(t, id, p[2], zone)
		var got []string
		switch p[0] {
		case "fire":
			spec := schedule.Spec{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: p[4], TimeZone: zone, Calendars: set}
			at, err := time.Parse(time.RFC3339, p[5])
			if err != nil {
				t.Fatal(err)
			}
			count, _ := strconv.Atoi(p[6])
			for range count {
				if at, err = schedule.Next(spec, at); err != nil {
					t.Fatalf("%s: %v", id, err)
				}
				if at.IsZero() {
					got = append(got, "NONE")
					break
				}
				got = append(got, at.In(loc).Format(time.RFC3339))
			}
		case "incl":
			for _, s := range strings.Split(p[4], ",") {
				at, err := time.Parse(time.RFC3339Nano, s)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, map[bool]string{true: "0", false: "1"}[set.Excluded(at)])
			}
		}
		if g := strings.Join(got, ","); g != want {
			t.Errorf("%s (%s in %s):\n got %s\nwant %s", id, p[2], zone, g, want)
		}
	}
	if n < 30 {
		t.Fatalf("read %d golden cases, want at least 30", n)
	}
}

// parseCalendars reads the golden file's calendars: "KIND:ARGS" joined by
// ";" (see QuartzCalendarRef.java).
func parseCalendars(t *testing.T, id, spec, zone string) *calendar.Set {
	t.Helper()
	var cals []*calendar.Calendar
	for _, c := range strings.Split(spec, ";") {
		kind, args, _ := strings.Cut(c, ":")
		d := calendar.Definition{TimeZone: zone}
		switch kind {
		case "HOLIDAY":
			d.Kind, d.ExcludedDates = carillonv1.CalendarKind_CALENDAR_KIND_HOLIDAY, strings.Split(args, ",")
		case "ANNUAL":
			d.Kind, d.ExcludedDays = carillonv1.CalendarKind_CALENDAR_KIND_ANNUAL, strings.Split(args, ",")
		case "WEEKLY":
			d.Kind, d.ExcludedWeekdays = carillonv1.CalendarKind_CALENDAR_KIND_WEEKLY, strings.Split(args, ",")
		case "DAILY", "DAILY!":
			start, end, _ := strings.Cut(args, "-")
			d.Kind, d.RangeStart, d.RangeEnd, d.Invert = carillonv1.CalendarKind_CALENDAR_KIND_DAILY, quartzTime(start), quartzTime(end), kind == "DAILY!"
		case "CRON":
			d.Kind, d.Cron = carillonv1.CalendarKind_CALENDAR_KIND_CRON, args
		}
		cal, err := calendar.Compile(d)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		cals = append(cals, cal)
	}
	return calendar.NewSet(cals...)
}

// quartzTime turns Quartz's "HH:MM:SS:mmm" into "HH:MM:SS.mmm".
func quartzTime(s string) string {
	if strings.Count(s, ":") == 3 {
		i := strings.LastIndex(s, ":")
		return s[:i] + "." + s[i+1:]
	}
	return s
}
