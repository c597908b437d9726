package schedule

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/carillonhq/carillon/admin/internal/calendar"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// compiledCalendars keeps compiled calendars by ID and version (their
// UpdatedAt): a calendar's cron is parsed once, not at every fire.
var compiledCalendars sync.Map // calendarKey -> *calendar.Calendar

type calendarKey struct {
	id      int64
	version int64
}

// compile returns stored calendar c, compiled.
func compile(c store.Calendar) (*calendar.Calendar, error) {
	key := calendarKey{c.ID, c.UpdatedAt.UnixMilli()}
	if v, ok := compiledCalendars.Load(key); ok {
		return v.(*calendar.Calendar), nil
	}
	cal, err := calendar.Compile(c.Definition)
	if err != nil {
		return nil, fmt.Errorf("calendar %d (%s): %w", c.ID, c.Name, err)
	}
	compiledCalendars.Store(key, cal)
	return cal, nil
}

// JobCalendars reads the calendars of the jobs js that name any, in one
// query, and returns each such job's set by job ID; it reads nothing when
// none does. A calendar that no longer exists is left out.
func JobCalendars(ctx context.Context, st *store.Store, js []store.Job) (map[int64]*calendar.Set, error) {
	var ids []int64
	var seen map[int64]bool // made for the first job that names calendars
	for _, j := range js {
		for _, id := range j.CalendarIDs {
			if seen == nil {
				seen = map[int64]bool{}
			}
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	cals, err := st.Calendars.ByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*calendar.Calendar, len(cals))
	for _, c := range cals {
		if byID[c.ID], err = compile(c); err != nil {
			return nil, err
		}
	}
	sets := map[int64]*calendar.Set{}
	for _, j := range js {
		var set []*calendar.Calendar
		for _, id := range j.CalendarIDs {
			if c := byID[id]; c != nil {
				set = append(set, c)
			}
		}
		if len(set) > 0 {
			sets[j.ID] = calendar.NewSet(set...)
		}
	}
	return sets, nil
}

// JobSpec returns job j's schedule with its calendars, read from st.
func JobSpec(ctx context.Context, st *store.Store, j store.Job) (Spec, error) {
	spec := SpecOf(j)
	sets, err := JobCalendars(ctx, st, []store.Job{j})
	spec.Calendars = sets[j.ID]
	return spec, err
}

// Included returns t when spec's calendars do not exclude it, and
// otherwise the schedule's first instant after t that they do not
// exclude (t is one of the schedule's instants; for FIX_DELAY, the first
// included instant after it). Zero when there is none within SkipBudget.
func Included(spec Spec, t time.Time) (time.Time, error) {
	return skipExcluded(spec, t, t)
}

// Recompute returns a started job's next fire after its calendars
// changed, from its stored next fire old: a cron's first included instant
// after now; for FIX_RATE, the first included instant of its series (old
// plus or minus whole intervals) after now; for FIX_DELAY, old or the
// first included instant after it (zero stays zero: it waits for a run).
func Recompute(spec Spec, old, now time.Time) (time.Time, error) {
	switch {
	case old.IsZero():
		return old, nil
	case spec.Type == carillonv1.ScheduleType_SCHEDULE_TYPE_CRON:
		return Next(spec, now)
	case spec.Type == carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE && spec.IntervalSeconds > 0:
		every := time.Duration(spec.IntervalSeconds) * time.Second
		t := old.Add(-(old.Sub(now) / every) * every) // the series' first instant after now, or now
		if !t.After(now) {
			t = t.Add(every)
		}
		return Included(spec, t)
	}
	return Included(spec, old)
}
