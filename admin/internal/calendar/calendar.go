package calendar

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/carillonhq/carillon/admin/cron"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Definition is what a calendar excludes: its kind and that kind's fields.
// Field names and formats are those of carillon.v1.Calendar.
type Definition struct {
	Kind carillonv1.CalendarKind `json:"kind"`
	// TimeZone is an IANA name; empty means the admin's zone (time.Local).
	TimeZone string `json:"time_zone,omitempty"`
	// ExcludedDates are HOLIDAY's days, "YYYY-MM-DD".
	ExcludedDates []string `json:"excluded_dates,omitempty"`
	// ExcludedDays are ANNUAL's days of every year, "MM-DD".
	ExcludedDays []string `json:"excluded_days,omitempty"`
	// ExcludedWeekdays are WEEKLY's days, "MON" to "SUN".
	ExcludedWeekdays []string `json:"excluded_weekdays,omitempty"`
	// RangeStart and RangeEnd are DAILY's range, "HH:MM[:SS[.mmm]]".
	RangeStart string `json:"range_start,omitempty"`
	RangeEnd   string `json:"range_end,omitempty"`
	// Invert makes DAILY exclude the times outside its range.
	Invert bool `json:"invert,omitempty"`
	// Cron is CRON's Quartz cron expression.
	Cron string `json:"cron,omitempty"`
}

// FieldError says which field of a Definition is wrong and why.
type FieldError struct {
	// Field is the field's name in carillon.v1.Calendar, with an index for
	// a list's item: "excluded_dates[2]".
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns e.Err.
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{field, fmt.Errorf(format, args...)}
}

// Calendar is a compiled Definition: it answers whether an instant is
// excluded. It is safe for concurrent use.
type Calendar struct {
	def Definition
	loc *time.Location

	dates    map[int]bool // HOLIDAY: year*10000 + month*100 + day
	days     map[int]bool // ANNUAL: month*100 + day
	weekdays [7]bool      // WEEKLY, by time.Weekday
	// DAILY: the range's ends, as durations after midnight (wall clock).
	start, end time.Duration
	cron       *cron.Schedule // CRON
}

// weekdayNames are the accepted day names, in time.Weekday order.
var weekdayNames = []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}

// Compile checks d and returns its calendar; an error is a *FieldError.
// Only the fields of d's kind may be set. Weekday names are accepted in
// any case; Definition returns them upper case.
func Compile(d Definition) (*Calendar, error) {
	loc, err := location(d.TimeZone)
	if err != nil {
		return nil, err
	}
	if err := onlyKindFields(d); err != nil {
		return nil, err
	}
	c := &Calendar{def: d, loc: loc}
	switch d.Kind {
	case carillonv1.CalendarKind_CALENDAR_KIND_HOLIDAY:
		err = c.compileDates()
	case carillonv1.CalendarKind_CALENDAR_KIND_ANNUAL:
		err = c.compileDays()
	case carillonv1.CalendarKind_CALENDAR_KIND_WEEKLY:
		err = c.compileWeekdays()
	case carillonv1.CalendarKind_CALENDAR_KIND_DAILY:
		err = c.compileRange()
	case carillonv1.CalendarKind_CALENDAR_KIND_CRON:
		c.cron, err = cron.Parse(d.Cron, loc)
		if err != nil {
			err = &FieldError{"cron", err}
		}
	default:
		err = fieldErr("kind", "must be one of CALENDAR_KIND_HOLIDAY, _ANNUAL, _WEEKLY, _DAILY, _CRON, got %s", d.Kind)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Definition returns the calendar's definition, weekday names upper case.
func (c *Calendar) Definition() Definition { return c.def }

// Location returns the zone the calendar's days and times are in.
func (c *Calendar) Location() *time.Location { return c.loc }

func location(name string) (*time.Location, error) {
	if name == "" {
		return time.Local, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fieldErr("time_zone", "%q is not an IANA time zone name (such as \"Europe/Berlin\")", name)
	}
	return loc, nil
}

// onlyKindFields refuses a field that belongs to another kind than d's:
// it would be stored and ignored.
func onlyKindFields(d Definition) error {
	set := map[string]bool{
		"excluded_dates":    len(d.ExcludedDates) > 0,
		"excluded_days":     len(d.ExcludedDays) > 0,
		"excluded_weekdays": len(d.ExcludedWeekdays) > 0,
		"range_start":       d.RangeStart != "",
		"range_end":         d.RangeEnd != "",
		"invert":            d.Invert,
		"cron":              d.Cron != "",
	}
	own := map[carillonv1.CalendarKind][]string{
		carillonv1.CalendarKind_CALENDAR_KIND_HOLIDAY: {"excluded_dates"},
		carillonv1.CalendarKind_CALENDAR_KIND_ANNUAL:  {"excluded_days"},
		carillonv1.CalendarKind_CALENDAR_KIND_WEEKLY:  {"excluded_weekdays"},
		carillonv1.CalendarKind_CALENDAR_KIND_DAILY:   {"range_start", "range_end", "invert"},
		carillonv1.CalendarKind_CALENDAR_KIND_CRON:    {"cron"},
	}[d.Kind]
	for _, f := range []string{"excluded_dates", "excluded_days", "excluded_weekdays", "range_start", "range_end", "invert", "cron"} {
		if set[f] && !slices.Contains(own, f) {
			return fieldErr(f, "must be empty for a calendar of kind %s", d.Kind)
		}
	}
	return nil
}

func (c *Calendar) compileDates() error {
	if len(c.def.ExcludedDates) == 0 {
		return fieldErr("excluded_dates", "required for CALENDAR_KIND_HOLIDAY: at least one date, \"YYYY-MM-DD\"")
	}
	c.dates = map[int]bool{}
	for i, s := range c.def.ExcludedDates {
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return fieldErr(fmt.Sprintf("excluded_dates[%d]", i), "must be a date \"YYYY-MM-DD\", got %q", s)
		}
		c.dates[t.Year()*10000+int(t.Month())*100+t.Day()] = true
	}
	return nil
}

func (c *Calendar) compileDays() error {
	if len(c.def.ExcludedDays) == 0 {
		return fieldErr("excluded_days", "required for CALENDAR_KIND_ANNUAL: at least one day, \"MM-DD\"")
	}
	c.days = map[int]bool{}
	for i, s := range c.def.ExcludedDays {
		t, err := time.Parse("2006-01-02", "2000-"+s) // a leap year, so 02-29 is a day
		if err != nil || len(s) != 5 {
			return fieldErr(fmt.Sprintf("excluded_days[%d]", i), "must be a day of the year \"MM-DD\", got %q", s)
		}
		c.days[int(t.Month())*100+t.Day()] = true
	}
	return nil
}

func (c *Calendar) compileWeekdays() error {
	if len(c.def.ExcludedWeekdays) == 0 {
		return fieldErr("excluded_weekdays", "required for CALENDAR_KIND_WEEKLY: at least one of MON, TUE, WED, THU, FRI, SAT, SUN")
	}
	names := make([]string, len(c.def.ExcludedWeekdays))
	for i, s := range c.def.ExcludedWeekdays {
		d := slices.Index(weekdayNames, strings.ToUpper(s))
		if d < 0 {
			return fieldErr(fmt.Sprintf("excluded_weekdays[%d]", i), "must be one of MON, TUE, WED, THU, FRI, SAT, SUN, got %q", s)
		}
		c.weekdays[d], names[i] = true, weekdayNames[d]
	}
	if !slices.Contains(c.weekdays[:], false) {
		return fieldErr("excluded_weekdays", "excludes all seven days, so no job using it could ever fire")
	}
	c.def.ExcludedWeekdays = names
	return nil
}

func (c *Calendar) compileRange() error {
	var err error
	if c.start, err = timeOfDay("range_start", c.def.RangeStart); err != nil {
		return err
	}
	if c.end, err = timeOfDay("range_end", c.def.RangeEnd); err != nil {
		return err
	}
	if c.start >= c.end {
		return fieldErr("range_end", "must be after range_start (%s), got %s", c.def.RangeStart, c.def.RangeEnd)
	}
	return nil
}

// timeOfDay parses "HH:MM[:SS[.mmm]]" into the time after midnight.
func timeOfDay(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, fieldErr(field, "required for CALENDAR_KIND_DAILY: a time of day \"HH:MM[:SS[.mmm]]\"")
	}
	for _, layout := range []string{"15:04", "15:04:05", "15:04:05.000"} {
		if t, err := time.Parse(layout, s); err == nil && len(s) == len(layout) {
			return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute +
				time.Duration(t.Second())*time.Second + time.Duration(t.Nanosecond()), nil
		}
	}
	return 0, fieldErr(field, "must be a time of day \"HH:MM[:SS[.mmm]]\" from 00:00 to 23:59:59.999, got %q", s)
}
