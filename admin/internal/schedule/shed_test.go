package schedule_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestShed: while the dispatcher says it is overloaded, the scan claims
// the fires of DO_NOTHING jobs as misfire records, SKIPPED and not
// queued, also the instants that a late job fires at once; an
// every-second job's instants through 2 s past the look-ahead (1.5 s)
// as one record, its next fire after them; a FIX_DELAY
// job, whose next fire waits for a run that will not run, goes on from
// the claim; a FIRE_ONCE_NOW job's fire is queued. Once the dispatcher
// keeps up, fires are queued again.
func TestShed(t *testing.T) {
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		st, g := setup(t, be.DB(t))
		t0 := time.Now().Add(time.Hour).Truncate(time.Second)
		doNothing, onceNow := carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING, carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW
		minutely := fixRate(g, 60, t0)
		once := fixRate(g, 60, t0)
		once.MisfireStrategy = onceNow
		delay := fixRate(g, 30, t0)
		delay.ScheduleType = carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY
		late := fixRate(g, 3600, t0.Add(-2*time.Hour-2*time.Second)) // two instants missed, one less than the threshold late
		secondly := fixRate(g, 1, t0)
		var jobs []store.Job
		for _, j := range []store.Job{minutely, once, delay, late, secondly} {
			if j.MisfireStrategy == 0 {
				j.MisfireStrategy = doNothing
			}
			j, err := st.Jobs.Create(ctx, j, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j)
		}
		const why = "the test's dispatcher is overloaded"
		overloaded := true
		s := schedule.New(schedule.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Overloaded: func() (string, bool) {
				if overloaded {
					return why, true
				}
				return "", false
			}})
		now := t0
		schedule.SetNow(s, func() time.Time { return now })
		queued, err := schedule.Scan(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if queued != 1 {
			t.Errorf("an overloaded scan queued %d runs, want 1, the FIRE_ONCE_NOW job's", queued)
		}
		runs := func(j store.Job) []store.Run {
			t.Helper()
			rs, err := st.Runs.List(ctx, store.RunFilter{JobID: j.ID})
			if err != nil {
				t.Fatal(err)
			}
			return rs
		}
		shed := "misfire: " + why + "; not sent, skipped by DO_NOTHING"
		for _, c := range []struct {
			name string
			job  store.Job
			at   []time.Time // the instants shed
		}{
			{"every minute", jobs[0], []time.Time{t0}},
			{"fixed delay", jobs[2], []time.Time{t0}},
			{"late", jobs[3], []time.Time{t0.Add(-2 * time.Second)}},
		} {
			got := map[time.Time]bool{}
			for _, r := range runs(c.job) {
				if r.Message != shed {
					continue
				}
				got[r.ScheduledAt] = true
				if r.Status != carillonv1.RunStatus_RUN_STATUS_SKIPPED || r.MissedCount != 1 || !r.MissedUntil.Equal(r.ScheduledAt) {
					t.Errorf("%s: the record of %v: %v, missed %d until %v; want SKIPPED, its one instant", c.name, r.ScheduledAt, r.Status, r.MissedCount, r.MissedUntil)
				}
			}
			for _, at := range c.at {
				if !got[at] {
					t.Errorf("%s: no run of %v shed (%d shed), want its record saying %q", c.name, at, len(got), shed)
				}
			}
		}
		if rs := runs(jobs[3]); len(rs) != 2 || rs[1].MissedCount != 2 || rs[1].Message == shed {
			t.Errorf("late job: %d runs, want the record of its two missed instants, then the shed one", len(rs))
		}
		if rs := runs(jobs[4]); len(rs) != 1 || rs[0].Message != shed || rs[0].MissedCount != 4 || !rs[0].ScheduledAt.Equal(t0) ||
			!rs[0].MissedUntil.Equal(t0.Add(3*time.Second)) {
			t.Errorf("every-second job shed: %d runs %+v; want one record of its 4 instants from %v through %v", len(rs), rs, t0, t0.Add(3*time.Second))
		}
		if j, _ := st.Jobs.Get(ctx, jobs[4].ID); !j.NextFireAt.Equal(t0.Add(4 * time.Second)) {
			t.Errorf("every-second job shed: next fire %v, want %v, after the instants shed", j.NextFireAt, t0.Add(4*time.Second))
		}
		if j, _ := st.Jobs.Get(ctx, jobs[2].ID); !j.NextFireAt.Equal(t0.Add(30 * time.Second)) {
			t.Errorf("fixed delay job shed: next fire %v, want 30 s after the claim (%v)", j.NextFireAt, t0.Add(30*time.Second))
		}

		overloaded = false
		now = t0.Add(time.Minute)
		before, _ := schedule.Scan(ctx, s)
		if rs := runs(jobs[0]); len(rs) != 2 || rs[0].Status != carillonv1.RunStatus_RUN_STATUS_RUNNING || !rs[0].ScheduledAt.Equal(now) {
			t.Errorf("every minute job, the dispatcher keeping up: %d runs, the latest %v of %v; want its fire claimed RUNNING", len(rs), rs[0].Status, rs[0].ScheduledAt)
		}
		if before < 2 {
			t.Errorf("the scan of a dispatcher keeping up queued %d runs, want the two every-minute jobs' at least", before)
		}
	})
}

// TestOverloadedClaimsNoAhead: while the dispatcher is overloaded, the
// scan claims no further ahead than its look-ahead, where it sheds, even
// in a window sized for a burst: the burst 20 s off (600 jobs taken to
// cost 20 ms a claim: a lead of 25 s) waits, and no longer window is set
// for the next scan. Claimed seconds ahead, fires of an admin that
// cannot send them were never shed, and waited in the dispatcher until
// long after their instants. Once it keeps up, the burst is claimed.
func TestOverloadedClaimsNoAhead(t *testing.T) {
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		st, g := setup(t, be.DB(t))
		t0 := time.Now().Add(20 * time.Second).Truncate(time.Millisecond)
		const n = 600
		createJobs(t, st, n, fixRate(g, 3600, t0))
		const look = 100 * time.Millisecond
		overloaded := false
		s := schedule.New(schedule.Config{Store: st, Lookahead: look, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Overloaded: func() (string, bool) {
				if overloaded {
					return "the test's dispatcher is overloaded", true
				}
				return "", false
			}})
		schedule.SetClaimCost(s, 20*time.Millisecond)
		burstWindow := func(what string) {
			t.Helper()
			if window, _, queued := schedule.ScanOnce(ctx, s); window < time.Until(t0) || queued != 0 {
				t.Fatalf("%s: next window %v, %d queued; want one reaching the burst, %v away, and none yet",
					what, window, queued, time.Until(t0).Round(time.Second))
			}
		}
		burstWindow("keeping up")
		overloaded = true
		for scan := range 2 {
			if window, _, queued := schedule.ScanOnce(ctx, s); window != look || queued != 0 {
				t.Fatalf("overloaded, scan %d: next window %v, %d queued; want the look-ahead, %v, and none", scan+1, window, queued, look)
			}
		}
		overloaded = false
		burstWindow("keeping up again")
		if _, _, queued := schedule.ScanOnce(ctx, s); queued != n {
			t.Errorf("keeping up, the next scan claimed %d of the burst's %d fires, want all", queued, n)
		}
	})
}

// TestLeadAfterClaimed: the jobs due within a second after the window a
// scan claimed in do not size the next claim lead: every-second jobs,
// claimed ahead once for a burst, are then claimed as they come. 200
// jobs firing every second, first due 3 s off, at 60 ms a claim, make a
// lead of 25 s; counted again after the scan in it claimed their first
// fires, their next ones, 4 s off, kept that window for good, and the
// scans claimed further and further ahead.
func TestLeadAfterClaimed(t *testing.T) {
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		st, g := setup(t, be.DB(t))
		const n = 200
		createJobs(t, st, n, fixRate(g, 1, time.Now().Add(3*time.Second)))
		const look = 100 * time.Millisecond
		s := schedule.New(schedule.Config{Store: st, Lookahead: look, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		schedule.SetClaimCost(s, 60*time.Millisecond)
		if window, _, _ := schedule.ScanOnce(ctx, s); window < 10*time.Second {
			t.Fatalf("200 jobs first due 3 s off: next window %v, want a lead of seconds", window)
		}
		if window, _, queued := schedule.ScanOnce(ctx, s); queued != n || window != look {
			t.Errorf("after claiming %d fires in that lead: next window %v, want the look-ahead, %v", queued, window, look)
		}
	})
}

// TestLeadSkipsNextSecond: the jobs due within a second after the
// look-ahead, such as those that fire every second, do not size the
// claim lead, however many: the scan claims them as they come. 600 jobs
// due 0.9 s after it, at 20 ms a claim, would make a 25 s lead.
func TestLeadSkipsNextSecond(t *testing.T) {
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		st, g := setup(t, be.DB(t))
		const look = 100 * time.Millisecond
		const n = 600
		first := time.Now().Add(look + 900*time.Millisecond)
		createJobs(t, st, n, fixRate(g, 1, first))
		s := schedule.New(schedule.Config{Store: st, Lookahead: look, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		schedule.SetClaimCost(s, 20*time.Millisecond)
		window, _, queued := schedule.ScanOnce(ctx, s)
		// The scan must have found the jobs beyond its look-ahead, else
		// it claimed them and the test says nothing of the lead: a
		// machine that took 0.9 s to store 600 jobs fails it here.
		if queued != 0 {
			t.Fatalf("the scan claimed %d fires: the jobs were due within the look-ahead by then (stored %v after their first fire was set), not after it",
				queued, time.Since(first.Add(-look-900*time.Millisecond)).Round(time.Millisecond))
		}
		if window != look {
			t.Errorf("600 jobs due 0.9 s after the look-ahead: next window %v, want the look-ahead, %v", window, look)
		}
	})
}
