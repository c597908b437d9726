package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/client"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// TestClaimedAheadIsPending: a run the scan claimed for a later instant and
// not recorded as sent shows PENDING, due at its instant, and is listed
// with the PENDING runs, not the RUNNING ones; from its instant on it is
// RUNNING (sent, or being sent); a run recorded as sent is RUNNING at once.
func TestClaimedAheadIsPending(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "")
		now := b.clock.Now()
		instant := now.Add(2 * time.Second)
		newRun := runningRuns(t, b.store, now, "http://sent:1")
		sent := newRun()
		claimed, err := b.store.Runs.Insert(ctx, []store.Run{{JobID: sent.JobID, GroupID: sent.GroupID, ShardTotal: 1,
			TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, ScheduledAt: instant, TriggeredAt: instant,
			Status: carillonv1.RunStatus_RUN_STATUS_RUNNING}})
		if err != nil {
			t.Fatal(err)
		}
		id := claimed[0].ID
		runs := carillonv1connect.NewRunServiceClient(http.DefaultClient, b.url, client.WithToken(b.admin))
		listed := func(st carillonv1.RunStatus) map[int64]bool {
			t.Helper()
			res, err := runs.ListRuns(ctx, &carillonv1.ListRunsRequest{Status: st, PageSize: 10})
			if err != nil {
				t.Fatal(err)
			}
			ids := map[int64]bool{}
			for _, r := range res.Runs {
				ids[r.Id] = true
			}
			return ids
		}

		got, err := runs.GetRun(ctx, &carillonv1.GetRunRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		if r := got.Run; r.Status != carillonv1.RunStatus_RUN_STATUS_PENDING || !r.DueAt.AsTime().Equal(instant) || r.TriggeredAt != nil {
			t.Errorf("a run claimed for a later instant: %s due %v, triggered %v; want PENDING due %v, not triggered", r.Status, r.DueAt.AsTime(), r.TriggeredAt, instant)
		}
		if p, r := listed(carillonv1.RunStatus_RUN_STATUS_PENDING), listed(carillonv1.RunStatus_RUN_STATUS_RUNNING); !p[id] || r[id] || !r[sent.ID] || p[sent.ID] {
			t.Errorf("listed PENDING %v and RUNNING %v; want run %d PENDING and run %d (sent) RUNNING", p, r, id, sent.ID)
		}

		b.clock.Add(3 * time.Second) // its instant passed: it is being sent, or was
		got, err = runs.GetRun(ctx, &carillonv1.GetRunRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		if got.Run.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING {
			t.Errorf("after its instant: %s, want RUNNING", got.Run.Status)
		}
		if r := listed(carillonv1.RunStatus_RUN_STATUS_RUNNING); !r[id] {
			t.Errorf("after its instant, run %d is not listed RUNNING: %v", id, r)
		}
	})
}
