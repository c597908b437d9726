package trigger_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestRefusedConnectionReroutes: a run whose executor refuses the
// connection goes to another live executor of the group in the same fire,
// for a strategy that can pick another; the executor that refused is not
// picked again until it beats. FIRST's route is the point: its run fails.
func TestRefusedConnectionReroutes(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		for _, tt := range []struct {
			strategy carillonv1.RouteStrategy
			reroutes bool
		}{
			{carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN, true},
			{carillonv1.RouteStrategy_ROUTE_STRATEGY_RANDOM, true},
			{carillonv1.RouteStrategy_ROUTE_STRATEGY_LEAST_RECENTLY_USED, true},
			{carillonv1.RouteStrategy_ROUTE_STRATEGY_FIRST, false},
		} {
			t.Run(tt.strategy.String(), func(t *testing.T) {
				t.Parallel()
				b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_AUTO)
				live := &holder{}
				dead, alive := "http://127.0.0.1:1", testkit.ServeExecutor(t, live) // port 1: refused; sorted first, so FIRST picks it
				b.register(t, dead, false)
				b.register(t, alive, false)
				j := b.job(t, func(j *store.Job) { j.RouteStrategy = tt.strategy })
				const fires = 6
				rerouted := false // a fire was re-routed: the executor that refused is not picked again
				for i := range fires {
					ids, err := b.trig.Dispatcher.TriggerJob(ctx, j, trigger.Manual{})
					if err != nil {
						t.Fatal(err)
					}
					r, _ := b.st.Runs.Get(ctx, ids[0])
					switch {
					case tt.reroutes && (r.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING || r.ExecutorAddress != alive):
						t.Errorf("fire %d: run %s at %q (%s), want RUNNING at the live executor %s", i, r.Status, r.ExecutorAddress, r.Message, alive)
					case !tt.reroutes && (r.Status != carillonv1.RunStatus_RUN_STATUS_FAILED || !strings.Contains(r.Message, "connection refused")):
						t.Errorf("fire %d: run %s (%s), want FAILED, connection refused: FIRST's route is the point", i, r.Status, r.Message)
					}
					if strings.Contains(r.TriggerMessage, "refused the connection") {
						if rerouted {
							t.Errorf("fire %d was routed to the executor that refused a connection before it beat again: %s", i, r.TriggerMessage)
						}
						rerouted = true
					}
				}
				if tt.strategy == carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN && !rerouted {
					t.Errorf("ROUND_ROBIN's first fire, to the first executor (the dead one), was not re-routed")
				}
				if tt.reroutes && len(live.sent()) != fires {
					t.Errorf("the live executor got %d runs, want all %d", len(live.sent()), fires)
				}
			})
		}
	})
}

// duplicate is an executor that holds every run it is sent already.
type duplicate struct{ acceptor }

func (d *duplicate) Run(context.Context, *carillonv1.RunRequest) (*carillonv1.RunResponse, error) {
	return nil, connect.NewError(connect.CodeAlreadyExists, errors.New("sdk: duplicate run: run 1 was accepted here before"))
}

// TestDuplicateIsDelivered: an executor's already_exists means it holds
// the run: the send succeeded (a stalled admin's late call, or a run sent
// again by the admin that adopted it), and the run is not failed.
func TestDuplicateIsDelivered(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		addr := testkit.ServeExecutor(t, &duplicate{})
		b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_MANUAL, addr)
		ids, err := b.trig.Dispatcher.TriggerJob(ctx, b.job(t, nil), trigger.Manual{})
		if err != nil {
			t.Fatal(err)
		}
		r, _ := b.st.Runs.Get(ctx, ids[0])
		if r.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING || r.ExecutorAddress != addr || !strings.Contains(r.TriggerMessage, "held the run already") {
			t.Errorf("run %s at %q, %q / %q; want RUNNING at %s, saying the executor held the run already", r.Status, r.ExecutorAddress,
				r.Message, r.TriggerMessage, addr)
		}
	})
}

// TestRestartedExecutorGetsRunsSentAhead: a run sent ahead of an instant
// after its executor restarted, which the new process does not hold, never
// started there: it is sent again to that executor, not settled LOST.
func TestRestartedExecutorGetsRunsSentAhead(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_AUTO)
		exec := &holder{answers: true, held: map[int64]carillonv1.HeldRunState{}}
		addr := testkit.ServeExecutor(t, exec)
		j := b.job(t, nil)
		now := b.clock.Now()
		run := func(instant time.Time) int64 {
			return insertRunning(t, b.st, store.Run{JobID: j.ID, GroupID: b.group.ID, ScheduledAt: instant, TriggeredAt: instant,
				TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, ExecutorAddress: addr})
		}
		started, ahead := run(now.Add(-time.Second)), run(now.Add(2*time.Second))
		b.register(t, addr, true)
		b.clock.Add(time.Second)
		b.trig.Registered(addr, "second", "first") // a new process, before the second run's instant
		if err := b.trig.Rescuer.Sweep(ctx, trigger.LostGraceDefault); err != nil {
			t.Fatal(err)
		}
		if got := exec.sent(); !slices.Equal(got, []int64{ahead}) {
			t.Errorf("runs sent again to the restarted executor: %v, want [%d], the one sent ahead of an instant after the restart", got, ahead)
		}
		for id, want := range map[int64]carillonv1.RunStatus{started: carillonv1.RunStatus_RUN_STATUS_LOST, ahead: carillonv1.RunStatus_RUN_STATUS_RUNNING} {
			if got, _ := b.st.Runs.Get(ctx, id); got.Status != want {
				t.Errorf("run %d: %s (%s), want %s", id, got.Status, got.Message, want)
			}
		}
	})
}
