package trigger_test

import (
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestBurstSentAhead: a burst of fires on one instant, more batches than
// the dispatch pool has slots, is sent whole before its instant, and
// earlier than a single fire (SendLead): a batch waiting for its instant
// holds no slot.
func TestBurstSentAhead(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ex, url := newDueExecutor(t)
		b := setupWith(t, be, func(c *trigger.Config) { c.MaxInFlight = 1 }, carillonv1.AddressMode_ADDRESS_MODE_MANUAL, url)
		ex.clock = b.clock
		b.register(t, url, true)
		const n = 600 // three batches (batchMax is 256), one slot
		instant := b.clock.Now().Add(5 * time.Second)
		es := make([]schedule.Entry, n)
		for i := range es {
			es[i] = b.claimedFire(t, b.job(t, nil), instant)
		}
		b.trig.Dispatcher.Fire(es)

		lead := trigger.SendLead(trigger.SendAheadDefault, n)
		if lead <= trigger.SendAheadDefault {
			t.Fatalf("SendLead of %d runs = %v, want more than SendAhead (%v)", n, lead, trigger.SendAheadDefault)
		}
		awaitPending(t, b.clock) // the batches are routed and wait to send
		b.clock.Set(instant.Add(-lead))
		ex.await(t, "every run of the burst before its instant", func(e *dueExecutor) bool { return len(e.reqs) == n })
		ex.mu.Lock()
		defer ex.mu.Unlock()
		for id, req := range ex.reqs {
			if came := ex.came[id]; !came.Equal(instant.Add(-lead)) || !req.DueAt.AsTime().Equal(instant) {
				t.Fatalf("run %d came at %v with due_at %v, want at %v with due_at %v", id, came, req.DueAt.AsTime(), instant.Add(-lead), instant)
			}
		}
	})
}
