package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/carillonhq/carillon/admin/internal/calendar"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// calendarService implements carillonv1connect.CalendarServiceHandler.
// Calendars are admin-wide: rpcs lets every signed-in user read them and
// only an ADMIN change them.
type calendarService struct{ *Server }

// calendarOutputFields cannot be set by CreateCalendar or UpdateCalendar.
var calendarOutputFields = []string{"id", "created_at", "updated_at"}

func calendarToProto(c store.Calendar) *carillonv1.Calendar {
	d := c.Definition
	return &carillonv1.Calendar{
		Id: c.ID, Name: c.Name, Description: c.Description, Kind: d.Kind, TimeZone: d.TimeZone,
		ExcludedDates: d.ExcludedDates, ExcludedDays: d.ExcludedDays, ExcludedWeekdays: d.ExcludedWeekdays,
		RangeStart: d.RangeStart, RangeEnd: d.RangeEnd, Invert: d.Invert, Cron: d.Cron,
		CreatedAt: ts(c.CreatedAt), UpdatedAt: ts(c.UpdatedAt),
	}
}

// checkCalendar validates a calendar from a request and returns it for
// the store, its definition compiled (weekday names upper case).
func checkCalendar(p *carillonv1.Calendar) (store.Calendar, *calendar.Calendar, error) {
	if p == nil {
		return store.Calendar{}, nil, invalid("calendar", "required")
	}
	if p.Name == "" {
		return store.Calendar{}, nil, invalid("calendar.name", "required")
	}
	if err := checkName("calendar.name", p.Name); err != nil {
		return store.Calendar{}, nil, err
	}
	if err := checkProse("calendar.description", p.Description); err != nil {
		return store.Calendar{}, nil, err
	}
	cal, err := calendar.Compile(calendar.Definition{
		Kind: p.Kind, TimeZone: p.TimeZone, ExcludedDates: p.ExcludedDates, ExcludedDays: p.ExcludedDays,
		ExcludedWeekdays: p.ExcludedWeekdays, RangeStart: p.RangeStart, RangeEnd: p.RangeEnd, Invert: p.Invert, Cron: p.Cron,
	})
	var fe *calendar.FieldError
	if errors.As(err, &fe) {
		return store.Calendar{}, nil, invalid("calendar."+fe.Field, "%v", fe.Err)
	}
	if err != nil {
		return store.Calendar{}, nil, invalid("calendar", "%v", err)
	}
	return store.Calendar{ID: p.Id, Name: p.Name, Description: p.Description, Definition: cal.Definition()}, cal, nil
}

func (s calendarService) CreateCalendar(ctx context.Context, req *carillonv1.CreateCalendarRequest) (*carillonv1.CreateCalendarResponse, error) {
	c, _, err := checkCalendar(req.Calendar)
	if err != nil {
		return nil, err
	}
	c.ID = 0
	if c, err = s.cfg.Store.Calendars.Create(ctx, c, s.cfg.NowFunc()); err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.CreateCalendarResponse{Calendar: calendarToProto(c)}, nil
}

func (s calendarService) GetCalendar(ctx context.Context, req *carillonv1.GetCalendarRequest) (*carillonv1.GetCalendarResponse, error) {
	c, err := s.cfg.Store.Calendars.Get(ctx, req.Id)
	if err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.GetCalendarResponse{Calendar: calendarToProto(c)}, nil
}

func (s calendarService) ListCalendars(ctx context.Context, req *carillonv1.ListCalendarsRequest) (*carillonv1.ListCalendarsResponse, error) {
	size, after, err := paging(req.PageSize, req.PageToken)
	if err != nil {
		return nil, err
	}
	cs, err := s.cfg.Store.Calendars.List(ctx, after, size+1)
	if err != nil {
		return nil, s.toConnect(err)
	}
	res := &carillonv1.ListCalendarsResponse{}
	res.Calendars, res.NextPageToken = page(cs, size, calendarToProto, func(c store.Calendar) int64 { return c.ID })
	return res, nil
}

func (s calendarService) UpdateCalendar(ctx context.Context, req *carillonv1.UpdateCalendarRequest) (*carillonv1.UpdateCalendarResponse, error) {
	if req.Calendar == nil {
		return nil, invalid("calendar", "required")
	}
	old, err := s.cfg.Store.Calendars.Get(ctx, req.Calendar.Id)
	if err != nil {
		return nil, s.toConnect(err)
	}
	merged := calendarToProto(old)
	if err := applyMask(merged, req.Calendar, req.UpdateMask, "calendar", calendarOutputFields); err != nil {
		return nil, err
	}
	c, cal, err := checkCalendar(merged)
	if err != nil {
		return nil, err
	}
	now := s.cfg.NowFunc()
	// Each started job using it gets its next fire anew, with the new
	// definition and its other calendars as they are.
	next := func(j store.Job) (time.Time, error) {
		others, err := s.cfg.Store.Calendars.ByID(ctx, j.CalendarIDs)
		if err != nil {
			return time.Time{}, err
		}
		set := []*calendar.Calendar{cal}
		for _, o := range others {
			if o.ID == c.ID {
				continue
			}
			oc, err := calendar.Compile(o.Definition)
			if err != nil {
				return time.Time{}, fmt.Errorf("calendar %d: %w", o.ID, err)
			}
			set = append(set, oc)
		}
		spec := schedule.SpecOf(j)
		spec.Calendars = calendar.NewSet(set...)
		return schedule.Recompute(spec, j.NextFireAt, now)
	}
	c, _, err = s.cfg.Store.Calendars.Update(ctx, c, now, next)
	if err != nil {
		return nil, s.toConnect(err)
	}
	s.cfg.WakeFunc()
	return &carillonv1.UpdateCalendarResponse{Calendar: calendarToProto(c)}, nil
}

func (s calendarService) DeleteCalendar(ctx context.Context, req *carillonv1.DeleteCalendarRequest) (*carillonv1.DeleteCalendarResponse, error) {
	if err := s.cfg.Store.Calendars.Delete(ctx, req.Id); err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.DeleteCalendarResponse{}, nil
}

// calendarSet reads the calendars ids name (a job's calendar_ids, or
// PreviewSchedule's) and returns their set; a duplicate or missing one is
// invalid_argument naming field[i].
func (s *Server) calendarSet(ctx context.Context, field string, ids []int64) (*calendar.Set, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	seen := map[int64]bool{}
	for i, id := range ids {
		if seen[id] {
			return nil, invalid(fmt.Sprintf("%s[%d]", field, i), "calendar %d is listed twice", id)
		}
		seen[id] = true
	}
	cals, err := s.cfg.Store.Calendars.ByID(ctx, ids)
	if err != nil {
		return nil, s.toConnect(err)
	}
	byID := map[int64]store.Calendar{}
	for _, c := range cals {
		byID[c.ID] = c
	}
	set := make([]*calendar.Calendar, 0, len(ids))
	for i, id := range ids {
		c, ok := byID[id]
		if !ok {
			return nil, invalid(fmt.Sprintf("%s[%d]", field, i), "calendar %d does not exist", id)
		}
		cal, err := calendar.Compile(c.Definition)
		if err != nil {
			return nil, s.toConnect(fmt.Errorf("calendar %d: %w", id, err))
		}
		set = append(set, cal)
	}
	return calendar.NewSet(set...), nil
}
