package trigger_test

import (
	"context"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestGatheredInstants: fires on instants less than GatherInstants apart
// are sent ahead together, by the earliest instant's lead, each run due on
// its own instant; their runs for an executor that does not take due_at
// are still sent on each one's instant; a fire GatherInstants after the
// first goes on its own.
func TestGatheredInstants(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		newer, newURL := newDueExecutor(t)
		older, oldURL := newDueExecutor(t)
		b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_MANUAL, newURL, oldURL)
		newer.clock, older.clock = b.clock, b.clock
		b.register(t, newURL, true)
		b.register(t, oldURL, false)
		first := b.clock.Now().Add(time.Second)
		offsets := []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond, trigger.GatherInstants}
		var es []schedule.Entry
		for _, o := range offsets {
			job := b.job(t, func(j *store.Job) { j.RouteStrategy = carillonv1.RouteStrategy_ROUTE_STRATEGY_SHARDING_BROADCAST })
			es = append(es, b.claimedFire(t, job, first.Add(o)))
		}
		b.trig.Dispatcher.Fire(es)

		awaitPending(t, b.clock)
		sendAt := first.Add(-trigger.SendAheadDefault)
		b.clock.Set(sendAt)
		newer.await(t, "three runs ahead", func(e *dueExecutor) bool { return len(e.reqs) == 3 })
		awaitPending(t, b.clock)
		b.clock.Set(first.Add(trigger.GatherInstants - trigger.SendAheadDefault))
		newer.await(t, "the fourth run ahead", func(e *dueExecutor) bool { return len(e.reqs) == 4 })
		newer.mu.Lock()
		for i, o := range offsets {
			wantAt := sendAt
			if i == 3 {
				wantAt = first.Add(o - trigger.SendAheadDefault)
			}
			for id, req := range newer.reqs {
				if req.JobId != es[i].JobID {
					continue
				}
				if due := req.DueAt.AsTime(); !due.Equal(first.Add(o)) || !newer.came[id].Equal(wantAt) {
					t.Errorf("the run of first+%v came first%+v due at first%+v, want first%+v due at its instant",
						o, newer.came[id].Sub(first), due.Sub(first), wantAt.Sub(first))
				}
			}
		}
		newer.mu.Unlock()

		for i, o := range offsets {
			awaitTimer(t, b.clock, first.Add(o))
			older.mu.Lock()
			if len(older.reqs) != i {
				t.Errorf("before first+%v, the executor without due_at had %d runs, want %d", o, len(older.reqs), i)
			}
			older.mu.Unlock()
			b.clock.Set(first.Add(o))
			older.await(t, "a run on its instant", func(e *dueExecutor) bool { return len(e.reqs) == i+1 })
		}
		b.trig.Wait()
		older.mu.Lock()
		for id, req := range older.reqs {
			r, err := b.st.Runs.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if req.DueAt != nil || !older.came[id].Equal(r.ScheduledAt) || !r.TriggeredAt.Equal(r.ScheduledAt) {
				t.Errorf("run of first+%v: sent first%+v with due_at %v, triggered first%+v; want on its instant, without due_at",
					r.ScheduledAt.Sub(first), older.came[id].Sub(first), req.DueAt, r.TriggeredAt.Sub(first))
			}
		}
		older.mu.Unlock()
	})
}

// TestGatheredUpdateResendsOnItsInstant: of two fires sent ahead together
// (GatherInstants), whose jobs are updated before their instants, each is
// sent again on its own instant, not on the later one's.
func TestGatheredUpdateResendsOnItsInstant(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b, ex, _ := setupDue(t, be)
		first := b.clock.Now().Add(time.Second)
		later := first.Add(trigger.GatherInstants - time.Millisecond)
		jobs := []store.Job{b.job(t, func(j *store.Job) { j.Param = "old" }), b.job(t, func(j *store.Job) { j.Param = "old" })}
		es := []schedule.Entry{b.claimedFire(t, jobs[0], first), b.claimedFire(t, jobs[1], later)}
		b.trig.Dispatcher.Fire(es)
		awaitPending(t, b.clock)
		b.clock.Set(first.Add(-trigger.SendAheadDefault))
		ex.await(t, "two runs ahead", func(e *dueExecutor) bool { return len(e.reqs) == 2 })
		wait, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if !b.clock.AwaitPending(wait, 2) {
			t.Fatal("the trigger did not wait for the instant within 10 s")
		}
		for _, j := range jobs {
			j.Param = "new"
			if _, err := b.st.Jobs.Update(ctx, j, false, b.clock.Now()); err != nil {
				t.Fatal(err)
			}
		}
		ex.await(t, "the replace kills", func(e *dueExecutor) bool { return len(e.kills) == 2 })
		awaitTimer(t, b.clock, first)
		b.clock.Set(first)
		ex.await(t, "the first run sent again", func(e *dueExecutor) bool { return len(e.all[es[0].RunID]) == 2 })
		ex.mu.Lock()
		if n := len(ex.all[es[1].RunID]); n != 1 {
			t.Errorf("on the first instant, the later run was sent %d times, want once (ahead)", n)
		}
		ex.mu.Unlock()
		awaitTimer(t, b.clock, later)
		b.clock.Set(later)
		ex.await(t, "the later run sent again", func(e *dueExecutor) bool { return len(e.all[es[1].RunID]) == 2 })
		b.trig.Wait()
		ex.mu.Lock()
		defer ex.mu.Unlock()
		for i, at := range []time.Time{first, later} {
			got := ex.all[es[i].RunID]
			if again := got[1]; again.Param != "new" || again.DueAt != nil || !ex.came[es[i].RunID].Equal(at) {
				t.Errorf("run %d sent again with param %q, due_at %v, at first%+v; want param %q, no due_at, on its instant first%+v",
					i, again.Param, again.DueAt, ex.came[es[i].RunID].Sub(first), "new", at.Sub(first))
			}
		}
	})
}

// TestGatheredLateSend: a call of gathered instants made after the first
// of them (an admin running late) records the time of the call as the
// triggered_at of the runs whose instant had passed, and keeps the
// instant of those still ahead of it.
func TestGatheredLateSend(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b, ex, _ := setupDue(t, be)
		now := b.clock.Now()
		passed, ahead := now.Add(-10*time.Millisecond), now.Add(50*time.Millisecond)
		es := []schedule.Entry{b.claimedFire(t, b.job(t, nil), passed), b.claimedFire(t, b.job(t, nil), ahead)}
		b.trig.Dispatcher.Fire(es)
		ex.await(t, "both runs at once", func(e *dueExecutor) bool { return len(e.reqs) == 2 })
		awaitTimer(t, b.clock, ahead)
		b.clock.Set(ahead)
		b.trig.Wait()
		for i, want := range []time.Time{now, ahead} {
			r, err := b.st.Runs.Get(ctx, es[i].RunID)
			if err != nil {
				t.Fatal(err)
			}
			if !r.TriggeredAt.Equal(want) {
				t.Errorf("run %d: triggered at now%+v, want now%+v", i, r.TriggeredAt.Sub(now), want.Sub(now))
			}
		}
	})
}
