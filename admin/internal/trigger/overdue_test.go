package trigger_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestOverdueFiresMisfire: a scheduled fire the dispatcher reaches more
// than the misfire threshold after its instant (an overloaded admin) is
// not sent but recorded as a misfire, SKIPPED with missed_count 1, when
// handed over that late and when its call, sent ahead or on its instant,
// comes that late; a fire of a FIRE_ONCE_NOW job is sent however late,
// and a fire at the threshold is sent.
func TestOverdueFiresMisfire(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		threshold := schedule.MisfireThresholdDefault
		doNothing, onceNow := carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING, carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW
		// Each phase its own admin, on its own clock: the runs sent by
		// the first leave timers on its clock (deferred dispatch records).
		type admin struct {
			b          *bundle
			due, plain *dueExecutor
			job        func(dueAt bool, strategy carillonv1.MisfireStrategy) store.Job
		}
		newAdmin := func() admin {
			due, dueURL := newDueExecutor(t)
			plain, plainURL := newDueExecutor(t)
			b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_MANUAL, dueURL, plainURL)
			due.clock, plain.clock = b.clock, b.clock
			b.register(t, dueURL, true)
			b.register(t, plainURL, false)
			return admin{b: b, due: due, plain: plain, job: func(dueAt bool, strategy carillonv1.MisfireStrategy) store.Job {
				return b.job(t, func(j *store.Job) {
					j.RouteStrategy = carillonv1.RouteStrategy_ROUTE_STRATEGY_LAST
					if dueAt {
						j.RouteStrategy = carillonv1.RouteStrategy_ROUTE_STRATEGY_FIRST
					}
					j.MisfireStrategy = strategy
				})
			}}
		}

		// Handed over late: to either executor.
		a := newAdmin()
		now := a.b.clock.Now()
		lateFires := []schedule.Entry{
			a.b.claimedFire(t, a.job(true, doNothing), now.Add(-threshold-time.Millisecond)),
			a.b.claimedFire(t, a.job(false, doNothing), now.Add(-threshold-time.Millisecond)),
			a.b.claimedFire(t, a.job(true, onceNow), now.Add(-threshold-time.Second)),
			a.b.claimedFire(t, a.job(true, doNothing), now.Add(-threshold)),
		}
		a.b.trig.Dispatcher.Fire(lateFires)
		a.b.trig.Wait()

		// Handed over in time, reached late: the call ahead, and the call
		// on the instant, come after the threshold.
		l := newAdmin()
		instant := l.b.clock.Now().Add(time.Second)
		ahead, onInstant := l.b.claimedFire(t, l.job(true, doNothing), instant), l.b.claimedFire(t, l.job(false, doNothing), instant)
		l.b.trig.Dispatcher.Fire([]schedule.Entry{ahead, onInstant})
		awaitPending(t, l.b.clock)
		if n := l.b.trig.Dispatcher.Backlog(); n != 2 {
			t.Errorf("two fires waiting for their instant: the backlog holds %d, want 2", n)
		}
		l.b.clock.Set(instant.Add(threshold + time.Millisecond))
		l.b.trig.Wait()
		// Every fire reached, sent or not, has left the backlog: one left
		// behind would make the scan shed for good.
		for _, ad := range []admin{a, l} {
			if n := ad.b.trig.Dispatcher.Backlog(); n != 0 {
				t.Errorf("every fire sent or settled: the backlog holds %d, want 0", n)
			}
		}

		sent := func(ad admin, run int64) bool { // run IDs are each database's own
			for _, e := range []*dueExecutor{ad.due, ad.plain} {
				e.mu.Lock()
				_, ok := e.reqs[run]
				e.mu.Unlock()
				if ok {
					return true
				}
			}
			return false
		}
		for _, c := range []struct {
			what string
			at   admin
			e    schedule.Entry
			sent bool
		}{
			{"handed over late, for an executor that takes due_at", a, lateFires[0], false},
			{"handed over late, for an executor that does not", a, lateFires[1], false},
			{"FIRE_ONCE_NOW, handed over late", a, lateFires[2], true},
			{"handed over the threshold late", a, lateFires[3], true},
			{"whose call ahead came late", l, ahead, false},
			{"whose call on its instant came late", l, onInstant, false},
		} {
			r, err := c.at.b.st.Runs.Get(ctx, c.e.RunID)
			if err != nil {
				t.Fatal(err)
			}
			if sent(c.at, r.ID) != c.sent {
				t.Errorf("the fire %s: sent %v, want %v", c.what, !c.sent, c.sent)
			}
			if c.sent {
				continue
			}
			if r.Status != carillonv1.RunStatus_RUN_STATUS_SKIPPED || r.MissedCount != 1 || !r.MissedUntil.Equal(r.ScheduledAt) ||
				!strings.HasPrefix(r.Message, "misfire: the admin was overloaded") {
				t.Errorf("the fire %s: %v, missed %d until %v, %q; want SKIPPED, the record of its one missed instant %v, a misfire",
					c.what, r.Status, r.MissedCount, r.MissedUntil, r.Message, r.ScheduledAt)
			}
		}
	})
}

// TestOverdueThreshold: the dispatcher's misfire threshold is its
// Config's: a fire handed over 2 s late is sent under the default (5 s)
// and recorded as a misfire under 1 s.
func TestOverdueThreshold(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		for _, c := range []struct {
			threshold time.Duration
			sent      bool
		}{{0, true}, {time.Second, false}} {
			ex, url := newDueExecutor(t)
			b := setupWith(t, be, func(cfg *trigger.Config) { cfg.MisfireThreshold = c.threshold },
				carillonv1.AddressMode_ADDRESS_MODE_MANUAL, url)
			ex.clock = b.clock
			b.register(t, url, true)
			e := b.claimedFire(t, b.job(t, nil), b.clock.Now().Add(-2*time.Second))
			b.trig.Dispatcher.Fire([]schedule.Entry{e})
			b.trig.Wait()
			ex.mu.Lock()
			_, sent := ex.reqs[e.RunID]
			ex.mu.Unlock()
			if sent != c.sent {
				t.Errorf("threshold %v: a fire 2 s late sent %v, want %v", c.threshold, sent, c.sent)
			}
		}
	})
}

// TestOverloaded: the dispatcher says it is overloaded while its latest
// sends were more than half the misfire threshold late, and not once a
// send is timely again, nor a second after its last late send.
func TestOverloaded(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		b, _, _ := setupDue(t, be)
		half := schedule.MisfireThresholdDefault / 2
		if why, ok := b.trig.Dispatcher.Overloaded(); ok {
			t.Errorf("a new dispatcher overloaded: %q", why)
		}
		fire := func(late time.Duration) {
			t.Helper()
			b.trig.Dispatcher.Fire([]schedule.Entry{b.claimedFire(t, b.job(t, nil), b.clock.Now().Add(-late))})
			b.trig.Wait()
		}
		fire(half)
		if why, ok := b.trig.Dispatcher.Overloaded(); ok {
			t.Errorf("a send half the threshold late: overloaded, %q; want not (more than half)", why)
		}
		fire(half + time.Second)
		why, ok := b.trig.Dispatcher.Overloaded()
		if want := "its latest sends were 3.5s late"; !ok || !strings.Contains(why, want) {
			t.Errorf("a send 3.5 s late: overloaded %v, %q; want so, saying %q", ok, why, want)
		}
		fire(0)
		if why, ok := b.trig.Dispatcher.Overloaded(); ok {
			t.Errorf("a timely send after a late one: overloaded, %q; want not", why)
		}
		fire(half + time.Second)
		b.clock.Add(time.Second)
		if why, ok := b.trig.Dispatcher.Overloaded(); ok {
			t.Errorf("a second after the last late send: overloaded, %q; want not", why)
		}
	})
}

// TestBacklogSentAhead: a fire leaves the dispatcher's backlog when its
// call is made, not when its batch ends: one sent ahead of its instant is
// out of it while it waits for that instant on its executor.
func TestBacklogSentAhead(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		b, ex, _ := setupDue(t, be)
		instant := b.clock.Now().Add(trigger.SendAheadDefault / 2)
		e := b.claimedFire(t, b.job(t, nil), instant)
		b.trig.Dispatcher.Fire([]schedule.Entry{e})
		ex.await(t, "the fire sent ahead", func(ex *dueExecutor) bool { return ex.reqs[e.RunID] != nil })
		if n := b.trig.Dispatcher.Backlog(); n != 0 {
			t.Errorf("the one fire sent ahead, before its instant: the backlog holds %d, want 0", n)
		}
		b.clock.Set(instant)
		b.trig.Wait()
	})
}
