package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/calendar"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

var christmas = calendar.Definition{Kind: carillonv1.CalendarKind_CALENDAR_KIND_ANNUAL, TimeZone: "UTC", ExcludedDays: []string{"12-25"}}

func TestCalendars(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, b := setup(t, be.DB(t))
		c, err := s.Calendars.Create(ctx, store.Calendar{Name: "holidays", Description: "d", Definition: christmas}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Calendars.Create(ctx, store.Calendar{Name: "holidays", Definition: christmas}, t0); !errors.Is(err, store.ErrAlreadyExists) {
			t.Fatalf("a second calendar named holidays: %v, want ErrAlreadyExists", err)
		}
		got, err := s.Calendars.Get(ctx, c.ID)
		if err != nil || got.Name != "holidays" || !slices.Equal(got.Definition.ExcludedDays, []string{"12-25"}) || !got.CreatedAt.Equal(t0) {
			t.Fatalf("Calendar = %+v, %v", got, err)
		}

		// A job naming a calendar that does not exist is refused.
		j := newJob(b.group.ID, t0.Add(time.Hour))
		j.CalendarIDs = []int64{c.ID, c.ID + 100}
		if _, err := s.Jobs.Create(ctx, j, t0); !errors.Is(err, store.ErrCalendarNotFound) || !strings.Contains(err.Error(), "calendar_ids[1]") {
			t.Fatalf("CreateJob with a missing calendar: %v", err)
		}
		j.CalendarIDs = []int64{c.ID}
		if j, err = s.Jobs.Create(ctx, j, t0); err != nil {
			t.Fatal(err)
		}
		if j2, _ := s.Jobs.Get(ctx, j.ID); !slices.Equal(j2.CalendarIDs, []int64{c.ID}) {
			t.Fatalf("stored calendar_ids %v", j2.CalendarIDs)
		}
		if _, err := s.Runs.Insert(ctx, []store.Run{*pendingRun(j, t0.Add(time.Hour))}); err != nil {
			t.Fatal(err)
		}

		// Deleting it is refused, naming the job.
		err = s.Calendars.Delete(ctx, c.ID)
		if !errors.Is(err, store.ErrInUse) || !strings.Contains(err.Error(), fmt.Sprintf("job %d (\"every second\")", j.ID)) {
			t.Fatalf("DeleteCalendar of a used calendar: %v", err)
		}

		// Updating it recomputes the job's next fire and drops its pending runs.
		c.Definition.ExcludedDays = []string{"12-24", "12-25"}
		newNext := t0.Add(2 * time.Hour)
		var asked []int64
		c, users, err := s.Calendars.Update(ctx, c, t0.Add(time.Minute), func(j store.Job) (time.Time, error) {
			asked = append(asked, j.ID)
			return newNext, nil
		})
		if err != nil || !slices.Equal(users, []int64{j.ID}) || !slices.Equal(asked, []int64{j.ID}) {
			t.Fatalf("UpdateCalendar: users %v, asked %v, %v", users, asked, err)
		}
		if j2, _ := s.Jobs.Get(ctx, j.ID); !j2.NextFireAt.Equal(newNext) {
			t.Fatalf("job's next fire %v, want %v", j2.NextFireAt, newNext)
		}
		if rs, err := s.Runs.List(ctx, store.RunFilter{JobID: j.ID, Status: carillonv1.RunStatus_RUN_STATUS_PENDING}); err != nil || len(rs) != 0 {
			t.Fatalf("pending runs after the calendar changed: %d, %v", len(rs), err)
		}
		if got, _ := s.Calendars.Get(ctx, c.ID); len(got.Definition.ExcludedDays) != 2 || !got.UpdatedAt.Equal(t0.Add(time.Minute)) {
			t.Fatalf("updated calendar %+v", got)
		}

		// Once no job uses it, it goes.
		j.CalendarIDs = nil
		if _, err := s.Jobs.Update(ctx, j, false, t0); err != nil {
			t.Fatal(err)
		}
		if err := s.Calendars.Delete(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Calendars.Get(ctx, c.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleted calendar: %v", err)
		}
	})
}

// TestCalendarRows: calendars are read back whole (Get, List's pages,
// ByID) after they are created, updated and deleted, over both databases.
// Each column is compared, so a query that swaps or drops one fails here.
func TestCalendarRows(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, _ := setup(t, be.DB(t))
		weekends := calendar.Definition{Kind: carillonv1.CalendarKind_CALENDAR_KIND_WEEKLY, TimeZone: "Europe/Paris", ExcludedWeekdays: []string{"SAT", "SUN"}}
		var cs []store.Calendar
		for i, c := range []store.Calendar{
			{Name: "holidays", Description: "d1", Definition: christmas},
			{Name: "weekends", Description: "d2", Definition: weekends},
			{Name: "none", Definition: calendar.Definition{Kind: carillonv1.CalendarKind_CALENDAR_KIND_HOLIDAY}},
		} {
			at := t0.Add(time.Duration(i) * time.Minute)
			got, err := s.Calendars.Create(ctx, c, at)
			if err != nil {
				t.Fatal(err)
			}
			c.ID, c.CreatedAt, c.UpdatedAt = got.ID, at, at
			if diff := cmp.Diff(c, got); diff != "" {
				t.Errorf("created calendar (-want +got):\n%s", diff)
			}
			if got, err = s.Calendars.Get(ctx, c.ID); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c, got); diff != "" {
				t.Errorf("calendar read back (-want +got):\n%s", diff)
			}
			cs = append(cs, c)
		}

		for _, page := range []struct {
			after int64
			limit int
			want  []store.Calendar
		}{
			{0, 0, cs},
			{0, 2, cs[:2]},
			{cs[1].ID, 2, cs[2:]},
			{cs[2].ID, 0, nil},
		} {
			got, err := s.Calendars.List(ctx, page.after, page.limit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(page.want, got); diff != "" {
				t.Errorf("List(%d, %d) (-want +got):\n%s", page.after, page.limit, diff)
			}
		}
		got, err := s.Calendars.ByID(ctx, []int64{cs[2].ID, cs[0].ID, cs[2].ID + 100})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]store.Calendar{cs[0], cs[2]}, got); diff != "" {
			t.Errorf("ByID (-want +got):\n%s", diff)
		}

		// Update replaces all but the creation time.
		up := store.Calendar{ID: cs[0].ID, Name: "holidays 2027", Description: "d3", Definition: weekends}
		if _, _, err := s.Calendars.Update(ctx, up, t0.Add(time.Hour), nil); err != nil {
			t.Fatal(err)
		}
		up.CreatedAt, up.UpdatedAt = cs[0].CreatedAt, t0.Add(time.Hour)
		updated, err := s.Calendars.Get(ctx, up.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(up, updated); diff != "" {
			t.Errorf("updated calendar (-want +got):\n%s", diff)
		}

		if err := s.Calendars.Delete(ctx, cs[1].ID); err != nil {
			t.Fatal(err)
		}
		if err := s.Calendars.Delete(ctx, cs[1].ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second delete: %v, want ErrNotFound", err)
		}
		if _, err := s.Calendars.Get(ctx, cs[1].ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted calendar: %v, want ErrNotFound", err)
		}
	})
}
