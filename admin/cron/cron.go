package cron

import "time"

// Schedule is a parsed cron expression bound to a time zone. It is
// immutable and safe for concurrent use.
type Schedule struct {
	spec string
	loc  *time.Location
	zone zone

	second, minute, hour set
	dom, month, dow      set // dom: 1-31, month: 1-12, dow: 1-7 = SUN-SAT
	years                yearSet

	// byDayOfWeek is true when day-of-month is "?", so days are chosen by
	// day-of-week; otherwise day-of-week is "?".
	byDayOfWeek bool

	lastDayOfMonth bool // "L", "LW", "L-n", "L-nW"
	lastDayOffset  int  // n of "L-n"
	nearestWeekday bool // "15W", "LW"
	lastDayOfWeek  bool // "6L"
	nthDayOfWeek   int  // k of "6#k"; 0 if unused
}

// String returns the expression exactly as it was given to [Parse].
func (s *Schedule) String() string { return s.spec }

// Location returns the time zone in which the schedule is evaluated; UTC if
// Parse was given a nil location.
func (s *Schedule) Location() *time.Location { return s.loc }

func currentYear() int { return time.Now().Year() }
