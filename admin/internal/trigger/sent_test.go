package trigger_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	"github.com/carillonhq/carillon/internal/clock"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// acceptorServer serves an acceptor on loopback.
func acceptorServer(t *testing.T) (*acceptor, string) {
	t.Helper()
	exec := &acceptor{}
	return exec, testkit.ServeExecutor(t, exec)
}

// setupAcceptor is setup with an acceptor on loopback, at url, the one
// executor of the MANUAL group.
func setupAcceptor(t *testing.T, be dbtest.Backend) (b *bundle, exec *acceptor, url string) {
	t.Helper()
	exec, url = acceptorServer(t)
	return setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_MANUAL, url), exec, url
}

// TestTriggeredAtIsWhenSent: a scheduled run sent 170 ms after the instant
// its claim stored records when it was really sent, whether its dispatch
// is stored with its result or on its own; a run sent on its instant keeps
// it.
func TestTriggeredAtIsWhenSent(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b, exec, url := setupAcceptor(t, be)
		instant := b.clock.Now()
		late := instant.Add(170 * time.Millisecond) // when the trigger's clock says the runs are sent
		var es []schedule.Entry
		claimedAt := []time.Time{instant, instant, late} // the last is sent on its instant
		at := instant                                    // one instant, come by the time of Fire: sent at once
		for _, c := range claimedAt {
			j := b.job(t, nil)
			runs, err := b.st.Runs.Insert(ctx, []store.Run{{JobID: j.ID, GroupID: b.group.ID, ShardTotal: 1, ScheduledAt: c, TriggeredAt: c,
				TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING}})
			if err != nil {
				t.Fatal(err)
			}
			es = append(es, schedule.Entry{RunID: runs[0].ID, JobID: j.ID, At: at, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE,
				Claimed: true, Run: &runs[0], StopSeq: b.st.Jobs.StopSeq()})
		}
		b.clock.Add(late.Sub(instant))
		b.trig.Dispatcher.Fire(es)
		exec.await(t, len(es))
		// The first run's dispatch is stored with its result, the others' by Wait.
		if err := b.trig.Completer.Settle(ctx, []store.Result{{RunID: es[0].RunID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: late}}); err != nil {
			t.Fatal(err)
		}
		b.trig.Wait()
		for i, want := range []time.Time{late, late, late} {
			r, err := b.st.Runs.Get(ctx, es[i].RunID)
			if err != nil {
				t.Fatal(err)
			}
			if !r.TriggeredAt.Equal(want) || r.ExecutorAddress != url {
				t.Errorf("run %d claimed for %v: triggered at %v on %q, want %v (when it was sent) on %s",
					i, claimedAt[i].Format(time.StampMilli), r.TriggeredAt.Format(time.StampMilli), r.ExecutorAddress, want.Format(time.StampMilli), url)
			}
		}
	})
}

// TestManualTriggeredAtIsWhenSent: a manual run records when it was sent,
// not when it was created, when time passed in between.
func TestManualTriggeredAtIsWhenSent(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b, _, url := setupAcceptor(t, be)
		clk := clock.NewFake(b.clock.Now())
		clk.Step = 50 * time.Millisecond // moves at each reading
		trig, err := trigger.New(trigger.Config{Store: b.st, Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Queue: nopQueue{}})
		if err != nil {
			t.Fatal(err)
		}
		ids, err := trig.Dispatcher.TriggerJob(ctx, b.job(t, nil), trigger.Manual{})
		if err != nil {
			t.Fatal(err)
		}
		trig.Wait()
		r, err := b.st.Runs.Get(ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		if !r.TriggeredAt.After(r.ScheduledAt) || r.ExecutorAddress != url {
			t.Errorf("manual run created at %v: triggered at %v on %q, want later (the clock moved before the send) on %s",
				r.ScheduledAt.Format(time.StampMilli), r.TriggeredAt.Format(time.StampMilli), r.ExecutorAddress, url)
		}
	})
}

// TestTriggerMessage: a run's trigger message says how it was routed, its
// shard, where it was sent with how many others, and how the call went,
// whether its dispatch was held and stored with its result, held and
// stored on its own, or stored at once (a manual run, a failed call).
func TestTriggerMessage(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b, exec, url := setupAcceptor(t, be)
		instant := b.clock.Now()
		es := []schedule.Entry{b.claimedFire(t, b.job(t, nil), instant), b.claimedFire(t, b.job(t, nil), instant)}
		b.trig.Dispatcher.Fire(es)
		exec.await(t, 2)
		if err := b.trig.Completer.Settle(ctx, []store.Result{{RunID: es[0].RunID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: instant}}); err != nil {
			t.Fatal(err)
		}
		b.trig.Wait() // stores the other on its own
		ids, err := b.trig.Dispatcher.TriggerJob(ctx, b.job(t, nil), trigger.Manual{})
		if err != nil {
			t.Fatal(err)
		}
		dead := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_MANUAL, "http://127.0.0.1:1") // nobody listens
		failedIDs, err := dead.trig.Dispatcher.TriggerJob(ctx, dead.job(t, nil), trigger.Manual{})
		if err != nil {
			t.Fatal(err)
		}

		const took = `; the call took [0-9.]+[nµm]?s`
		sent := func(url string, runs int, end string) *regexp.Regexp {
			return regexp.MustCompile(`^executors from group app \(MANUAL\); \S.*chose ` + regexp.QuoteMeta(url) +
				fmt.Sprintf(`.*; a call of %d runs%s$`, runs, end))
		}
		for _, tt := range []struct {
			name string
			st   *store.Store
			run  int64
			want *regexp.Regexp
		}{
			// The result may come before the call returned: then nothing is
			// known of the call yet.
			{"HeldWithResult", b.st, es[0].RunID, sent(url, 2, "("+took+")?")},
			{"HeldAlone", b.st, es[1].RunID, sent(url, 2, took)},
			{"Manual", b.st, ids[0], sent(url, 1, took)},
			{"Failed", dead.st, failedIDs[0], sent("http://127.0.0.1:1", 1, took+"; failed")},
		} {
			r, err := tt.st.Runs.Get(ctx, tt.run)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.want.MatchString(r.TriggerMessage) {
				t.Errorf("%s: trigger message %q, want it to match %s", tt.name, r.TriggerMessage, tt.want)
			}
		}
	})
}
