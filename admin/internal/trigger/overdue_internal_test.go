package trigger

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestRefuseOverdue: of the fires a dispatcher cannot dispatch (no slot
// free: refuse), those overdue are recorded as misfires, SKIPPED, and the
// others, a FIRE_ONCE_NOW job's overdue fire among them, fail with the
// reason.
func TestRefuseOverdue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, g, doNothing := routeFixture(t)
	onceNow, err := st.Jobs.Create(ctx, store.Job{GroupID: g.ID, Description: "j", Handler: "h", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE,
		MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(Config{Store: st, Queue: nopQueue{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	late := now.Add(-tr.Dispatcher.cfg.MisfireThreshold - time.Second)
	runs, err := st.Runs.Insert(ctx, []store.Run{
		{JobID: doNothing.ID, GroupID: g.ID, ShardTotal: 1, ScheduledAt: late, TriggeredAt: late,
			TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING},
		{JobID: onceNow.ID, GroupID: g.ID, ShardTotal: 1, ScheduledAt: late, TriggeredAt: late,
			TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING},
		{JobID: doNothing.ID, GroupID: g.ID, ShardTotal: 1, ScheduledAt: now, TriggeredAt: now,
			TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING},
	})
	if err != nil {
		t.Fatal(err)
	}
	fs := make([]fire, len(runs))
	for i := range runs {
		fs[i] = fireOf(&runs[i], runs[i].TriggeredAt, st.Jobs.StopSeq())
	}
	if err := tr.Dispatcher.refuse(ctx, fs, "no slot"); err != nil {
		t.Fatal(err)
	}
	tr.Wait()
	for i, want := range []carillonv1.RunStatus{carillonv1.RunStatus_RUN_STATUS_SKIPPED, carillonv1.RunStatus_RUN_STATUS_FAILED,
		carillonv1.RunStatus_RUN_STATUS_FAILED} {
		r, err := st.Runs.Get(ctx, runs[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		wantMsg := "no slot"
		if want == carillonv1.RunStatus_RUN_STATUS_SKIPPED {
			wantMsg = "misfire: the admin was overloaded"
		}
		if r.Status != want || !strings.Contains(r.Message, wantMsg) {
			t.Errorf("fire %d refused: %v, %q; want %v, %q", i, r.Status, r.Message, want, wantMsg)
		}
	}
}
