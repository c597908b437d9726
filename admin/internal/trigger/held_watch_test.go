package trigger_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestHeldWatch: the monitor's backstop for AUTO groups. A running run
// dispatched more than the grace ago whose live executor says it was cut
// short is LOST at once; one it does not hold ACTIVE (not listed, or ENDED
// with no result coming) is LOST once it has not been ACTIVE for longer
// than the grace since first seen so, with or without a timeout; one seen
// ACTIVE again starts over; runs the executor holds ACTIVE, and runs of an
// executor that cannot say (an older SDK), are left alone.
func TestHeldWatch(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		const grace = trigger.LostGraceDefault
		ex := &holder{answers: true, held: map[int64]carillonv1.HeldRunState{}}
		old := &holder{} // serves no HeldRuns
		addr, oldAddr := testkit.ServeExecutor(t, ex), testkit.ServeExecutor(t, old)
		b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_AUTO)
		j := b.job(t, nil)
		start := b.clock.Now()
		n := 0
		run := func(at string) int64 {
			n++
			return insertRunning(t, b.st, store.Run{JobID: j.ID, GroupID: b.group.ID, ScheduledAt: start.Add(time.Duration(n) * time.Second),
				TriggeredAt: start, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, ExecutorAddress: at})
		}
		active, absent, ended, cutShort, flaky, unknowable := run(addr), run(addr), run(addr), run(addr), run(addr), run(oldAddr)
		ex.held[active] = carillonv1.HeldRunState_HELD_RUN_STATE_ACTIVE
		ex.held[ended] = carillonv1.HeldRunState_HELD_RUN_STATE_ENDED
		ex.held[cutShort] = carillonv1.HeldRunState_HELD_RUN_STATE_CUT_SHORT
		sweep := func(after time.Duration) {
			t.Helper()
			b.clock.Add(after)
			for _, a := range []string{addr, oldAddr} { // both live: no executor is lost here
				b.register(t, a, false)
			}
			if err := b.trig.Rescuer.Sweep(ctx, grace); err != nil {
				t.Fatal(err)
			}
		}
		status := func(id int64) store.Run { r, _ := b.st.Runs.Get(ctx, id); return r }
		want := func(when string, runs map[int64]carillonv1.RunStatus) {
			t.Helper()
			for id, st := range runs {
				if got := status(id); got.Status != st {
					t.Errorf("%s: run %d %s (%q), want %s", when, id, got.Status, got.Message, st)
				}
			}
		}
		const (
			running = carillonv1.RunStatus_RUN_STATUS_RUNNING
			lost    = carillonv1.RunStatus_RUN_STATUS_LOST
		)

		sweep(grace / 2) // dispatched less than the grace ago: not asked about
		if ex.wasAsked(active) {
			t.Error("runs dispatched less than the grace ago were asked about")
		}
		want("within the grace", map[int64]carillonv1.RunStatus{active: running, absent: running, ended: running, cutShort: running})

		sweep(grace/2 + time.Second) // asked: absent, ended and flaky first seen not active
		want("first asked", map[int64]carillonv1.RunStatus{active: running, absent: running, ended: running, cutShort: lost, flaky: running, unknowable: running})
		if r := status(cutShort); !r.AdminSettled || !strings.Contains(r.Message, "the executor restarted; the run was cut short") {
			t.Errorf("run cut short: settled by the admin %v, message %q; want the admin's, saying it was cut short", r.AdminSettled, r.Message)
		}

		ex.mu.Lock()
		ex.held[flaky] = carillonv1.HeldRunState_HELD_RUN_STATE_ACTIVE // it was queued after all
		ex.mu.Unlock()
		sweep(grace / 2)
		ex.mu.Lock()
		delete(ex.held, flaky)
		ex.mu.Unlock()
		sweep(grace/2 + time.Second) // absent and ended: not active for longer than the grace
		want("past the grace", map[int64]carillonv1.RunStatus{active: running, absent: lost, ended: lost, flaky: running, unknowable: running})
		for id, says := range map[int64]string{absent: "does not hold this run", ended: "says this run ended"} {
			if r := status(id); !r.AdminSettled || !strings.Contains(r.Message, says) {
				t.Errorf("run %d: settled by the admin %v, message %q; want the admin's, saying %q", id, r.AdminSettled, r.Message, says)
			}
		}

		sweep(grace + time.Second) // flaky: not active for longer than the grace since it was ACTIVE
		want("the grace after it was last ACTIVE", map[int64]carillonv1.RunStatus{active: running, flaky: lost, unknowable: running})
	})
}

// TestManualEndedWithoutResult: an executor of a MANUAL group that says a
// run ENDED (an SDK older than CUT_SHORT says so of a run its killed
// process cut short) while no result comes has the run LOST once the
// grace has passed since it first said so; one it says was cut short is
// LOST at once.
func TestManualEndedWithoutResult(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		const grace = trigger.LostGraceDefault
		ex := &holder{answers: true, held: map[int64]carillonv1.HeldRunState{}}
		addr := testkit.ServeExecutor(t, ex)
		b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_MANUAL, addr)
		j := b.job(t, nil)
		start := b.clock.Now()
		n := 0
		run := func() int64 {
			n++
			return insertRunning(t, b.st, store.Run{JobID: j.ID, GroupID: b.group.ID, ScheduledAt: start.Add(time.Duration(n) * time.Second),
				TriggeredAt: start, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, ExecutorAddress: addr})
		}
		active, ended, cutShort := run(), run(), run()
		ex.held[active] = carillonv1.HeldRunState_HELD_RUN_STATE_ACTIVE
		ex.held[ended] = carillonv1.HeldRunState_HELD_RUN_STATE_ENDED
		ex.held[cutShort] = carillonv1.HeldRunState_HELD_RUN_STATE_CUT_SHORT
		status := func(id int64) store.Run { r, _ := b.st.Runs.Get(ctx, id); return r }
		sweep := func(after time.Duration) {
			t.Helper()
			b.clock.Add(after)
			if err := b.trig.Rescuer.Sweep(ctx, grace); err != nil {
				t.Fatal(err)
			}
		}
		sweep(grace + time.Second)
		if r := status(cutShort); r.Status != carillonv1.RunStatus_RUN_STATUS_LOST || !strings.Contains(r.Message, "the executor restarted; the run was cut short") {
			t.Errorf("run cut short: %s %q, want LOST saying it was cut short", r.Status, r.Message)
		}
		if s := status(ended).Status; s != carillonv1.RunStatus_RUN_STATUS_RUNNING {
			t.Errorf("run said ENDED a moment ago: %s, want RUNNING (its result may be on its way)", s)
		}
		sweep(grace + time.Second)
		if r := status(ended); r.Status != carillonv1.RunStatus_RUN_STATUS_LOST || !strings.Contains(r.Message, "says this run ended") {
			t.Errorf("run said ENDED for longer than the grace, no result: %s %q, want LOST saying so", r.Status, r.Message)
		}
		if s := status(active).Status; s != carillonv1.RunStatus_RUN_STATUS_RUNNING {
			t.Errorf("run held ACTIVE: %s, want RUNNING", s)
		}
	})
}
