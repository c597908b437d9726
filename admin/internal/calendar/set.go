package calendar

import (
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Set is the calendars of a job: an instant any of them excludes is
// excluded. The nil *Set excludes nothing.
type Set struct {
	cals []*Calendar
}

// NewSet returns the set of cals; nil when there are none.
func NewSet(cals ...*Calendar) *Set {
	if len(cals) == 0 {
		return nil
	}
	return &Set{cals: cals}
}

// Len returns how many calendars s holds.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.cals)
}

// Excluded reports whether a calendar of s excludes t.
func (s *Set) Excluded(t time.Time) bool {
	return s.excluder(t) != nil
}

func (s *Set) excluder(t time.Time) *Calendar {
	if s == nil {
		return nil
	}
	for _, c := range s.cals {
		if c.Excluded(t) {
			return c
		}
	}
	return nil
}

// NextIncluded returns t when no calendar of s excludes it, and otherwise
// an instant u after t such that the calendars exclude every instant from
// t up to u: the first instant at or after t they include, stepping over
// at most budget excluded stretches (a day, a time range), or the second
// after an excluded one of a CRON calendar. A caller whose instants are
// sparser than seconds (a cron schedule) looks on from its first instant
// at or after u, instead of from every second a CRON calendar excludes,
// and asks again. It returns the budget left, and false when it ran out:
// the calendars exclude every instant that far ahead.
func (s *Set) NextIncluded(t time.Time, budget int) (time.Time, int, bool) {
	for ; budget > 0; budget-- {
		c := s.excluder(t)
		if c == nil {
			return t, budget, true
		}
		t = c.skip(t)
		if c.def.Kind == carillonv1.CalendarKind_CALENDAR_KIND_CRON {
			return t, budget - 1, budget > 1
		}
	}
	return time.Time{}, 0, false
}
