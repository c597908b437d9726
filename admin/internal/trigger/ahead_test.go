package trigger_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	"github.com/carillonhq/carillon/internal/clock"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// dueExecutor accepts every run, noting its request and the trigger's
// clock when it came, and answers kills: a before_start kill of a run it
// was told has started (started) is refused, as the SDK does.
type dueExecutor struct {
	carillonv1connect.UnimplementedExecutorServiceHandler
	clock *clock.Fake

	mu      sync.Mutex
	reqs    map[int64]*carillonv1.RunRequest
	all     map[int64][]*carillonv1.RunRequest // every request of each run, in order
	came    map[int64]time.Time
	kills   []*carillonv1.KillRequest
	started map[int64]bool
	signal  chan struct{} // closed and replaced at each run or kill
}

// newDueExecutor serves a dueExecutor on loopback; set its clock before
// the first run comes.
func newDueExecutor(t *testing.T) (*dueExecutor, string) {
	t.Helper()
	e := &dueExecutor{reqs: map[int64]*carillonv1.RunRequest{}, all: map[int64][]*carillonv1.RunRequest{}, came: map[int64]time.Time{},
		started: map[int64]bool{}, signal: make(chan struct{})}
	return e, testkit.ServeExecutor(t, e)
}

func (e *dueExecutor) notify() {
	close(e.signal)
	e.signal = make(chan struct{})
}

func (e *dueExecutor) RunBatch(ctx context.Context, req *carillonv1.RunBatchRequest) (*carillonv1.RunBatchResponse, error) {
	res := &carillonv1.RunBatchResponse{}
	for _, r := range req.Runs {
		_, _ = e.Run(ctx, r)
		res.Outcomes = append(res.Outcomes, &carillonv1.RunOutcome{RunId: r.RunId})
	}
	return res, nil
}

func (e *dueExecutor) Run(_ context.Context, req *carillonv1.RunRequest) (*carillonv1.RunResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reqs[req.RunId], e.came[req.RunId] = req, e.clock.Now()
	e.all[req.RunId] = append(e.all[req.RunId], req)
	e.notify()
	return &carillonv1.RunResponse{}, nil
}

func (e *dueExecutor) Kill(_ context.Context, req *carillonv1.KillRequest) (*carillonv1.KillResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.kills = append(e.kills, req)
	e.notify()
	return &carillonv1.KillResponse{Cancelled: req.BeforeStart && !e.started[req.RunId]}, nil
}

// setupDue sets up a group whose one executor, a dueExecutor on the
// bundle's clock, takes due_at.
func setupDue(t *testing.T, be dbtest.Backend) (*bundle, *dueExecutor, string) {
	t.Helper()
	ex, url := newDueExecutor(t)
	b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_MANUAL, url)
	ex.clock = b.clock
	b.register(t, url, true)
	return b, ex, url
}

// await waits until cond holds of what the executor received, or fails the
// test after 10 s.
func (e *dueExecutor) await(t *testing.T, what string, cond func(e *dueExecutor) bool) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		e.mu.Lock()
		ok, signal := cond(e), e.signal
		e.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-signal:
		case <-timeout:
			t.Fatalf("the executor did not get %s in 10 s", what)
		}
	}
}

// claimedFire stores a run of job claimed by the scan for instant and
// returns its entry.
func (b *bundle) claimedFire(t *testing.T, job store.Job, instant time.Time) schedule.Entry {
	t.Helper()
	runs, err := b.st.Runs.Insert(context.Background(), []store.Run{{JobID: job.ID, GroupID: b.group.ID, ShardTotal: 1, ScheduledAt: instant,
		TriggeredAt: instant, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING}})
	if err != nil {
		t.Fatal(err)
	}
	return schedule.ClaimedEntry(&runs[0], b.st.Jobs.StopSeq())
}

// TestSendAhead: a fire's run for an executor that takes due_at is sent
// SendAhead before its instant, with due_at the instant, and its record
// keeps the instant as triggered_at; the run of the same fire for an
// executor whose latest heartbeat did not say so (though an earlier one
// did) is sent on the instant, without due_at.
func TestSendAhead(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		newer, newURL := newDueExecutor(t)
		older, oldURL := newDueExecutor(t)
		b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_MANUAL, newURL, oldURL)
		newer.clock, older.clock = b.clock, b.clock
		b.register(t, newURL, true)
		b.register(t, oldURL, true)
		b.register(t, oldURL, false) // an older SDK at the same address: it takes the capability back
		job := b.job(t, func(j *store.Job) { j.RouteStrategy = carillonv1.RouteStrategy_ROUTE_STRATEGY_SHARDING_BROADCAST })
		instant := b.clock.Now().Add(time.Second)
		claimed := b.claimedFire(t, job, instant)
		b.trig.Dispatcher.Fire([]schedule.Entry{claimed})

		awaitPending(t, b.clock) // routed; waits to send ahead
		sendAt := instant.Add(-trigger.SendAheadDefault)
		b.clock.Set(sendAt)
		newer.await(t, "its run ahead of the instant", func(e *dueExecutor) bool { return len(e.reqs) == 1 })
		var aheadID int64
		newer.mu.Lock()
		for id, req := range newer.reqs {
			aheadID = id
			if !req.DueAt.AsTime().Equal(instant) || !newer.came[id].Equal(sendAt) {
				t.Errorf("run sent at %v with due_at %v, want at %v with due_at %v", newer.came[id], req.DueAt.AsTime(), sendAt, instant)
			}
			// The admin's id among those sharing a PostgreSQL database,
			// for the executor to report the result to it first.
			if want := b.st.AdminID(); req.AdminId != want || (be.Name == dbtest.Postgres.Name) == (want == "") {
				t.Errorf("run sent with admin_id %q, want %q (this admin's id over PostgreSQL, none over SQLite)", req.AdminId, want)
			}
		}
		newer.mu.Unlock()
		older.mu.Lock()
		if len(older.reqs) != 0 {
			t.Errorf("the executor without CAPABILITY_DUE_AT got %d runs before the instant, want 0", len(older.reqs))
		}
		older.mu.Unlock()

		awaitTimer(t, b.clock, instant)
		b.clock.Set(instant)
		older.await(t, "its run on the instant", func(e *dueExecutor) bool { return len(e.reqs) == 1 })
		older.mu.Lock()
		var shardID int64
		for id, req := range older.reqs {
			shardID = id
			if req.DueAt != nil || !older.came[id].Equal(instant) {
				t.Errorf("older executor: run sent at %v with due_at %v, want on the instant %v without due_at", older.came[id], req.DueAt, instant)
			}
		}
		older.mu.Unlock()
		b.trig.Wait()
		// The second shard's run is made from the fire the scan's entry
		// kept (no store.Run: schedule.Plain), and its job.
		if shardID == claimed.RunID {
			shardID = aheadID
		}
		shard, err := b.st.Runs.Get(ctx, shardID)
		if err != nil {
			t.Fatal(err)
		}
		if shard.JobID != job.ID || shard.GroupID != job.GroupID || shard.Handler != job.Handler || shard.ShardIndex != 1 || shard.ShardTotal != 2 ||
			!shard.ScheduledAt.Equal(instant) || shard.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE {
			t.Errorf("second shard's run: job %d group %d handler %q shard %d of %d scheduled %v %s; want job %d group %d handler %q shard 1 of 2 scheduled %v SCHEDULE",
				shard.JobID, shard.GroupID, shard.Handler, shard.ShardIndex, shard.ShardTotal, shard.ScheduledAt, shard.TriggerType,
				job.ID, job.GroupID, job.Handler, instant)
		}
		r, err := b.st.Runs.Get(ctx, aheadID)
		if err != nil {
			t.Fatal(err)
		}
		if !r.TriggeredAt.Equal(instant) || r.ExecutorAddress != newURL || !strings.Contains(r.TriggerMessage, "ahead (due_at)") {
			t.Errorf("run sent ahead recorded triggered at %v on %q (%q), want the instant %v on %s, saying it was sent ahead",
				r.TriggeredAt, r.ExecutorAddress, r.TriggerMessage, instant, newURL)
		}
	})
}

// TestSendAheadAfterRestart: an admin that starts over the database of
// an admin before it sends ahead to the executors whose latest heartbeat,
// to that admin, declared CAPABILITY_DUE_AT, before any heartbeat of its
// own (they come every 30 s): the store keeps the capability. An
// executor that did not declare it still gets its run on the instant.
func TestSendAheadAfterRestart(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		newer, newURL := newDueExecutor(t)
		older, oldURL := newDueExecutor(t)
		b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_AUTO)
		newer.clock, older.clock = b.clock, b.clock
		b.register(t, newURL, true)
		b.register(t, oldURL, false)
		job := b.job(t, func(j *store.Job) { j.RouteStrategy = carillonv1.RouteStrategy_ROUTE_STRATEGY_SHARDING_BROADCAST })
		b.clock.Add(5 * time.Second)
		b.restart(t) // no heartbeat after it

		instant := b.clock.Now().Add(time.Second)
		b.trig.Dispatcher.Fire([]schedule.Entry{b.claimedFire(t, job, instant)})
		awaitPending(t, b.clock)
		sendAt := instant.Add(-trigger.SendAheadDefault)
		b.clock.Set(sendAt)
		newer.await(t, "its run ahead of the instant", func(e *dueExecutor) bool { return len(e.reqs) == 1 })
		newer.mu.Lock()
		for id, req := range newer.reqs {
			if req.DueAt == nil || !req.DueAt.AsTime().Equal(instant) || !newer.came[id].Equal(sendAt) {
				t.Errorf("run sent at %v with due_at %v, want at %v with due_at %v", newer.came[id], req.DueAt, sendAt, instant)
			}
		}
		newer.mu.Unlock()
		awaitTimer(t, b.clock, instant)
		b.clock.Set(instant)
		older.await(t, "its run on the instant", func(e *dueExecutor) bool { return len(e.reqs) == 1 })
		older.mu.Lock()
		for id, req := range older.reqs {
			if req.DueAt != nil || !older.came[id].Equal(instant) {
				t.Errorf("executor without CAPABILITY_DUE_AT: run sent at %v with due_at %v, want on the instant %v without due_at", older.came[id], req.DueAt, instant)
			}
		}
		older.mu.Unlock()
		b.trig.Wait()
	})
}

// TestStopCancelsRunSentAhead: a job stopped or deleted after its run was
// sent ahead and before the instant has the run cancelled on its executor
// (a before_start kill) and settled SKIPPED with the executor recorded;
// a run the executor says has started goes on; other jobs' runs are left
// alone. Kill (KillRun) reaches a run sent ahead, whose dispatch is not
// recorded yet.
func TestStopCancelsRunSentAhead(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b, ex, url := setupDue(t, be)
		stopped, deleted, started, kept, killed := b.job(t, nil), b.job(t, nil), b.job(t, nil), b.job(t, nil), b.job(t, nil)
		instant := b.clock.Now().Add(time.Second)
		var es []schedule.Entry
		for _, j := range []store.Job{stopped, deleted, started, kept, killed} {
			es = append(es, b.claimedFire(t, j, instant))
		}
		b.trig.Dispatcher.Fire(es)
		awaitPending(t, b.clock)
		b.clock.Set(instant.Add(-trigger.SendAheadDefault))
		ex.await(t, "five runs ahead", func(e *dueExecutor) bool { return len(e.reqs) == 5 })
		// The trigger waits for the instant (its second timer: the first holds
		// the dispatch records), so the stops below wake it.
		wait, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if !b.clock.AwaitPending(wait, 2) {
			t.Fatal("the trigger did not wait for the instant within 10 s")
		}

		killedRun, err := b.st.Runs.Get(ctx, es[4].RunID)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.trig.Kill(ctx, killedRun); err != nil {
			t.Fatal(err)
		}
		ex.mu.Lock()
		ex.started[es[2].RunID] = true // its executor's clock is ahead: it started already
		ex.mu.Unlock()
		if _, err := b.st.Jobs.Stop(ctx, stopped.ID, b.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if err := b.st.Jobs.Delete(ctx, deleted.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.Jobs.Stop(ctx, started.ID, b.clock.Now()); err != nil {
			t.Fatal(err)
		}
		ex.await(t, "the kills", func(e *dueExecutor) bool { return len(e.kills) == 4 })
		awaitTimer(t, b.clock, instant)
		b.clock.Set(instant)
		b.trig.Wait()

		ex.mu.Lock()
		for _, k := range ex.kills {
			if k.RunId == es[4].RunID {
				if k.BeforeStart {
					t.Errorf("KillRun's kill of run %d is before_start, want a plain kill", k.RunId)
				}
				continue
			}
			if !k.BeforeStart || k.Reason == "" {
				t.Errorf("kill of run %d: before_start %v, reason %q; want a before_start kill saying why", k.RunId, k.BeforeStart, k.Reason)
			}
		}
		ex.mu.Unlock()
		for i, want := range []carillonv1.RunStatus{carillonv1.RunStatus_RUN_STATUS_SKIPPED, carillonv1.RunStatus_RUN_STATUS_SKIPPED,
			carillonv1.RunStatus_RUN_STATUS_RUNNING, carillonv1.RunStatus_RUN_STATUS_RUNNING} {
			r, err := b.st.Runs.Get(ctx, es[i].RunID)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != want || r.ExecutorAddress != url {
				t.Errorf("run #%d: %s on %q (%s), want %s on %s", i, r.Status, r.ExecutorAddress, r.Message, want, url)
			}
		}
	})
}

// TestUpdateResendsRunSentAhead: a job updated (its param changed) after
// its run was sent ahead and before the instant has the run dropped on its
// executor (a before_start kill with replace, so that no result comes) and
// sent again, on the instant, to the same executor with the same run ID,
// without due_at and with the new param; the run is not settled, and
// another job's run sent ahead is left alone, as is the run of a job
// updated in nothing its executor receives (its description). A job
// updated, then stopped before the instant, has its run dropped and not
// sent again: SKIPPED.
func TestUpdateResendsRunSentAhead(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b, ex, url := setupDue(t, be)
		updated := b.job(t, func(j *store.Job) { j.Param = "old" })
		kept := b.job(t, func(j *store.Job) { j.Param = "kept" })
		thenStopped := b.job(t, nil)
		retitled := b.job(t, nil)
		instant := b.clock.Now().Add(time.Second)
		es := []schedule.Entry{b.claimedFire(t, updated, instant), b.claimedFire(t, kept, instant), b.claimedFire(t, thenStopped, instant),
			b.claimedFire(t, retitled, instant)}
		b.trig.Dispatcher.Fire(es)
		awaitPending(t, b.clock)
		b.clock.Set(instant.Add(-trigger.SendAheadDefault))
		ex.await(t, "four runs ahead", func(e *dueExecutor) bool { return len(e.reqs) == 4 })
		wait, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if !b.clock.AwaitPending(wait, 2) {
			t.Fatal("the trigger did not wait for the instant within 10 s")
		}

		r := retitled
		r.Description = "renamed"
		if _, err := b.st.Jobs.Update(ctx, r, false, b.clock.Now()); err != nil {
			t.Fatal(err)
		}
		j := updated
		j.Param = "new"
		if _, err := b.st.Jobs.Update(ctx, j, false, b.clock.Now()); err != nil {
			t.Fatal(err)
		}
		s := thenStopped
		s.Handler = "h2"
		if _, err := b.st.Jobs.Update(ctx, s, false, b.clock.Now()); err != nil {
			t.Fatal(err)
		}
		ex.await(t, "the replace kills", func(e *dueExecutor) bool { return len(e.kills) == 2 })
		if _, err := b.st.Jobs.Stop(ctx, thenStopped.ID, b.clock.Now()); err != nil {
			t.Fatal(err)
		}
		ex.mu.Lock()
		for _, k := range ex.kills {
			if (k.RunId != es[0].RunID && k.RunId != es[2].RunID) || !k.BeforeStart || !k.Replace || k.Reason == "" {
				t.Errorf("kill %v, want a before_start replace kill of run %d or %d saying why", k, es[0].RunID, es[2].RunID)
			}
		}
		if n := len(ex.all[es[0].RunID]); n != 1 {
			t.Errorf("run sent %d times before the instant, want once", n)
		}
		ex.mu.Unlock()
		awaitTimer(t, b.clock, instant)
		b.clock.Set(instant)
		ex.await(t, "the run sent again", func(e *dueExecutor) bool { return len(e.all[es[0].RunID]) == 2 })
		b.trig.Wait()

		ex.mu.Lock()
		if got := ex.all[es[0].RunID]; len(got) != 2 {
			t.Errorf("the updated job's run was sent %d times, want twice (ahead, then again on the instant)", len(got))
		} else if again := got[1]; again.Param != "new" || again.DueAt != nil || !ex.came[es[0].RunID].Equal(instant) {
			t.Errorf("run sent again with param %q, due_at %v, at %v; want param %q, no due_at, on the instant %v",
				again.Param, again.DueAt, ex.came[es[0].RunID], "new", instant)
		}
		if got := ex.all[es[1].RunID]; len(got) != 1 || got[0].DueAt == nil {
			t.Errorf("the other job's run was sent %d times, want once, ahead", len(got))
		}
		if len(ex.kills) != 2 {
			t.Errorf("%d kills, want 2", len(ex.kills))
		}
		if got := ex.all[es[2].RunID]; len(got) != 1 {
			t.Errorf("the run of the job updated then stopped was sent %d times, want once (ahead)", len(got))
		}
		if got := ex.all[es[3].RunID]; len(got) != 1 || got[0].DueAt == nil {
			t.Errorf("the run of the job whose description alone was updated was sent %d times, want once, ahead", len(got))
		}
		ex.mu.Unlock()
		if r, err := b.st.Runs.Get(ctx, es[2].RunID); err != nil {
			t.Fatal(err)
		} else if r.Status != carillonv1.RunStatus_RUN_STATUS_SKIPPED {
			t.Errorf("the run of the job updated then stopped: %s (%s), want SKIPPED", r.Status, r.Message)
		}
		for i, e := range []schedule.Entry{es[0], es[1], es[3]} {
			r, err := b.st.Runs.Get(ctx, e.RunID)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING || r.ExecutorAddress != url {
				t.Errorf("run #%d: %s on %q (%s), want RUNNING on %s", i, r.Status, r.ExecutorAddress, r.Message, url)
			}
			if i == 0 && (r.Param != "new" || !strings.Contains(r.TriggerMessage, "sent again on the instant")) {
				t.Errorf("the run sent again is recorded with param %q (%q), want %q, saying it was sent again", r.Param, r.TriggerMessage, "new")
			}
		}
	})
}

// TestKillRoutedRun: Kill reaches a run whose dispatch is not recorded
// yet, neither stored nor kept for its result (its call under way, its
// handler maybe started): it goes to the executor the run's route names.
// Before, such a kill was dropped, and the handler of a workflow node
// covered by a later workflow run (COVER_EARLY) ran on, holding its
// executor's SERIAL queue.
func TestKillRoutedRun(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b, ex, url := setupDue(t, be)
		e := b.claimedFire(t, b.job(t, nil), b.clock.Now().Add(time.Second))
		if routed, err := b.st.Runs.Route(ctx, []store.Route{{RunID: e.RunID, Address: url}}); err != nil || len(routed) != 1 {
			t.Fatalf("route: %v, %v", routed, err)
		}
		run, err := b.st.Runs.Get(ctx, e.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if run.ExecutorAddress != "" {
			t.Fatalf("run %d has its dispatch recorded (%s): the test needs one that has not", run.ID, run.ExecutorAddress)
		}
		if err := b.trig.Kill(ctx, run); err != nil {
			t.Fatal(err)
		}
		ex.mu.Lock()
		defer ex.mu.Unlock()
		if len(ex.kills) != 1 || ex.kills[0].RunId != e.RunID {
			t.Fatalf("kills %v, want one of run %d", ex.kills, e.RunID)
		}
	})
}
