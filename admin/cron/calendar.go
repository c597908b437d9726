package cron

// calendar mimics the lenient java.util.GregorianCalendar that Quartz's
// CronExpression.getTimeAfter works on. Setting a field only stores it; the
// next read converts all fields to an instant (out-of-range values roll
// over, so day 32 is the 1st of the next month and hour 24 is midnight of
// the next day), resolving the wall time with the zone's rule, and then
// recomputes every field from that instant. Quartz's answers, including the
// DST ones, follow from these two steps, so Next reproduces them exactly by
// making the same calls on this calendar.
type calendar struct {
	z     *zone
	cache zoneCache

	// The fields, as set or as last computed. month is 0-based, as in Java.
	year, month, day, hour, minute, second int

	valid   bool  // the fields were computed from unix, which they yield again
	unix    int64 // the instant, in Unix seconds
	weekday int   // 1-7 = Sunday-Saturday, valid when valid is set
}

// setUnix sets the calendar to instant u and marks it for a recomputation
// from its fields, as Quartz's setTime followed by set(MILLISECOND, 0) does.
func (c *calendar) setUnix(u int64) {
	c.fromUnix(u)
	c.valid = false
}

// The setters store a field. Java recomputes the instant after any set,
// even of an unchanged value; Next skips that when the value is unchanged
// and the fields are already the result of a recomputation, which gives the
// same instant again (see complete).
func (c *calendar) setYear(v int)   { setField(c, &c.year, v) }
func (c *calendar) setMonth(v int)  { setField(c, &c.month, v) }
func (c *calendar) setDay(v int)    { setField(c, &c.day, v) }
func (c *calendar) setHour(v int)   { setField(c, &c.hour, v) }
func (c *calendar) setMinute(v int) { setField(c, &c.minute, v) }
func (c *calendar) setSecond(v int) { setField(c, &c.second, v) }

// setMidnight sets the time of day to 00:00:00.
func (c *calendar) setMidnight() {
	c.setHour(0)
	c.setMinute(0)
	c.setSecond(0)
}

func setField(c *calendar, f *int, v int) {
	if *f != v {
		*f = v
		c.valid = false
	}
}

func (c *calendar) Year() int    { c.complete(); return c.year }
func (c *calendar) Month() int   { c.complete(); return c.month + 1 } // 1-12
func (c *calendar) Day() int     { c.complete(); return c.day }
func (c *calendar) Hour() int    { c.complete(); return c.hour }
func (c *calendar) Minute() int  { c.complete(); return c.minute }
func (c *calendar) Second() int  { c.complete(); return c.second }
func (c *calendar) Weekday() int { c.complete(); return c.weekday }

// Unix returns the instant the fields denote.
func (c *calendar) Unix() int64 { c.complete(); return c.unix }

// addYear adds n years, keeping the day within the month (Java's add(YEAR)).
func (c *calendar) addYear(n int) {
	c.complete()
	c.year += n
	c.day = min(c.day, daysIn(c.month+1, c.year))
	c.valid = false
}

// complete recomputes the instant from the fields, then the fields from
// the instant, unless the fields are already the result of that: the
// instant the wall-time rule gives is never in the first pass of an
// overlap, so reading its fields back yields the same instant.
func (c *calendar) complete() {
	if c.valid {
		return
	}
	year, month := c.year+floorDiv(c.month, 12), floorMod(c.month, 12)
	days := daysFromCivil(year, month+1, 1) + int64(c.day-1)
	wall := days*86400 + int64(c.hour)*3600 + int64(c.minute)*60 + int64(c.second)
	c.fromUnix(wall - c.z.wallOffset(wall, &c.cache))
}

// fromUnix sets every field from instant u.
func (c *calendar) fromUnix(u int64) {
	local := u + c.z.offsetAt(u, &c.cache)
	days := floorDiv64(local, 86400)
	secs := int(local - days*86400)
	c.year, c.month, c.day = civilFromDays(days)
	c.month--
	c.hour, c.minute, c.second = secs/3600, secs/60%60, secs%60
	c.weekday = int(floorMod64(days+4, 7)) + 1 // 1970-01-01 was a Thursday
	c.unix = u
	c.valid = true
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// daysIn returns the number of days in month m (1-12) of year y.
func daysIn(m, y int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the days since 1970-01-01 of the proleptic
// Gregorian date y-m-d (m 1-12, d 1-31).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int) {
	z += 719468
	era := floorDiv64(z, 146097)
	doe := int(z - era*146097)
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	y = yoe + int(era)*400
	if m <= 2 {
		y++
	}
	return y, m, d
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int) int { return a - floorDiv(a, b)*b }

func floorDiv64(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod64(a, b int64) int64 { return a - floorDiv64(a, b)*b }
