package calendar

import (
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Excluded reports whether c excludes instant t.
func (c *Calendar) Excluded(t time.Time) bool {
	lt := t.In(c.loc)
	switch c.def.Kind {
	case carillonv1.CalendarKind_CALENDAR_KIND_HOLIDAY:
		y, m, d := lt.Date()
		return c.dates[y*10000+int(m)*100+d]
	case carillonv1.CalendarKind_CALENDAR_KIND_ANNUAL:
		_, m, d := lt.Date()
		return c.days[int(m)*100+d]
	case carillonv1.CalendarKind_CALENDAR_KIND_WEEKLY:
		return c.weekdays[lt.Weekday()]
	case carillonv1.CalendarKind_CALENDAR_KIND_DAILY:
		return c.dailyExcluded(lt)
	case carillonv1.CalendarKind_CALENDAR_KIND_CRON:
		s := t.Truncate(time.Second)
		return c.cron.Next(s.Add(-time.Second)).Equal(s)
	}
	return false
}

// dailyExcluded is Quartz's DailyCalendar.isTimeIncluded, negated: not
// inverted, the included instants lie strictly between the day's start
// and the range or strictly between the range and the day's end (its last
// millisecond); inverted, they are the range, both ends included.
func (c *Calendar) dailyExcluded(lt time.Time) bool {
	sod, rs, re, eod := c.dayBounds(lt)
	if c.def.Invert {
		return lt.Before(rs) || lt.After(re)
	}
	included := (lt.After(sod) && lt.Before(rs)) || (lt.After(re) && lt.Before(eod))
	return !included
}

// dayBounds returns the start of lt's day, the range's ends on it and the
// day's last millisecond, wall-clock times in c's zone.
func (c *Calendar) dayBounds(lt time.Time) (sod, rs, re, eod time.Time) {
	y, m, d := lt.Date()
	return wall(y, m, d, 0, c.loc), wall(y, m, d, c.start, c.loc), wall(y, m, d, c.end, c.loc), wall(y, m, d, 24*time.Hour-time.Millisecond, c.loc)
}

// wall returns the instant of the wall-clock time off after midnight of
// day y-m-d in loc, resolved as Java's lenient GregorianCalendar (which
// Quartz's calendars use) resolves it: a time a DST change repeats is its
// second occurrence (standard time); one it skips is read with the offset
// before the change (02:30 in a 02:00 to 03:00 gap is 03:30). time.Date
// does the latter but picks the first occurrence of a repeated time.
func wall(y int, m time.Month, d int, off time.Duration, loc *time.Location) time.Time {
	t := time.Date(y, m, d, int(off/time.Hour), int(off%time.Hour/time.Minute), int(off%time.Minute/time.Second), int(off%time.Second), loc)
	for _, later := range []time.Duration{time.Hour, 30 * time.Minute} {
		if u := t.Add(later); sameWall(u, t) {
			return u
		}
	}
	return t
}

// sameWall reports whether a and b show the same wall-clock time.
func sameWall(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd && a.Hour() == b.Hour() && a.Minute() == b.Minute() && a.Second() == b.Second() && a.Nanosecond() == b.Nanosecond()
}

// skip returns an instant after t, where t is one c excludes, such that c
// excludes every instant from t up to it: where to look for an included
// instant next. It steps over a whole excluded day, range or second at
// once.
func (c *Calendar) skip(t time.Time) time.Time {
	lt := t.In(c.loc)
	y, m, d := lt.Date()
	switch c.def.Kind {
	case carillonv1.CalendarKind_CALENDAR_KIND_HOLIDAY, carillonv1.CalendarKind_CALENDAR_KIND_ANNUAL, carillonv1.CalendarKind_CALENDAR_KIND_WEEKLY:
		return wall(y, m, d+1, 0, c.loc)
	case carillonv1.CalendarKind_CALENDAR_KIND_DAILY:
		sod, rs, re, eod := c.dayBounds(lt)
		switch {
		case c.def.Invert && lt.Before(rs):
			return rs
		case c.def.Invert: // after the range: the next day's range
			return wall(y, m, d+1, c.start, c.loc)
		case !lt.After(sod): // the day's first millisecond
			return sod.Add(time.Millisecond)
		case !lt.Before(rs) && !lt.After(re):
			return re.Add(time.Millisecond)
		case !lt.Before(eod): // the day's last millisecond, and the next day's first
			return wall(y, m, d+1, time.Millisecond, c.loc)
		}
	}
	return t.Truncate(time.Second).Add(time.Second) // CRON: the next second
}
