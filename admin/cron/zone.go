package cron

import (
	"math"
	"time"
)

// A zone converts between instants and local wall-clock times the way
// Quartz does. Quartz runs on java.util.GregorianCalendar, whose rule for a
// wall time w is: use the offset in force after the latest transition whose
// local start (transition instant + new offset) is at or before w. So a time
// in a spring-forward gap is read with the old offset (02:30 becomes 03:30
// daylight time), and a time in a fall-back overlap is read with the new,
// standard offset (the second occurrence). The golden tests show the same
// after 2037, where the JDK switches from a transition table to the zone's
// rule.
//
// Go's time.Date resolves both cases differently, so it is not used.
type zone struct {
	loc *time.Location

	fixed       bool // the offset never changes after 1900
	fixedOffset int64
}

func newZone(loc *time.Location) zone {
	z := zone{loc: loc}
	ref := time.Date(1900, 1, 1, 0, 0, 0, 0, loc)
	if _, end := ref.ZoneBounds(); end.IsZero() {
		_, off := ref.Zone()
		z.fixed, z.fixedOffset = true, int64(off)
	}
	return z
}

// zoneCache remembers the zone period found last. Each call of Next has its
// own, so a Schedule stays safe for concurrent use.
type zoneCache struct {
	start, end, offset int64 // the period [start, end) has offset
}

// offsetAt returns the UTC offset in seconds at instant u (Unix seconds).
func (z *zone) offsetAt(u int64, c *zoneCache) int64 {
	if z.fixed {
		return z.fixedOffset
	}
	if c.start <= u && u < c.end {
		return c.offset
	}
	t := time.Unix(u, 0).In(z.loc)
	_, off := t.Zone()
	start, end := t.ZoneBounds()
	c.start, c.end, c.offset = math.MinInt64, math.MaxInt64, int64(off)
	if !start.IsZero() {
		c.start = start.Unix()
	}
	if !end.IsZero() {
		c.end = end.Unix()
	}
	return c.offset
}

// wallOffset returns the offset with which the JDK reads wall time w
// (seconds since 1970-01-01T00:00 local time).
func (z *zone) wallOffset(w int64, c *zoneCache) int64 {
	if z.fixed {
		return z.fixedOffset
	}
	// No instant for w lies after w+14h (offsets are at least -12h), so
	// walk back through the periods from there to the latest one whose
	// local start is not after w. Go may split a period at a year boundary
	// where the offset does not change; that does not change the answer.
	u := w + 14*3600
	for {
		off := z.offsetAt(u, c)
		if c.start == math.MinInt64 || c.start+off <= w {
			return off
		}
		u = c.start - 1
	}
}
