package trigger_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// wakes counts the Completer's calls of Alarms.Wake.
type wakes struct{ n atomic.Int32 }

func (w *wakes) Wake() { w.n.Add(1) }

// TestAlarmsHandedOn: a settled run whose policy decides an alarm wakes
// the alarm sender (Config.Alarms), with the alarm stored on the run; a
// run that succeeds, fails with a retry left, or fails with no one to
// alarm (its job names no recipient, the admin none), wakes nothing.
func TestAlarmsHandedOn(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		w := &wakes{}
		b := setupWith(t, be, func(c *trigger.Config) { c.Alarms = w }, carillonv1.AddressMode_ADDRESS_MODE_AUTO)
		const hook = "https://hooks.example.com/alarms"
		settle := func(retries int32, status carillonv1.RunStatus, webhook string) store.Run {
			t.Helper()
			j := b.job(t, func(j *store.Job) { j.RetryCount, j.AlarmWebhookURL = retries, webhook })
			runs, err := b.st.Runs.Insert(ctx, []store.Run{{JobID: j.ID, GroupID: b.group.ID, ShardTotal: 1, ScheduledAt: b.clock.Now(),
				TriggeredAt: b.clock.Now(), TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING}})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.trig.Completer.Settle(ctx, []store.Result{{RunID: runs[0].ID, Status: status, FinishedAt: b.clock.Now()}}); err != nil {
				t.Fatal(err)
			}
			r, err := b.st.Runs.Get(ctx, runs[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		for _, c := range []struct {
			name    string
			retries int32
			status  carillonv1.RunStatus
			webhook string
			alarm   bool
		}{
			{"succeeded", 0, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, hook, false},
			{"failed with a retry left", 1, carillonv1.RunStatus_RUN_STATUS_FAILED, hook, false},
			{"failed for good", 0, carillonv1.RunStatus_RUN_STATUS_FAILED, hook, true},
			{"failed for good, no one to alarm", 0, carillonv1.RunStatus_RUN_STATUS_FAILED, "", false},
		} {
			before := w.n.Load()
			r := settle(c.retries, c.status, c.webhook)
			woke := w.n.Load() > before
			pending := r.AlarmStatus == carillonv1.AlarmStatus_ALARM_STATUS_PENDING
			if woke != c.alarm || pending != c.alarm {
				t.Errorf("%s: woke the alarm sender %v, alarm stored %v (%s); want %v", c.name, woke, pending, r.AlarmStatus, c.alarm)
			}
		}
	})
}
