package schedule

import (
	"errors"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// ErrNoInstants says a schedule has no instants of its own to backfill:
// NONE (manual only) or FIX_DELAY (each fire waits for the previous run).
var ErrNoInstants = errors.New("the schedule has no instants of its own to backfill")

// Instants returns the instants of a CRON or FIX_RATE schedule in [from,
// to), oldest first, at most limit of them, and how many there are,
// counting at most countMax (a count of countMax means at least that
// many). A CRON schedule's are its cron times; a FIX_RATE one's from,
// from + interval, and so on. NONE and FIX_DELAY schedules have none of
// their own: ErrNoInstants.
func Instants(spec Spec, from, to time.Time, limit, countMax int) ([]time.Time, int, error) {
	if err := Check(spec); err != nil {
		return nil, 0, err
	}
	var t time.Time
	var err error
	switch spec.Type {
	case carillonv1.ScheduleType_SCHEDULE_TYPE_CRON:
		t, err = Next(spec, from.Add(-time.Nanosecond)) // a cron time at from itself is in
	case carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE:
		t = from
	default:
		return nil, 0, ErrNoInstants
	}
	var out []time.Time
	n := 0
	for err == nil && !t.IsZero() && t.Before(to) && n < countMax {
		if n < limit {
			out = append(out, t)
		}
		n++
		t, err = Next(spec, t)
	}
	return out, n, err
}
