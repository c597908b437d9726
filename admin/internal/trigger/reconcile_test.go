package trigger_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	"github.com/carillonhq/carillon/internal/clock"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// holder is an executor on loopback that accepts every run and answers
// HeldRuns from held; without answers it serves no HeldRuns at all, like
// an SDK that predates it.
type holder struct {
	acceptor
	answers bool
	held    map[int64]carillonv1.HeldRunState
	asked   []int64 // the runs HeldRuns was asked about, under acceptor.mu
}

func (h *holder) HeldRuns(_ context.Context, req *carillonv1.HeldRunsRequest) (*carillonv1.HeldRunsResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock() // held may change between calls (under h.mu)
	h.asked = append(h.asked, req.RunIds...)
	if !h.answers {
		return h.acceptor.HeldRuns(context.Background(), req) // unimplemented
	}
	res := &carillonv1.HeldRunsResponse{InstanceId: "i"}
	for _, id := range req.RunIds {
		if s, ok := h.held[id]; ok {
			res.Runs = append(res.Runs, &carillonv1.HeldRun{RunId: id, State: s})
		}
	}
	return res, nil
}

// wasAsked says whether HeldRuns was asked about run.
func (h *holder) wasAsked(run int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Contains(h.asked, run)
}

func (h *holder) sent() []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// restarted is an admin that restarts over a store an earlier process
// left: the trigger is made after the store's runs and registrations.
type restarted struct {
	st    *store.Store
	clock *clock.Fake // moves 100 ms at each reading: loops paced by it see time pass without sleeping
	t0    time.Time   // when the earlier process stopped
}

func newRestarted(t *testing.T, be dbtest.Backend) *restarted {
	t.Helper()
	st := be.Open(t)
	t0 := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	clk.Step = 100 * time.Millisecond
	return &restarted{st: st, clock: clk, t0: t0}
}

// group creates an AUTO group whose executors registered at t0.
func (r *restarted) group(t *testing.T, app string, strategy carillonv1.MisfireStrategy, addrs ...string) store.Job {
	t.Helper()
	ctx := context.Background()
	g, err := r.st.Groups.Create(ctx, store.Group{AppName: app, Title: app}, r.t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if _, err := r.st.Registry.Register(ctx, app, a, "i", 0, r.t0); err != nil {
			t.Fatal(err)
		}
	}
	j, err := r.st.Jobs.Create(ctx, store.Job{GroupID: g.ID, Description: app, Handler: "h", MisfireStrategy: strategy,
		ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}, r.t0)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// insertRunning stores run RUNNING, one shard, triggered at its scheduled
// instant unless it says otherwise, a SCHEDULE fire unless it says
// otherwise, and returns its ID.
func insertRunning(t *testing.T, st *store.Store, run store.Run) int64 {
	t.Helper()
	run.Status, run.ShardTotal = carillonv1.RunStatus_RUN_STATUS_RUNNING, 1
	if run.TriggeredAt.IsZero() {
		run.TriggeredAt = run.ScheduledAt
	}
	if run.TriggerType == carillonv1.TriggerType_TRIGGER_TYPE_UNSPECIFIED {
		run.TriggerType = carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE
	}
	runs, err := st.Runs.Insert(context.Background(), []store.Run{run})
	if err != nil {
		t.Fatal(err)
	}
	return runs[0].ID
}

// claimed stores a run of j the earlier process claimed for instant at,
// routed to executor to ("": never routed), and did not record as sent.
func (r *restarted) claimed(t *testing.T, j store.Job, at time.Time, to string) int64 {
	t.Helper()
	id := insertRunning(t, r.st, store.Run{JobID: j.ID, GroupID: j.GroupID, ScheduledAt: at})
	if to == "" {
		return id
	}
	routed, err := r.st.Runs.Route(context.Background(), []store.Route{{RunID: id, Address: to}})
	if err != nil || !routed[id] {
		t.Fatalf("route run %d to %s: %v, %v", id, to, routed, err)
	}
	return id
}

// start makes the new admin process's trigger, started after an outage.
func (r *restarted) start(t *testing.T, outage time.Duration) *trigger.Trigger {
	t.Helper()
	ctx := context.Background()
	unsent, err := r.st.Runs.UnsentIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	beat, err := r.st.Registry.LastBeat(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.clock.Add(outage)
	trig, err := trigger.New(trigger.Config{
		Store: r.st, Clock: r.clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Queue: nopQueue{}, Unsent: unsent, LastBeat: beat,
		// The clock moves on at each reading (Step): its sends would be
		// taken for an overloaded admin's, seconds late (overdue.go).
		MisfireThreshold: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	return trig
}

// TestReconcile: runs an admin claimed and may or may not have sent
// before it was killed are each sent exactly when no executor holds them,
// recorded where one does, and never sent to an executor that cannot
// say, nor twice. A run never routed was never sent: it is sent without a
// question; a routed run is asked of its executor only, and sent again
// there only.
func TestReconcile(t *testing.T) {
	t.Parallel()
	// SQLite only: over PostgreSQL a restarted admin is a new admin, and
	// Reconcile is adoption (adopt.go), which returns only when ctx ends;
	// admin/cmd/carillon's failover tests restart admins over PostgreSQL.
	be := dbtest.SQLite
	ctx := context.Background()
	r := newRestarted(t, be)
	a := &holder{answers: true, held: map[int64]carillonv1.HeldRunState{}}
	b := &holder{answers: true, held: map[int64]carillonv1.HeldRunState{}}
	old := &holder{} // an SDK without HeldRuns
	addrA, addrB, addrOld := testkit.ServeExecutor(t, a), testkit.ServeExecutor(t, b), testkit.ServeExecutor(t, old)
	if addrB < addrA { // a is the one FIRST chooses
		addrA, addrB, a, b = addrB, addrA, b, a
	}
	live := r.group(t, "live", carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING, addrA, addrB)
	once := r.group(t, "once", carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW, addrA)
	older := r.group(t, "older", carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING, addrOld)
	gone := r.group(t, "gone", carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING)
	goneAddr := testkit.DeadURL(t)

	heldRun := r.claimed(t, live, r.t0, addrA)
	a.held[heldRun] = carillonv1.HeldRunState_HELD_RUN_STATE_ACTIVE
	cutShort := r.claimed(t, live, r.t0.Add(-time.Second), addrA)
	a.held[cutShort] = carillonv1.HeldRunState_HELD_RUN_STATE_CUT_SHORT
	unsent := r.claimed(t, live, r.t0.Add(time.Second), addrB) // FIRST would choose a: it goes to b, its route
	neverRouted := r.claimed(t, live, r.t0.Add(2*time.Second), "")
	anyRoute := r.claimed(t, live, r.t0.Add(3*time.Second), store.RouteAnyExecutor) // in flight at the upgrade
	late := r.claimed(t, live, r.t0.Add(-20*time.Second), addrA)
	lateOnce := r.claimed(t, once, r.t0.Add(-20*time.Second), addrA)
	unsure := r.claimed(t, older, r.t0, addrOld)
	lost := r.claimed(t, gone, r.t0, goneAddr)

	// The dead executor was live when the earlier process claimed the run,
	// and never beats again: once the restart grace has passed, it is no
	// longer live, and the run it may have held is lost.
	if _, err := r.st.Registry.Register(ctx, "gone", goneAddr, "i", 0, r.t0.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	trig := r.start(t, 500*time.Millisecond)
	done := make(chan error, 1)
	go func() {
		done <- trig.Rescuer.Reconcile(ctx, trigger.ReconcileConfig{Interval: time.Millisecond, UnknownWait: 10 * time.Second})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Reconcile did not finish in 20 s")
	}
	trig.Wait()

	if got, want := a.sent(), []int64{neverRouted, anyRoute, lateOnce}; !slices.Equal(sortedIDs(got), sortedIDs(want)) {
		t.Errorf("runs sent to a (first in the group) %v, want %v: each run no executor holds, once, where FIRST or its route sends it", got, want)
	}
	if got, want := b.sent(), []int64{unsent}; !slices.Equal(got, want) {
		t.Errorf("runs sent to b %v, want %v: the run routed there and not held, sent again there only", got, want)
	}
	if got := old.sent(); len(got) != 0 {
		t.Errorf("runs sent to the executor that cannot say what it holds: %v, want none", got)
	}
	if a.wasAsked(neverRouted) || b.wasAsked(neverRouted) {
		t.Errorf("run %d, never routed, was asked about: it was never sent", neverRouted)
	}
	if b.wasAsked(heldRun) || a.wasAsked(unsent) {
		t.Errorf("a routed run was asked of an executor it was not routed to")
	}
	if !a.wasAsked(anyRoute) || !b.wasAsked(anyRoute) {
		t.Errorf("run %d, of an unknown route, was not asked of every executor of its group", anyRoute)
	}
	for _, tt := range []struct {
		id       int64
		status   carillonv1.RunStatus
		executor string // "" for any
		message  string
	}{
		{heldRun, carillonv1.RunStatus_RUN_STATUS_RUNNING, addrA, "said it holds the run (ACTIVE)"},
		{cutShort, carillonv1.RunStatus_RUN_STATUS_LOST, "", "the run was cut short"},
		{unsent, carillonv1.RunStatus_RUN_STATUS_RUNNING, addrB, "the executor an earlier admin routed it to"},
		{neverRouted, carillonv1.RunStatus_RUN_STATUS_RUNNING, addrA, ""},
		{anyRoute, carillonv1.RunStatus_RUN_STATUS_RUNNING, addrA, ""},
		{late, carillonv1.RunStatus_RUN_STATUS_SKIPPED, "", "skipped by DO_NOTHING"},
		{lateOnce, carillonv1.RunStatus_RUN_STATUS_RUNNING, addrA, ""},
		{unsure, carillonv1.RunStatus_RUN_STATUS_LOST, "", "could not say so"},
		{lost, carillonv1.RunStatus_RUN_STATUS_LOST, "", "stopped heartbeating"},
	} {
		got, err := r.st.Runs.Get(ctx, tt.id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != tt.status || (tt.executor != "" && got.ExecutorAddress != tt.executor) ||
			!strings.Contains(got.Message+got.TriggerMessage, tt.message) {
			t.Errorf("run %d: %s at %q, %q / %q; want %s at %q, saying %q", tt.id, got.Status, got.ExecutorAddress,
				got.Message, got.TriggerMessage, tt.status, tt.executor, tt.message)
		}
		if got.Status == carillonv1.RunStatus_RUN_STATUS_SKIPPED && (got.MissedCount != 1 || !got.MissedUntil.Equal(got.ScheduledAt)) {
			t.Errorf("run %d: SKIPPED standing for %d missed instants until %v, want 1, its own %v", tt.id, got.MissedCount, got.MissedUntil, got.ScheduledAt)
		}
		if got.Status == carillonv1.RunStatus_RUN_STATUS_RUNNING && got.ExecutorAddress == "" {
			t.Errorf("run %d: running with no executor recorded", tt.id)
		}
		if got.Status == carillonv1.RunStatus_RUN_STATUS_LOST && !got.AdminSettled {
			t.Errorf("run %d: LOST but not marked as the admin's judgement", tt.id)
		}
	}
}

// TestReconcileLeavesThisProcessClaims: a pending run an earlier process
// made (a retry, a child job's or workflow node's run) is the new
// process's to claim and send. Reconcile, working through the earlier
// process's unsent claims at the same time, must not take it for one of
// them and send it a second time (it once did: a workflow's root node ran
// on two executors after an admin restart near its instant). The monitor
// settles it if its send never records an executor, as any claim of this
// process.
func TestReconcileLeavesThisProcessClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRestarted(t, dbtest.SQLite) // over PostgreSQL, Reconcile is adoption, by the claiming admin's ID
	a := &holder{answers: true, held: map[int64]carillonv1.HeldRunState{}}
	j := r.group(t, "live", carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING, testkit.ServeExecutor(t, a))
	earlier := r.claimed(t, j, r.t0, "") // the earlier process's claim, never routed
	runs, err := r.st.Runs.Insert(ctx, []store.Run{{JobID: j.ID, GroupID: j.GroupID, ScheduledAt: r.t0, DueAt: r.t0, ShardTotal: 1,
		Status: carillonv1.RunStatus_RUN_STATUS_PENDING, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_RETRY}})
	if err != nil {
		t.Fatal(err)
	}
	pending := runs[0].ID
	trig := r.start(t, 500*time.Millisecond)
	// This process claims the pending run; its route is not recorded yet
	// when Reconcile reads the runs with no executor.
	if claimed, err := r.st.Fires.ClaimRuns(ctx, []store.RunClaim{{RunID: pending, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_RETRY}}, r.clock.Now()); err != nil || len(claimed) != 1 {
		t.Fatalf("claim run %d: %v, %v", pending, claimed, err)
	}
	if err := trig.Rescuer.Reconcile(ctx, trigger.ReconcileConfig{Interval: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	trig.Wait()
	if got, want := a.sent(), []int64{earlier}; !slices.Equal(got, want) {
		t.Errorf("Reconcile sent %v, want %v: only the earlier process's claim, not this process's claim of a pending run it made", got, want)
	}
	r.clock.Add(time.Minute) // past two dispatch timeouts and the grace: the claim's send is stuck
	if err := trig.Rescuer.Sweep(ctx, trigger.LostGraceDefault); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.st.Runs.Get(ctx, pending); got.Status != carillonv1.RunStatus_RUN_STATUS_LOST || !strings.Contains(got.Message, "could not record where it sent") {
		t.Errorf("run %d, claimed by this process and never recorded as sent: %s (%q), want LOST by the monitor", pending, got.Status, got.Message)
	}
}

// sortedIDs returns ids sorted.
func sortedIDs(ids []int64) []int64 {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return ids
}

// TestReconcileWaitsForLiveExecutors: while an executor that may hold a
// run is live but does not answer, the run is neither sent nor settled.
func TestReconcileWaitsForLiveExecutors(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		r := newRestarted(t, be)
		other := &holder{answers: true}
		silent := testkit.DeadURL(t)
		j := r.group(t, "app", carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING, silent, testkit.ServeExecutor(t, other))
		id := r.claimed(t, j, r.t0, silent)
		trig := r.start(t, time.Second)
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- trig.Rescuer.Reconcile(ctx, trigger.ReconcileConfig{Interval: time.Millisecond}) }()
		// The silent executor stays live through the restart grace. Reconcile's
		// rounds move the clock (100 ms a reading): wait until they have moved
		// it 5 s, dozens of rounds, well within the grace.
		wait, waited := context.WithTimeout(ctx, 10*time.Second)
		defer waited()
		if !r.clock.AwaitTime(wait, r.clock.Now().Add(5*time.Second)) {
			t.Fatalf("Reconcile's rounds did not move the clock 5 s within 10 s (it reads %v)", r.clock.Now())
		}
		if got, _ := r.st.Runs.Get(ctx, id); got.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING || got.ExecutorAddress != "" {
			cancel()
			t.Fatalf("run settled or sent (%s at %q) while an executor that may hold it is live", got.Status, got.ExecutorAddress)
		}
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		trig.Wait()
		if got := other.sent(); len(got) != 0 {
			t.Errorf("run sent to another executor while the one that may hold it was silent: %v", got)
		}
	})
}

// TestExecutorRestartLosesItsRuns: when a new process registers on an
// executor's address, the runs sent there before that the new process
// does not hold are settled LOST at the next sweep; runs it holds, and
// runs at other executors, are left alone.
func TestExecutorRestartLosesItsRuns(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_AUTO)
		restartedExec := &holder{answers: true, held: map[int64]carillonv1.HeldRunState{}}
		addr, steady := testkit.ServeExecutor(t, restartedExec), "http://steady:1"
		j := b.job(t, nil)
		now := b.clock.Now()
		run := func(at string) int64 {
			return insertRunning(t, b.st, store.Run{JobID: j.ID, GroupID: b.group.ID, ScheduledAt: now,
				TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, ExecutorAddress: at})
		}
		dropped, kept, elsewhere := run(addr), run(addr), run(steady)
		restartedExec.held[kept] = carillonv1.HeldRunState_HELD_RUN_STATE_ENDED
		for _, a := range []string{addr, steady} {
			if _, err := b.st.Registry.Register(ctx, "app", a, "first", 0, now); err != nil {
				t.Fatal(err)
			}
		}
		b.clock.Add(time.Second)
		b.trig.Registered(steady, "first", "first") // a heartbeat
		b.trig.Registered(addr, "second", "first")  // a new process
		if err := b.trig.Rescuer.Sweep(ctx, trigger.LostGraceDefault); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[int64]carillonv1.RunStatus{
			dropped: carillonv1.RunStatus_RUN_STATUS_LOST, kept: carillonv1.RunStatus_RUN_STATUS_RUNNING, elsewhere: carillonv1.RunStatus_RUN_STATUS_RUNNING,
		} {
			got, _ := b.st.Runs.Get(ctx, id)
			if got.Status != want {
				t.Errorf("run %d: %s (%s), want %s", id, got.Status, got.Message, want)
			}
			if want == carillonv1.RunStatus_RUN_STATUS_LOST && !strings.Contains(got.Message, "restarted") {
				t.Errorf("run %d: message %q does not say the executor restarted", id, got.Message)
			}
		}
	})
}

// TestOutageKeepsExecutorsLive: after an admin outage longer than the
// executor TTL, executors that were live when it stopped are not lost at
// the restart; one that has not beaten a heartbeat period after it is.
func TestOutageKeepsExecutorsLive(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		r := newRestarted(t, be)
		j := r.group(t, "app", carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING, "http://a:1", "http://b:1")
		n := 0
		runAt := func(addr string, timeout int32) int64 {
			n++
			return insertRunning(t, r.st, store.Run{JobID: j.ID, GroupID: j.GroupID, ScheduledAt: r.t0.Add(time.Duration(n) * time.Second),
				TriggeredAt: r.t0.Add(-time.Minute), ExecutorAddress: addr, TimeoutSeconds: timeout})
		}
		// atSlow's timeout ran out during the outage, when its result could
		// not have been reported.
		atA, atB, atSlow := runAt("http://a:1", 0), runAt("http://b:1", 0), runAt("http://a:1", 10)
		trig := r.start(t, 2*time.Minute) // longer than the 90 s TTL
		status := func(id int64) carillonv1.RunStatus { got, _ := r.st.Runs.Get(ctx, id); return got.Status }
		if err := trig.Rescuer.Sweep(ctx, trigger.LostGraceDefault); err != nil {
			t.Fatal(err)
		}
		if status(atA) != carillonv1.RunStatus_RUN_STATUS_RUNNING || status(atB) != carillonv1.RunStatus_RUN_STATUS_RUNNING ||
			status(atSlow) != carillonv1.RunStatus_RUN_STATUS_RUNNING {
			t.Fatalf("at the restart: runs %s, %s and %s, want all RUNNING: the outage is the admin's, not the executors'",
				status(atA), status(atB), status(atSlow))
		}
		r.clock.Add(20 * time.Second)
		if _, err := r.st.Registry.Register(ctx, "app", "http://a:1", "i", 0, r.clock.Now()); err != nil { // a beats after the restart; b never does
			t.Fatal(err)
		}
		r.clock.Add(30 * time.Second) // past the restart grace
		if err := trig.Rescuer.Sweep(ctx, trigger.LostGraceDefault); err != nil {
			t.Fatal(err)
		}
		if status(atA) != carillonv1.RunStatus_RUN_STATUS_RUNNING || status(atB) != carillonv1.RunStatus_RUN_STATUS_LOST ||
			status(atSlow) != carillonv1.RunStatus_RUN_STATUS_TIMED_OUT {
			t.Errorf("a heartbeat period after the restart: runs %s, %s and %s, want RUNNING (beat since), LOST (silent), TIMED_OUT (had the grace to report)",
				status(atA), status(atB), status(atSlow))
		}
	})
}
