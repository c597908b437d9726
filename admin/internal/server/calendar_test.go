package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestCalendarValidation: a bad calendar is invalid_argument naming the
// field and the rule, a taken name already_exists, and nothing is stored.
func TestCalendarValidation(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		f := newFixture(t, be)
		adm := f.as["admin"].cal
		for _, tt := range []struct {
			name string
			cal  *carillonv1.Calendar
			want string
		}{
			{"NoName", &carillonv1.Calendar{Kind: carillonv1.CalendarKind_CALENDAR_KIND_HOLIDAY, ExcludedDates: []string{"2026-12-25"}}, "calendar.name: required"},
			{"NoKind", &carillonv1.Calendar{Name: "x"}, "calendar.kind: must be one of"},
			{"BadDate", &carillonv1.Calendar{Name: "x", Kind: carillonv1.CalendarKind_CALENDAR_KIND_HOLIDAY, ExcludedDates: []string{"2026-12-25", "2026-13-01"}},
				`calendar.excluded_dates[1]: must be a date "YYYY-MM-DD", got "2026-13-01"`},
			{"BadZone", &carillonv1.Calendar{Name: "x", Kind: carillonv1.CalendarKind_CALENDAR_KIND_WEEKLY, TimeZone: "Nowhere/Else", ExcludedWeekdays: []string{"SUN"}},
				"calendar.time_zone"},
			{"OtherKindsField", &carillonv1.Calendar{Name: "x", Kind: carillonv1.CalendarKind_CALENDAR_KIND_WEEKLY, ExcludedWeekdays: []string{"SUN"}, Cron: "* * * * * ?"},
				"calendar.cron: must be empty for a calendar of kind CALENDAR_KIND_WEEKLY"},
			{"BackwardsRange", &carillonv1.Calendar{Name: "x", Kind: carillonv1.CalendarKind_CALENDAR_KIND_DAILY, RangeStart: "17:00", RangeEnd: "09:00"},
				"calendar.range_end: must be after range_start"},
			{"BadCron", &carillonv1.Calendar{Name: "x", Kind: carillonv1.CalendarKind_CALENDAR_KIND_CRON, Cron: "0 0 25 * * ?"}, "calendar.cron:"},
		} {
			_, err := adm.CreateCalendar(ctx, &carillonv1.CreateCalendarRequest{Calendar: tt.cal})
			wantCode(t, tt.name, err, connect.CodeInvalidArgument, tt.want)
		}
		if _, err := adm.CreateCalendar(ctx, &carillonv1.CreateCalendarRequest{Calendar: weekendCalendar("weekend")}); err != nil {
			t.Fatal(err)
		}
		_, err := adm.CreateCalendar(ctx, &carillonv1.CreateCalendarRequest{Calendar: weekendCalendar("weekend")})
		wantCode(t, "a taken name", err, connect.CodeAlreadyExists, `a calendar named "weekend" already exists`)
		list, err := adm.ListCalendars(ctx, &carillonv1.ListCalendarsRequest{})
		if err != nil || len(list.Calendars) != 1 {
			t.Fatalf("ListCalendars: %v, %v; want the one calendar", list, err)
		}
	})
}

// TestJobCalendars: a job's next fire and PreviewSchedule skip what its
// calendars exclude; updating a calendar moves the next fire of the jobs
// using it; deleting a calendar in use is refused naming them; the changes
// are audited.
func TestJobCalendars(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		f := newFixture(t, be) // its clock: Monday 2026-11-23 08:00 UTC
		adm := f.as["admin"]
		mondays, err := adm.cal.CreateCalendar(ctx, &carillonv1.CreateCalendarRequest{Calendar: &carillonv1.Calendar{
			Name: "mondays", Kind: carillonv1.CalendarKind_CALENDAR_KIND_WEEKLY, TimeZone: "UTC", ExcludedWeekdays: []string{"mon"}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := mondays.Calendar.ExcludedWeekdays; len(got) != 1 || got[0] != "MON" {
			t.Errorf("stored weekdays %v, want [MON]", got)
		}
		id := mondays.Calendar.Id
		noon := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "0 0 12 * * ?", TimeZone: "UTC"}
		day := func(d int) time.Time { return time.Date(2026, 11, d, 12, 0, 0, 0, time.UTC) }

		_, err = adm.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{GroupId: f.groupA, Description: "d", Handler: "h",
			Schedule: noon, CalendarIds: []int64{id, id + 1000}}})
		wantCode(t, "a job with a missing calendar", err, connect.CodeInvalidArgument, fmt.Sprintf("job.calendar_ids[1]: calendar %d does not exist", id+1000))

		job, err := adm.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{GroupId: f.groupA, Description: "noon", Handler: "h",
			Schedule: noon, CalendarIds: []int64{id}, Enabled: true}})
		if err != nil {
			t.Fatal(err)
		}
		if got := job.Job.NextFireAt.AsTime(); !got.Equal(day(24)) {
			t.Fatalf("next fire %v, want Tuesday noon %v: Monday is excluded", got, day(24))
		}
		prev, err := adm.job.PreviewSchedule(ctx, &carillonv1.PreviewScheduleRequest{Schedule: noon, CalendarIds: []int64{id}, Count: 7})
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []time.Time{day(24), day(25), day(26), day(27), day(28), day(29), time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)} {
			if i >= len(prev.FireTimes) || !prev.FireTimes[i].AsTime().Equal(want) {
				t.Fatalf("preview %v, want every noon but Monday's", prev.FireTimes)
			}
		}

		// Excluding Tuesday instead: today's noon is the next fire.
		if _, err := adm.cal.UpdateCalendar(ctx, &carillonv1.UpdateCalendarRequest{Calendar: &carillonv1.Calendar{Id: id, ExcludedWeekdays: []string{"TUE"}},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"excluded_weekdays"}}}); err != nil {
			t.Fatal(err)
		}
		got, err := adm.job.GetJob(ctx, &carillonv1.GetJobRequest{Id: job.Job.Id})
		if err != nil || !got.Job.NextFireAt.AsTime().Equal(day(23)) {
			t.Fatalf("next fire after the calendar changed: %v, %v; want Monday noon %v", got.GetJob().GetNextFireAt().AsTime(), err, day(23))
		}

		_, err = adm.cal.DeleteCalendar(ctx, &carillonv1.DeleteCalendarRequest{Id: id})
		wantCode(t, "deleting a calendar in use", err, connect.CodeFailedPrecondition, fmt.Sprintf(`used by 1 job(s): job %d ("noon")`, job.Job.Id))

		// Calendars that exclude every fire: no preview, and a note why; a job
		// on them is refused.
		allDay, err := adm.cal.CreateCalendar(ctx, &carillonv1.CreateCalendarRequest{Calendar: &carillonv1.Calendar{
			Name: "all day", Kind: carillonv1.CalendarKind_CALENDAR_KIND_DAILY, TimeZone: "UTC", RangeStart: "00:00:00.001", RangeEnd: "23:59:59.998"}})
		if err != nil {
			t.Fatal(err)
		}
		prev, err = adm.job.PreviewSchedule(ctx, &carillonv1.PreviewScheduleRequest{Schedule: noon, CalendarIds: []int64{allDay.Calendar.Id}})
		if err != nil || len(prev.FireTimes) != 0 || prev.CalendarNote == "" {
			t.Fatalf("preview over an all-day calendar: %v, %v; want no fire and a note", prev, err)
		}
		_, err = adm.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{GroupId: f.groupA, Description: "d", Handler: "h",
			Schedule: noon, CalendarIds: []int64{allDay.Calendar.Id}}})
		wantCode(t, "a job whose calendars exclude every fire", err, connect.CodeInvalidArgument, "job.calendar_ids: the calendars exclude every fire")

		audit, err := adm.user.ListAuditLog(ctx, &carillonv1.ListAuditLogRequest{})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]string{}
		for _, e := range audit.Entries {
			seen[e.Action] = e.Target
		}
		for _, a := range []string{"CalendarService.CreateCalendar", "CalendarService.UpdateCalendar"} {
			if seen[a] == "" {
				t.Errorf("no audit entry with a target for %s: %v", a, seen)
			}
		}
	})
}
