package schedule_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/carillonhq/carillon/admin/internal/calendar"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestCalendarExcludedInstantsNeitherFireNorMisfire runs an every-second
// cron job whose calendar excludes the even seconds, after an outage of a
// minute: the record of the misfire counts only the odd seconds, the odd
// seconds less than the threshold late fire, and no even second fires or
// is recorded.
func TestCalendarExcludedInstantsNeitherFireNorMisfire(t *testing.T) {
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		db := be.DB(t)
		synctest.Test(t, func(t *testing.T) {
			st, g := setup(t, db)
			defer st.Close()
			ctx := context.Background()
			now := time.Now() // a whole, even second (the fake clock's start)
			if now.Second()%2 != 0 {
				t.Fatalf("the fake clock starts at %v, an odd second", now)
			}
			cal, err := st.Calendars.Create(ctx, store.Calendar{Name: "even seconds", Definition: calendar.Definition{
				Kind: carillonv1.CalendarKind_CALENDAR_KIND_CRON, TimeZone: "UTC", Cron: "0/2 * * * * ?"}}, now)
			if err != nil {
				t.Fatal(err)
			}
			j, err := st.Jobs.Create(ctx, store.Job{GroupID: g.ID, Description: "c", Handler: "h", Enabled: true, NextFireAt: now.Add(-59 * time.Second),
				ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "* * * * * ?", TimeZone: "UTC", CalendarIDs: []int64{cal.ID}}, now)
			if err != nil {
				t.Fatal(err)
			}
			rec := &recorder{st: st}
			stop := start(st, rec.Fire)
			time.Sleep(4500 * time.Millisecond)
			stop()

			runs, err := st.Runs.List(ctx, store.RunFilter{JobID: j.ID})
			if err != nil {
				t.Fatal(err)
			}
			var fired []int
			for _, r := range runs {
				off := int(r.ScheduledAt.Sub(now) / time.Second)
				if off%2 == 0 {
					t.Errorf("a run of the excluded instant %v (%s, %d missed)", r.ScheduledAt, r.Status, r.MissedCount)
				}
				if r.MissedCount > 0 {
					// -59, -57 ... -7: 27 odd seconds more than the threshold (5 s) late.
					if off != -59 || !r.MissedUntil.Equal(now.Add(-7*time.Second)) || r.MissedCount != 27 {
						t.Errorf("misfire record from %d s through %v, %d instants; want from -59 s through -7 s, 27", off, r.MissedUntil.Sub(now), r.MissedCount)
					}
					continue
				}
				fired = append(fired, off)
			}
			slices.Sort(fired)
			// -5, -3, -1 fire at once; 1, 3 on time; 5 and 7 were claimed ahead.
			if want := []int{-5, -3, -1, 1, 3}; len(fired) < len(want) || !slices.Equal(fired[:len(want)], want) {
				t.Errorf("fired at offsets %v, want %v first", fired, want)
			}
		})
	})
}
