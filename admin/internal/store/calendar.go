package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/carillonhq/carillon/admin/internal/calendar"
	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
)

// CalendarStore keeps the calendars that exclude days from schedules
// (Store.Calendars).
type CalendarStore struct{ *db }

// ErrCalendarNotFound is returned when a job names a calendar that does
// not exist.
var ErrCalendarNotFound = errors.New("store: calendar not found")

// Calendar is a stored calendar: a name and a calendar.Definition.
type Calendar struct {
	ID          int64
	Name        string
	Description string
	Definition  calendar.Definition
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// calendarColumns are the columns scanCalendar reads: the read of the
// calendars whose statement is built at run time (ByID's list of IDs)
// uses them; the others are dbsqlc's, read with calendarOf.
const calendarColumns = `id, name, description, definition, created_at, updated_at`

// calendarOf is the calendar of a row of dbsqlc's calendars' reads.
func calendarOf(r dbsqlc.Calendar) (Calendar, error) {
	c := Calendar{ID: r.ID, Name: r.Name, Description: r.Description,
		CreatedAt: time.UnixMilli(r.CreatedAt), UpdatedAt: time.UnixMilli(r.UpdatedAt)}
	if err := json.Unmarshal([]byte(r.Definition), &c.Definition); err != nil {
		return Calendar{}, fmt.Errorf("calendar %d: definition: %w", c.ID, err)
	}
	return c, nil
}

// scanCalendar reads a row of calendarColumns.
func scanCalendar(row interface{ Scan(...any) error }) (Calendar, error) {
	var r dbsqlc.Calendar
	if err := row.Scan(&r.ID, &r.Name, &r.Description, &r.Definition, &r.CreatedAt, &r.UpdatedAt); err != nil {
		return Calendar{}, err
	}
	return calendarOf(r)
}

func calendarErr(verb string, c Calendar, err error) error {
	switch {
	case err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrInUse):
		return err
	case isUniqueViolation(err):
		return fmt.Errorf("%w: a calendar named %q", ErrAlreadyExists, c.Name)
	}
	return fmt.Errorf("store: %s calendar %d: %w", verb, c.ID, err)
}

// Create stores c and returns it with its ID. A taken name is
// ErrAlreadyExists.
func (s CalendarStore) Create(ctx context.Context, c Calendar, now time.Time) (Calendar, error) {
	now = now.Truncate(time.Millisecond)
	c.CreatedAt, c.UpdatedAt = now, now
	err := s.write(ctx, func(tx *sql.Tx) error {
		return insertCalendar(ctx, tx, &c)
	})
	if err != nil {
		return Calendar{}, calendarErr("create", c, err)
	}
	return c, nil
}

// insertCalendar inserts c, with its times set, in tx and sets its ID.
func insertCalendar(ctx context.Context, tx *sql.Tx, c *Calendar) error {
	def, err := json.Marshal(c.Definition)
	if err != nil {
		return err
	}
	c.ID, err = dbsqlc.New(tx).InsertCalendar(ctx, dbsqlc.InsertCalendarParams{Name: c.Name, Description: c.Description,
		Definition: string(def), CreatedAt: c.CreatedAt.UnixMilli(), UpdatedAt: c.UpdatedAt.UnixMilli()})
	return err
}

// Get returns the calendar with the given ID.
func (s CalendarStore) Get(ctx context.Context, id int64) (Calendar, error) {
	c, err := calendarByID(ctx, dbsqlc.New(s.reader(ctx)), id)
	if errors.Is(err, sql.ErrNoRows) {
		return Calendar{}, fmt.Errorf("%w: calendar %d", ErrNotFound, id)
	}
	if err != nil {
		return Calendar{}, fmt.Errorf("store: calendar %d: %w", id, err)
	}
	return c, nil
}

// calendarByID reads calendar id with q; sql.ErrNoRows when there is none.
func calendarByID(ctx context.Context, q *dbsqlc.Queries, id int64) (Calendar, error) {
	r, err := q.CalendarByID(ctx, id)
	if err != nil {
		return Calendar{}, err
	}
	return calendarOf(r)
}

// List returns the calendars with ID above afterID, ordered by ID, at
// most limit (see cmpLimit) of them.
func (s CalendarStore) List(ctx context.Context, afterID int64, limit int) ([]Calendar, error) {
	rows, err := dbsqlc.New(s.reader(ctx)).Calendars(ctx, dbsqlc.CalendarsParams{AfterID: afterID, MaxRows: int64(cmpLimit(limit))})
	if err != nil {
		return nil, fmt.Errorf("store: calendars: %w", err)
	}
	var cs []Calendar
	for _, r := range rows {
		c, err := calendarOf(r)
		if err != nil {
			return nil, fmt.Errorf("store: calendars: %w", err)
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// ByID returns the calendars with the given IDs that exist,
// ordered by ID: the scheduler's read of its due jobs' calendars. Its
// statement lists the IDs, as many as there are: it stays by hand.
func (s CalendarStore) ByID(ctx context.Context, ids []int64) ([]Calendar, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var a args
	return s.queryCalendars(ctx, `SELECT `+calendarColumns+` FROM calendars WHERE id IN (`+addList(&a, ids)+`) ORDER BY id`, a...)
}

func (s *db) queryCalendars(ctx context.Context, q string, args ...any) ([]Calendar, error) {
	rows, err := s.reader(ctx).QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: calendars: %w", err)
	}
	defer rows.Close()
	var cs []Calendar
	for rows.Next() {
		c, err := scanCalendar(rows)
		if err != nil {
			return nil, fmt.Errorf("store: calendars: %w", err)
		}
		cs = append(cs, c)
	}
	return cs, rows.Err()
}

// Update replaces the calendar with ID c.ID (CreatedAt is kept)
// and gives each started job using it the next fire next returns for it
// (computed with the new definition), dropping the job's pending runs as
// JobStore.Update does; all in one transaction. It returns the calendar and the
// IDs of the jobs using it.
func (s CalendarStore) Update(ctx context.Context, c Calendar, now time.Time, next func(Job) (time.Time, error)) (Calendar, []int64, error) {
	defer s.jobs.changed()
	now = now.Truncate(time.Millisecond)
	var users []int64
	err := s.write(ctx, func(tx *sql.Tx) (err error) {
		users, err = updateCalendar(ctx, tx, &c, now, next)
		return err
	})
	if err != nil {
		return Calendar{}, nil, calendarErr("update", c, err)
	}
	return c, users, nil
}

// updateCalendar is CalendarStore.Update in tx, now truncated to the
// millisecond: it completes c as stored and returns the IDs of the jobs
// using it.
func updateCalendar(ctx context.Context, tx *sql.Tx, c *Calendar, now time.Time, next func(Job) (time.Time, error)) ([]int64, error) {
	def, err := json.Marshal(c.Definition)
	if err != nil {
		return nil, err
	}
	q := dbsqlc.New(tx)
	old, err := calendarByID(ctx, q, c.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: calendar %d", ErrNotFound, c.ID)
	}
	if err != nil {
		return nil, err
	}
	c.CreatedAt, c.UpdatedAt = old.CreatedAt, now
	if err := q.UpdateCalendar(ctx, dbsqlc.UpdateCalendarParams{Name: c.Name, Description: c.Description, Definition: string(def),
		UpdatedAt: now.UnixMilli(), ID: c.ID}); err != nil {
		return nil, err
	}
	jobs, err := jobsUsingCalendar(ctx, tx, c.ID)
	if err != nil {
		return nil, err
	}
	var users []int64
	for _, j := range jobs {
		users = append(users, j.ID)
		if !j.Enabled {
			continue
		}
		at, err := next(j)
		if err != nil {
			return nil, fmt.Errorf("job %d: %w", j.ID, err)
		}
		if _, err := dropPending(ctx, tx, j.ID); err != nil {
			return nil, err
		}
		if err := q.RescheduleCalendarJob(ctx, dbsqlc.RescheduleCalendarJobParams{NextFireAt: millis(at), UpdatedAt: now.UnixMilli(), ID: j.ID}); err != nil {
			return nil, err
		}
	}
	return users, nil
}

// Delete removes a calendar no job uses; one that jobs use is
// ErrInUse naming them.
func (s CalendarStore) Delete(ctx context.Context, id int64) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		jobs, err := jobsUsingCalendar(ctx, tx, id)
		if err != nil {
			return err
		}
		if len(jobs) > 0 {
			names := make([]string, 0, min(len(jobs), 10))
			for _, j := range jobs[:min(len(jobs), 10)] {
				names = append(names, fmt.Sprintf("%d (%q)", j.ID, j.Description))
			}
			more := ""
			if len(jobs) > 10 {
				more = fmt.Sprintf(" and %d more", len(jobs)-10)
			}
			return fmt.Errorf("%w: calendar %d is used by %d job(s): job %s%s: remove it from their calendar_ids first",
				ErrInUse, id, len(jobs), strings.Join(names, ", job "), more)
		}
		res, err := dbsqlc.New(tx).DeleteCalendar(ctx, id)
		if err != nil {
			return err
		}
		return mustAffect(res, "calendar", id)
	})
	return calendarErr("delete", Calendar{ID: id}, err)
}

// jobsUsingCalendar returns the jobs whose calendar_ids name calendar id,
// ordered by ID. It reads the jobs' whole rows with job.go's jobColumns
// and scanJob, so it stays by hand with them.
func jobsUsingCalendar(ctx context.Context, tx *sql.Tx, id int64) ([]Job, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE ',' || calendar_ids || ',' LIKE '%,' || $1 || ',%' ORDER BY id`, strconv.FormatInt(id, 10))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var js []Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		js = append(js, j)
	}
	return js, rows.Err()
}

// calendarsExist checks that the calendars a job names exist; a missing
// one is ErrCalendarNotFound naming its index.
func calendarsExist(ctx context.Context, tx *sql.Tx, ids []int64) error {
	q := dbsqlc.New(tx)
	for i, id := range ids {
		n, err := q.CalendarCount(ctx, id)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: calendar_ids[%d]: calendar %d", ErrCalendarNotFound, i, id)
		}
	}
	return nil
}
