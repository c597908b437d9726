package cron

import "time"

// maxSteps bounds the search loop. Quartz's own loop ends by its year
// guards, after at most about 12 steps per year it scans; the bound only
// protects against an unforeseen cycle.
const maxSteps = 1 << 16

// Next returns the first fire time strictly after t, in the schedule's
// location, or the zero time when the schedule has no fire time after t
// (its years have passed, or no date matches, such as February 30).
//
// Fire times are whole seconds. Next works as Quartz's
// CronExpression.getNextValidTimeAfter: it starts at the whole second after
// t and adjusts the fields from seconds up to years, carrying into the next
// larger field, and never iterates second by second.
func (s *Schedule) Next(t time.Time) time.Time {
	u, ok := s.next(t.Unix())
	if !ok {
		return time.Time{}
	}
	return time.Unix(u, 0).In(s.loc)
}

// next returns the first fire time after the second that contains unix
// second after. It is a port of Quartz 2.3.2's CronExpression.getTimeAfter,
// step for step, onto calendar.
func (s *Schedule) next(after int64) (int64, bool) {
	// Quartz compares candidate days against afterTime = t + 1s in
	// milliseconds. With t in whole seconds, "before afterTime" means
	// before the second start.
	start := after + 1
	c := calendar{z: &s.zone}
	c.setUnix(start)

	for range maxSteps {
		if c.Year() > loopLimitYear {
			return 0, false
		}

		// Second.
		sec, minute := c.Second(), c.Minute()
		if v, ok := s.second.next(sec); ok {
			sec = v
		} else {
			sec = s.second.first()
			minute++
			c.setMinute(minute)
		}
		c.setSecond(sec)

		// Minute.
		minute, hour := c.Minute(), c.Hour()
		t := -1
		if v, ok := s.minute.next(minute); ok {
			t, minute = minute, v
		} else {
			minute = s.minute.first()
			hour++
		}
		if minute != t {
			c.setSecond(0)
			c.setMinute(minute)
			setHour(&c, hour)
			continue
		}
		c.setMinute(minute)

		// Hour.
		hour = c.Hour()
		day := c.Day()
		t = -1
		if v, ok := s.hour.next(hour); ok {
			t, hour = hour, v
		} else {
			hour = s.hour.first()
			day++
		}
		if hour != t {
			c.setSecond(0)
			c.setMinute(0)
			c.setDay(day)
			setHour(&c, hour)
			continue
		}
		c.setHour(hour)

		// Day.
		day = c.Day()
		mon := c.Month()
		if s.byDayOfWeek {
			if !s.nextDayOfWeek(&c, day, mon) {
				continue
			}
		} else if !s.nextDayOfMonth(&c, start, day, mon, sec, minute, hour) {
			continue
		}
		c.setDay(day)

		// Month.
		mon = c.Month()
		year := c.Year()
		t = -1
		if year > maxYear {
			return 0, false // no fire time is ever found past maxYear
		}
		if v, ok := s.month.next(mon); ok {
			t, mon = mon, v
		} else {
			mon = s.month.first()
			year++
		}
		if mon != t {
			c.setMidnight()
			c.setDay(1)
			c.setMonth(mon - 1)
			c.setYear(year)
			continue
		}
		c.setMonth(mon - 1)

		// Year.
		year = c.Year()
		v, ok := s.years.next(year)
		if !ok {
			return 0, false // ran out of years
		}
		if v != year {
			c.setMidnight()
			c.setDay(1)
			c.setMonth(0)
			c.setYear(v)
			continue
		}
		c.setYear(v)
		return c.Unix(), true
	}
	return 0, false
}

// setHour sets the hour, and the hour after it when the first does not
// exist that day (a spring-forward gap), as Quartz's setCalendarHour does.
func setHour(c *calendar, hour int) {
	c.setHour(hour)
	if c.Hour() != hour && hour != 24 {
		c.setHour(hour + 1)
	}
}

// nextDayOfMonth applies the day-of-month rules to c, which is on day of
// month mon, with the time of day hour:minute:sec chosen. It reports
// whether the day fits; if not, it has moved c to the candidate day to try
// next.
func (s *Schedule) nextDayOfMonth(c *calendar, start int64, day, mon, sec, minute, hour int) bool {
	t := -1
	tmon := mon
	switch {
	case s.lastDayOfMonth && !s.nearestWeekday:
		t = day
		day = daysIn(mon, c.Year()) - s.lastDayOffset
		if t > day {
			mon++
			if mon > 12 {
				mon = 1
				tmon = 3333 // Quartz's marker: the month always differs
				c.addYear(1)
			}
			day = 1
		}
	case s.lastDayOfMonth:
		t = day
		day = daysIn(mon, c.Year()) - s.lastDayOffset
		var before bool
		day, before = s.weekdayNear(c, start, day, mon, sec, minute, hour)
		if before {
			day = 1
			mon++
		}
	case s.nearestWeekday:
		t = day
		day = s.dom.first()
		var before bool
		day, before = s.weekdayNear(c, start, day, mon, sec, minute, hour)
		if before {
			day = s.dom.first()
			mon++
		}
	default:
		if v, ok := s.dom.next(day); ok {
			t = day
			day = v
			if day > daysIn(mon, c.Year()) {
				day = s.dom.first()
				mon++
			}
		} else {
			day = s.dom.first()
			mon++
		}
	}
	if day != t || mon != tmon {
		c.setMidnight()
		c.setDay(day)
		c.setMonth(mon - 1)
		return false
	}
	return true
}

// weekdayNear moves day (of month mon in c's year) to the nearest weekday
// without leaving the month, as Quartz's "W" does, and reports whether that
// day at hour:minute:sec is before start. Quartz does this on a second
// calendar.
func (s *Schedule) weekdayNear(c *calendar, start int64, day, mon, sec, minute, hour int) (int, bool) {
	year := c.Year()
	w := calendar{z: c.z}
	w.setUnix(start)
	w.setMidnight()
	w.setDay(day)
	w.setMonth(mon - 1)
	w.setYear(year)

	last := daysIn(mon, year)
	switch dow := w.Weekday(); {
	case dow == saturday && day == 1:
		day += 2
	case dow == saturday:
		day--
	case dow == sunday && day == last:
		day -= 2
	case dow == sunday:
		day++
	}
	w.setSecond(sec)
	w.setMinute(minute)
	w.setHour(hour)
	w.setDay(day)
	w.setMonth(mon - 1)
	return day, w.Unix() < start
}

const (
	sunday   = 1
	saturday = 7
)

// nextDayOfWeek applies the day-of-week rules to c, which is on day of
// month mon. It reports whether the day fits; if not, it has moved c to
// the candidate day to try next.
func (s *Schedule) nextDayOfWeek(c *calendar, day, mon int) bool {
	switch {
	case s.lastDayOfWeek: // "6L": the last Friday of the month
		dow := s.dow.first()
		add := daysUntil(c.Weekday(), dow)
		last := daysIn(mon, c.Year())
		if day+add > last {
			moveTo(c, 1, mon) // the next month
			return false
		}
		for day+add+7 <= last {
			add += 7
		}
		if add > 0 {
			moveTo(c, day+add, mon-1)
			return false
		}
	case s.nthDayOfWeek != 0: // "6#3": the third Friday of the month
		dow := s.dow.first()
		add := daysUntil(c.Weekday(), dow)
		shifted := add > 0
		day += add
		week := day / 7
		if day%7 > 0 {
			week++
		}
		add = (s.nthDayOfWeek - week) * 7
		day += add
		if add < 0 || day > daysIn(mon, c.Year()) {
			moveTo(c, 1, mon)
			return false
		}
		if add > 0 || shifted {
			moveTo(c, day, mon-1)
			return false
		}
	default:
		cur := c.Weekday()
		dow := s.dow.first()
		if v, ok := s.dow.next(cur); ok {
			dow = v
		}
		add := daysUntil(cur, dow)
		if day+add > daysIn(mon, c.Year()) {
			moveTo(c, 1, mon)
			return false
		}
		if add > 0 {
			moveTo(c, day+add, mon-1)
			return false
		}
	}
	return true
}

// daysUntil returns the days from weekday cur to the next weekday dow
// (0 if they are equal).
func daysUntil(cur, dow int) int {
	switch {
	case cur < dow:
		return dow - cur
	case cur > dow:
		return dow + 7 - cur
	}
	return 0
}

// moveTo sets c to midnight of day in month0 (0-based; 12 rolls over into
// the next year).
func moveTo(c *calendar, day, month0 int) {
	c.setMidnight()
	c.setDay(day)
	c.setMonth(month0)
}
