package trigger_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the admins table, changed directly

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/service"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	"github.com/carillonhq/carillon/internal/clock"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// queued is a trigger.Queue that keeps the IDs of the runs it is given.
type queued struct {
	mu  sync.Mutex
	ids []int64
}

func (q *queued) Enqueue(runs ...store.Run) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, r := range runs {
		q.ids = append(q.ids, r.ID)
	}
}

func (q *queued) Wake() {}

func (q *queued) has(id int64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Contains(q.ids, id)
}

// TestAdoptionQueuesPendingRuns: over PostgreSQL, the pending runs an
// admin made (a retry, a workflow node's run) wait in its memory; when it
// dies, the admin that adopts it queues them, so they do not wait for an
// admin's restart.
func TestAdoptionQueuesPendingRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.URL(t)
	open := func() *store.Store {
		st, err := store.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	dead, live := open(), open()
	// Both renew their leases as admins do (a lease lasts a second, and a
	// loaded machine takes longer than that to set the test up), until the
	// dead one dies.
	renew := func(st *store.Store) func() {
		g := service.NewGroup(st.LeaseLoop())
		if err := g.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(g.Stop)
		return g.Stop
	}
	die := renew(dead)
	renew(live)
	now := time.Now()
	g, err := dead.Groups.Create(ctx, store.Group{AppName: "app", Title: "app"}, now)
	if err != nil {
		t.Fatal(err)
	}
	j, err := dead.Jobs.Create(ctx, store.Job{GroupID: g.ID, Description: "j", Handler: "h", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}, now)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := dead.Runs.Insert(ctx, []store.Run{{JobID: j.ID, GroupID: g.ID, ScheduledAt: now, DueAt: now.Add(time.Minute), ShardTotal: 1,
		Status: carillonv1.RunStatus_RUN_STATUS_PENDING, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_RETRY}})
	if err != nil {
		t.Fatal(err)
	}
	retry := runs[0].ID
	// The admin that made it dies: its lease runs out.
	die()
	d, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.ExecContext(ctx, `UPDATE admins SET lease_until = 0 WHERE id = $1`, dead.AdminID()); err != nil {
		t.Fatal(err)
	}
	q := &queued{}
	clk := clock.NewFake(now)
	clk.Step = 100 * time.Millisecond
	trig, err := trigger.New(trigger.Config{Store: live, Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- trig.Rescuer.Reconcile(ctx, trigger.ReconcileConfig{}) }()
	for !q.has(retry) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
	trig.Wait()
	if !q.has(retry) {
		t.Errorf("the dead admin's pending run %d was not queued by the admin that adopted it within 20 s", retry)
	}
}
