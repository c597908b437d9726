package calendar

import (
	"errors"
	"strings"
	"testing"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

const (
	holiday = carillonv1.CalendarKind_CALENDAR_KIND_HOLIDAY
	annual  = carillonv1.CalendarKind_CALENDAR_KIND_ANNUAL
	weekly  = carillonv1.CalendarKind_CALENDAR_KIND_WEEKLY
	daily   = carillonv1.CalendarKind_CALENDAR_KIND_DAILY
	cronK   = carillonv1.CalendarKind_CALENDAR_KIND_CRON
)

func TestCompileRefusesNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		def   Definition
		field string
		msg   string
	}{
		{"no kind", Definition{}, "kind", "must be one of"},
		{"bad zone", Definition{Kind: holiday, TimeZone: "Mars/Olympus", ExcludedDates: []string{"2026-01-01"}}, "time_zone", "IANA"},
		{"no dates", Definition{Kind: holiday}, "excluded_dates", "required"},
		{"bad date", Definition{Kind: holiday, ExcludedDates: []string{"2026-01-01", "2026-02-30"}}, "excluded_dates[1]", "YYYY-MM-DD"},
		{"bad day", Definition{Kind: annual, ExcludedDays: []string{"13-01"}}, "excluded_days[0]", "MM-DD"},
		{"long day", Definition{Kind: annual, ExcludedDays: []string{"2026-12-25"}}, "excluded_days[0]", "MM-DD"},
		{"bad weekday", Definition{Kind: weekly, ExcludedWeekdays: []string{"SAT", "Funday"}}, "excluded_weekdays[1]", "MON"},
		{"all weekdays", Definition{Kind: weekly, ExcludedWeekdays: []string{"MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"}}, "excluded_weekdays", "all seven"},
		{"no start", Definition{Kind: daily, RangeEnd: "10:00"}, "range_start", "required"},
		{"bad end", Definition{Kind: daily, RangeStart: "09:00", RangeEnd: "24:00"}, "range_end", "HH:MM"},
		{"end before start", Definition{Kind: daily, RangeStart: "09:00", RangeEnd: "08:59:59.999"}, "range_end", "after range_start"},
		{"bad cron", Definition{Kind: cronK, Cron: "0 0 25 * * ?"}, "cron", ""},
		{"other kind's field", Definition{Kind: holiday, ExcludedDates: []string{"2026-01-01"}, Cron: "* * * * * ?"}, "cron", "must be empty"},
		{"invert on weekly", Definition{Kind: weekly, ExcludedWeekdays: []string{"SUN"}, Invert: true}, "invert", "must be empty"},
	} {
		_, err := Compile(tc.def)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Error(), tc.msg) {
			t.Errorf("%s: got %v, want a FieldError on %s saying %q", tc.name, err, tc.field, tc.msg)
		}
	}
}

func TestCompileNormalizesWeekdays(t *testing.T) {
	c, err := Compile(Definition{Kind: weekly, ExcludedWeekdays: []string{"sat", "Sun"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Definition().ExcludedWeekdays, ","); got != "SAT,SUN" {
		t.Fatalf("weekdays %s, want SAT,SUN", got)
	}
}

func TestExcluded(t *testing.T) {
	utc := func(s string) time.Time {
		t.Helper()
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	for _, tc := range []struct {
		name string
		def  Definition
		at   string
		want bool
	}{
		{"holiday in its zone", Definition{Kind: holiday, TimeZone: "Asia/Shanghai", ExcludedDates: []string{"2026-10-01"}}, "2026-09-30T16:00:00Z", true},
		{"holiday's day before", Definition{Kind: holiday, TimeZone: "Asia/Shanghai", ExcludedDates: []string{"2026-10-01"}}, "2026-09-30T15:59:59.999Z", false},
		{"annual any year", Definition{Kind: annual, TimeZone: "UTC", ExcludedDays: []string{"12-25"}}, "2031-12-25T10:00:00Z", true},
		{"annual leap day", Definition{Kind: annual, TimeZone: "UTC", ExcludedDays: []string{"02-29"}}, "2028-02-29T10:00:00Z", true},
		{"weekly", Definition{Kind: weekly, TimeZone: "UTC", ExcludedWeekdays: []string{"SUN"}}, "2026-11-22T10:00:00Z", true},
		{"weekly other day", Definition{Kind: weekly, TimeZone: "UTC", ExcludedWeekdays: []string{"SUN"}}, "2026-11-23T10:00:00Z", false},
		{"daily in range", Definition{Kind: daily, TimeZone: "UTC", RangeStart: "09:00", RangeEnd: "17:00"}, "2026-11-23T17:00:00Z", true},
		{"daily after range", Definition{Kind: daily, TimeZone: "UTC", RangeStart: "09:00", RangeEnd: "17:00"}, "2026-11-23T17:00:00.001Z", false},
		{"daily midnight (Quartz)", Definition{Kind: daily, TimeZone: "UTC", RangeStart: "09:00", RangeEnd: "17:00"}, "2026-11-23T00:00:00Z", true},
		{"daily inverted", Definition{Kind: daily, TimeZone: "UTC", RangeStart: "09:00", RangeEnd: "17:00", Invert: true}, "2026-11-23T08:00:00Z", true},
		{"cron second", Definition{Kind: cronK, TimeZone: "UTC", Cron: "30 * * * * ?"}, "2026-11-23T08:00:30.500Z", true},
		{"cron other second", Definition{Kind: cronK, TimeZone: "UTC", Cron: "30 * * * * ?"}, "2026-11-23T08:00:31Z", false},
	} {
		c, err := Compile(tc.def)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := c.Excluded(utc(tc.at)); got != tc.want {
			t.Errorf("%s: Excluded(%s) = %v, want %v", tc.name, tc.at, got, tc.want)
		}
	}
}

func TestNextIncluded(t *testing.T) {
	we, _ := Compile(Definition{Kind: weekly, TimeZone: "UTC", ExcludedWeekdays: []string{"SAT", "SUN"}})
	hol, _ := Compile(Definition{Kind: holiday, TimeZone: "UTC", ExcludedDates: []string{"2026-11-23"}})
	s := NewSet(we, hol)
	sat := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	got, left, ok := s.NextIncluded(sat, 10)
	if want := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC); !ok || !got.Equal(want) {
		t.Fatalf("NextIncluded(Saturday) = %v, %v; want %v (past the weekend and Monday's holiday)", got, ok, want)
	}
	if left != 7 {
		t.Errorf("budget left %d, want 7 (three days stepped over)", left)
	}
	if _, _, ok := s.NextIncluded(sat, 2); ok {
		t.Error("NextIncluded with a budget of 2 found an instant 3 excluded days ahead")
	}
	var none *Set
	if none.Excluded(sat) || none.Len() != 0 {
		t.Error("the nil Set excludes something")
	}
}
