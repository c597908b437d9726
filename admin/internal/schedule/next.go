package schedule

import (
	"fmt"
	"sync"
	"time"

	"github.com/carillonhq/carillon/admin/cron"
	"github.com/carillonhq/carillon/admin/internal/calendar"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Spec is the schedule part of a job.
type Spec struct {
	Type            carillonv1.ScheduleType
	Cron            string
	IntervalSeconds int32
	// TimeZone is an IANA name; empty means the admin's zone (time.Local).
	TimeZone string
	// Calendars, if not nil, exclude instants: the schedule skips them (as
	// a Quartz trigger skips the times its calendar excludes). A pointer,
	// so that Spec stays comparable; SpecOf leaves it nil.
	Calendars *calendar.Set
}

// SkipBudget bounds how many excluded stretches (a day, a time range, a
// second: see calendar.Set.NextIncluded) and excluded instants one Next or
// First steps over. Past it the schedule has no next fire: its calendars
// exclude every instant of it (or all of them for longer than this looks
// ahead), and a calendar that excludes everything cannot loop forever.
const SkipBudget = 100_000

// SpecError says which field of a Spec is wrong and why.
type SpecError struct {
	// Field is "type", "cron", "interval_seconds" or "time_zone".
	Field string
	Err   error
}

func (e *SpecError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns e.Err.
func (e *SpecError) Unwrap() error { return e.Err }

// Check reports what is wrong with spec as a *SpecError.
func Check(spec Spec) error {
	switch spec.Type {
	case carillonv1.ScheduleType_SCHEDULE_TYPE_NONE:
		return nil
	case carillonv1.ScheduleType_SCHEDULE_TYPE_CRON:
		_, err := parseCron(spec)
		return err
	case carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY:
		if spec.IntervalSeconds < 1 {
			return &SpecError{"interval_seconds", fmt.Errorf("must be at least 1 for %s, got %d", spec.Type, spec.IntervalSeconds)}
		}
		_, err := location(spec.TimeZone)
		return err
	default:
		return &SpecError{"type", fmt.Errorf("must be one of SCHEDULE_TYPE_NONE, SCHEDULE_TYPE_CRON, SCHEDULE_TYPE_FIX_RATE, SCHEDULE_TYPE_FIX_DELAY, got %s", spec.Type)}
	}
}

// First returns a started schedule's first fire after now; zero when the
// schedule has none (NONE, or a cron whose fires are all in the past).
// FIX_RATE and FIX_DELAY first fire one interval after now.
func First(spec Spec, now time.Time) (time.Time, error) {
	switch spec.Type {
	case carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY:
		if spec.IntervalSeconds < 1 {
			return time.Time{}, Check(spec)
		}
		return skipExcluded(spec, now, now.Add(time.Duration(spec.IntervalSeconds)*time.Second))
	}
	return Next(spec, now)
}

// Next returns the fire that follows the fire at prev: the next cron time
// strictly after prev, prev plus the interval for FIX_RATE, and zero for
// FIX_DELAY (whose next fire waits for the run to finish) and NONE. With
// calendars, it is the first such fire they do not exclude (zero if there
// is none within SkipBudget).
func Next(spec Spec, prev time.Time) (time.Time, error) {
	t, err := next(spec, prev)
	if err != nil {
		return t, err
	}
	return skipExcluded(spec, prev, t)
}

// next is Next without calendars.
func next(spec Spec, prev time.Time) (time.Time, error) {
	switch spec.Type {
	case carillonv1.ScheduleType_SCHEDULE_TYPE_CRON:
		c, err := parseCron(spec)
		if err != nil {
			return time.Time{}, err
		}
		return c.Next(prev), nil
	case carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE:
		if spec.IntervalSeconds < 1 {
			return time.Time{}, Check(spec)
		}
		return prev.Add(time.Duration(spec.IntervalSeconds) * time.Second), nil
	case carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY, carillonv1.ScheduleType_SCHEDULE_TYPE_NONE:
		return time.Time{}, nil
	}
	return time.Time{}, Check(spec)
}

// Preview returns up to n fire times strictly after from.
func Preview(spec Spec, from time.Time, n int) ([]time.Time, error) {
	if err := Check(spec); err != nil {
		return nil, err
	}
	var out []time.Time
	t := from
	for len(out) < n {
		var err error
		if len(out) == 0 {
			t, err = First(spec, from)
		} else if spec.Type == carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY {
			// Assume runs finish at once: the best a preview can do.
			t, err = skipExcluded(spec, t, t.Add(time.Duration(spec.IntervalSeconds)*time.Second))
		} else {
			t, err = Next(spec, t)
		}
		if err != nil {
			return nil, err
		}
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out, nil
}

// cronCache keeps parsed cron expressions: a busy admin computes next fires
// for the same few expressions thousands of times a second.
var cronCache sync.Map // cronKey -> *cron.Schedule

type cronKey struct{ cron, zone string }

func parseCron(spec Spec) (*cron.Schedule, error) {
	key := cronKey{spec.Cron, spec.TimeZone}
	if c, ok := cronCache.Load(key); ok {
		return c.(*cron.Schedule), nil
	}
	loc, err := location(spec.TimeZone)
	if err != nil {
		return nil, err
	}
	c, err := cron.Parse(spec.Cron, loc)
	if err != nil {
		return nil, &SpecError{"cron", err}
	}
	cronCache.Store(key, c)
	return c, nil
}

func location(name string) (*time.Location, error) {
	if name == "" {
		return time.Local, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, &SpecError{"time_zone", fmt.Errorf("%q is not an IANA time zone name (such as \"Europe/Berlin\")", name)}
	}
	return loc, nil
}

// Missed is the scheduled instants of a job that fell due while no admin
// was running and were found too late to fire: a misfire.
type Missed struct {
	// First and Last are the first and the last missed instant.
	First, Last time.Time
	// Count is how many instants were missed, from First through Last. When
	// Exact is false there were more: Count is the bound Late counted to.
	Count int64
	Exact bool
}

// Late splits the instants of spec from due (an instant of spec) on at
// cutoff: those before it are missed. It returns them, and the first
// instant at or after cutoff (zero when the schedule has none: a cron
// whose fires have passed, or FIX_DELAY and NONE, whose only instant is
// due). Counting the missed instants of a cron costs one Next each, so it
// counts up to maxCount of them and, beyond that, finds Last by bisection
// (about two Next per doubling of the outage) and leaves Count at maxCount
// with Exact false. FIX_RATE instants are counted exactly at no cost. due
// must be before cutoff.
func Late(spec Spec, due, cutoff time.Time, maxCount int64) (Missed, time.Time, error) {
	m := Missed{First: due, Last: due, Count: 1, Exact: true}
	if spec.Calendars != nil {
		return lateWithCalendars(spec, m, cutoff, maxCount)
	}
	switch spec.Type {
	case carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE:
		if spec.IntervalSeconds < 1 {
			return Missed{}, time.Time{}, Check(spec)
		}
		every := time.Duration(spec.IntervalSeconds) * time.Second
		m.Count = int64((cutoff.Sub(due) + every - 1) / every) // instants due + k·every before cutoff
		m.Last = due.Add(time.Duration(m.Count-1) * every)
		return m, m.Last.Add(every), nil
	case carillonv1.ScheduleType_SCHEDULE_TYPE_CRON:
	default:
		next, err := Next(spec, due)
		return m, next, err
	}
	c, err := parseCron(spec)
	if err != nil {
		return Missed{}, time.Time{}, err
	}
	m, next := countLate(m, cutoff, maxCount, c.Next)
	return m, next, nil
}

// countLate counts the instants of a schedule from m.First (m as Late
// starts it) before cutoff, where after returns the schedule's first
// instant strictly after a time (zero when there is none); it returns them
// and the first instant at or after cutoff.
func countLate(m Missed, cutoff time.Time, maxCount int64, after func(time.Time) time.Time) (Missed, time.Time) {
	for m.Count < maxCount {
		next := after(m.Last)
		if next.IsZero() || !next.Before(cutoff) {
			return m, next
		}
		m.Last = next
		m.Count++
	}
	// More than maxCount: the first instant at or after cutoff, and the
	// last one before it, found without visiting those between.
	next := after(cutoff.Add(-time.Nanosecond)) // after is strictly after; instants are whole milliseconds at least
	if after(m.Last).Before(cutoff) {
		m.Exact = false
		// The last instant L before cutoff is the one x < L has after it
		// before cutoff. Keep lo < L <= hi: gallop back from cutoff, then
		// bisect down to a second, then step.
		lo, hi := m.Last, cutoff.Add(-time.Nanosecond)
		for w := time.Second; ; w *= 2 {
			x := cutoff.Add(-w)
			if !x.After(lo) {
				break
			}
			if after(x).Before(cutoff) {
				lo = x
				break
			}
			hi = x
		}
		for hi.Sub(lo) > time.Second {
			mid := lo.Add(hi.Sub(lo) / 2)
			if after(mid).Before(cutoff) {
				lo = mid
			} else {
				hi = mid
			}
		}
		for t := after(lo); !t.IsZero() && t.Before(cutoff); t = after(t) {
			m.Last = t
		}
	}
	return m, next
}

// lateWithCalendars is Late for a schedule with calendars: the instants
// they exclude are neither missed nor fired. due is one they include.
func lateWithCalendars(spec Spec, m Missed, cutoff time.Time, maxCount int64) (Missed, time.Time, error) {
	var after func(time.Time) time.Time
	switch spec.Type {
	case carillonv1.ScheduleType_SCHEDULE_TYPE_CRON:
		c, err := parseCron(spec)
		if err != nil {
			return Missed{}, time.Time{}, err
		}
		after = func(x time.Time) time.Time {
			t, _ := skipExcluded(spec, x, c.Next(x)) // CRON: err is parseCron's, nil here
			return t
		}
	case carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE:
		if spec.IntervalSeconds < 1 {
			return Missed{}, time.Time{}, Check(spec)
		}
		every, due := time.Duration(spec.IntervalSeconds)*time.Second, m.First
		after = func(x time.Time) time.Time {
			t, _ := skipExcluded(spec, due, due.Add((x.Sub(due)/every+1)*every))
			return t
		}
	default:
		next, err := Next(spec, m.First)
		return m, next, err
	}
	m, next := countLate(m, cutoff, maxCount, after)
	return m, next, nil
}

// skipExcluded returns t, an instant of spec's schedule, or when spec's
// calendars exclude it the schedule's first instant after it that they do
// not (zero when there is none within SkipBudget). The instants of a
// FIX_RATE schedule are anchor plus multiples of its interval; for
// FIX_DELAY, whose next instant is not fixed, it is the first included
// instant. Each round either returns or moves past excluded instants.
func skipExcluded(spec Spec, anchor, t time.Time) (time.Time, error) {
	if spec.Calendars == nil {
		return t, nil
	}
	for budget := SkipBudget; !t.IsZero(); budget-- {
		u, left, ok := spec.Calendars.NextIncluded(t, budget)
		if !ok || left <= 1 {
			return time.Time{}, nil
		}
		if u.Equal(t) {
			return t, nil
		}
		budget = left
		switch spec.Type {
		case carillonv1.ScheduleType_SCHEDULE_TYPE_CRON:
			c, err := parseCron(spec)
			if err != nil {
				return time.Time{}, err
			}
			t = c.Next(u.Add(-time.Nanosecond)) // the first instant at or after u
		case carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE:
			every := time.Duration(spec.IntervalSeconds) * time.Second
			t = anchor.Add((u.Sub(anchor) + every - 1) / every * every)
		default:
			t = u // FIX_DELAY: u itself, once no calendar excludes it
		}
	}
	return time.Time{}, nil
}
