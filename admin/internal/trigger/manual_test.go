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

// TestManualExecutorLost: executors of MANUAL groups never register, so
// the monitor probes those that hold runs. A run its executor answers
// without holding is lost at once; the runs of an executor that has not
// answered for the executor TTL are lost, even without a timeout; runs an
// answering executor holds are left alone.
func TestManualExecutorLost(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		live := &holder{answers: true, held: map[int64]carillonv1.HeldRunState{}}
		liveURL, dead := testkit.ServeExecutor(t, live), testkit.DeadURL(t)
		b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_MANUAL, liveURL, dead)
		j := b.job(t, nil)
		now := b.clock.Now()
		n := 0
		run := func(addr string) int64 {
			n++
			return insertRunning(t, b.st, store.Run{JobID: j.ID, GroupID: b.group.ID, ScheduledAt: now.Add(time.Duration(n) * time.Second),
				TriggeredAt: now, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, ExecutorAddress: addr})
		}
		held, forgotten, atDead := run(liveURL), run(liveURL), run(dead)
		live.held[held] = carillonv1.HeldRunState_HELD_RUN_STATE_ACTIVE
		status := func(id int64) store.Run { r, _ := b.st.Runs.Get(ctx, id); return r }

		b.clock.Add(40 * time.Second) // past the grace: probed
		if err := b.trig.Rescuer.Sweep(ctx, trigger.LostGraceDefault); err != nil {
			t.Fatal(err)
		}
		if r := status(forgotten); r.Status != carillonv1.RunStatus_RUN_STATUS_LOST || !strings.Contains(r.Message, "does not hold") {
			t.Errorf("run its executor does not hold: %s %q, want LOST saying so", r.Status, r.Message)
		}
		if status(held).Status != carillonv1.RunStatus_RUN_STATUS_RUNNING || status(atDead).Status != carillonv1.RunStatus_RUN_STATUS_RUNNING {
			t.Fatalf("after one probe: runs %s and %s, want both RUNNING (held; silent for less than the TTL)",
				status(held).Status, status(atDead).Status)
		}
		b.clock.Add(100 * time.Second) // silent for longer than the 90 s TTL
		if err := b.trig.Rescuer.Sweep(ctx, trigger.LostGraceDefault); err != nil {
			t.Fatal(err)
		}
		if r := status(atDead); r.Status != carillonv1.RunStatus_RUN_STATUS_LOST || !r.AdminSettled || !strings.Contains(r.Message, "has not answered") {
			t.Errorf("run at the silent executor: %s %q, want LOST by the admin, saying it has not answered", r.Status, r.Message)
		}
		if s := status(held).Status; s != carillonv1.RunStatus_RUN_STATUS_RUNNING {
			t.Errorf("run the live executor holds: %s, want RUNNING", s)
		}
	})
}
