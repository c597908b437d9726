package trigger_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	"github.com/carillonhq/carillon/internal/clock"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

type bundle struct {
	db     string                // the database: a SQLite file or a PostgreSQL URL
	edit   func(*trigger.Config) // changes the trigger's Config at each open; nil: none
	st     *store.Store
	clock  *clock.Fake
	trig   *trigger.Trigger
	group  store.Group
	mu     sync.Mutex
	queued []store.Run
}

// Enqueue and Wake make a bundle the trigger's Queue: it keeps the runs
// settling queued.
func (b *bundle) Enqueue(runs ...store.Run) {
	b.mu.Lock()
	b.queued = append(b.queued, runs...)
	b.mu.Unlock()
}
func (b *bundle) Wake() {}

// nopQueue is a trigger.Queue that drops what it is given.
type nopQueue struct{}

func (nopQueue) Enqueue(...store.Run) {}
func (nopQueue) Wake()                {}

// setup starts a trigger over a new database of be with one group, of mode
// and addrs.
func setup(t testing.TB, be dbtest.Backend, mode carillonv1.AddressMode, addrs ...string) *bundle {
	t.Helper()
	return setupWith(t, be, nil, mode, addrs...)
}

// setupWith is setup with the trigger's Config changed by edit first.
func setupWith(t testing.TB, be dbtest.Backend, edit func(*trigger.Config), mode carillonv1.AddressMode, addrs ...string) *bundle {
	t.Helper()
	b := &bundle{db: be.DB(t), clock: clock.NewFake(time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)), edit: edit}
	b.open(t)
	var err error
	b.group, err = b.st.Groups.Create(context.Background(), store.Group{AppName: "app", Title: "app", AddressMode: mode, Addresses: addrs}, b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// open opens the bundle's database and starts a trigger over it, as an
// admin process starts (LastBeat from the store), its Config changed by
// the bundle's edit.
func (b *bundle) open(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	st := dbtest.Open(t, b.db)
	last, err := st.Registry.LastBeat(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b.st = st
	cfg := trigger.Config{
		Store: st, Clock: b.clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Queue: b, LastBeat: last,
	}
	if b.edit != nil {
		b.edit(&cfg)
	}
	b.trig, err = trigger.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
}

// restart stops the bundle's admin (its trigger's work done, its store
// closed) and starts a new one over the same database, which knows only
// what the database keeps.
func (b *bundle) restart(t testing.TB) {
	t.Helper()
	b.trig.Wait()
	if err := b.st.Close(); err != nil {
		t.Fatal(err)
	}
	b.open(t)
}

// register records a heartbeat of the executor at address under the
// group's app name, now, declaring CAPABILITY_DUE_AT or not.
func (b *bundle) register(t testing.TB, address string, dueAt bool) {
	t.Helper()
	var caps store.Capabilities
	if dueAt {
		caps = store.CapabilitiesOf([]carillonv1.Capability{carillonv1.Capability_CAPABILITY_DUE_AT})
	}
	if _, err := b.st.Registry.Register(context.Background(), b.group.AppName, address, "i", caps, b.clock.Now()); err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) job(t testing.TB, edit func(*store.Job)) store.Job {
	t.Helper()
	j := store.Job{GroupID: b.group.ID, Description: "j", Handler: "h", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
	if edit != nil {
		edit(&j)
	}
	j, err := b.st.Jobs.Create(context.Background(), j, b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestDispatchFailureSaysWhy(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		// A port nobody listens on: connection refused.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := "http://" + ln.Addr().String()
		ln.Close()

		for _, tt := range []struct {
			name string
			b    *bundle
			want []string
		}{
			{"NoLiveExecutor", setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_AUTO), []string{"no live executor", "group app (AUTO)"}},
			{"ConnectionRefused", setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_MANUAL, dead), []string{"executor " + dead, "connection refused"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				j := tt.b.job(t, func(j *store.Job) { j.RetryCount = 1 })
				ids, err := tt.b.trig.Dispatcher.TriggerJob(ctx, j, trigger.Manual{})
				if err != nil {
					t.Fatal(err)
				}
				r, _ := tt.b.st.Runs.Get(ctx, ids[0])
				if r.Status != carillonv1.RunStatus_RUN_STATUS_FAILED {
					t.Fatalf("run status %s, want FAILED", r.Status)
				}
				for _, w := range tt.want {
					if !strings.Contains(r.Message, w) {
						t.Errorf("message %q does not say %q", r.Message, w)
					}
				}
				// A failed dispatch counts for retry like any failure.
				if len(tt.b.queued) != 1 || tt.b.queued[0].TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_RETRY {
					t.Errorf("queued follow-ups %v, want one retry", tt.b.queued)
				}
			})
		}
	})
}

func TestSweep(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_AUTO)
		j := b.job(t, nil)
		now := b.clock.Now()
		if _, err := b.st.Registry.Register(ctx, "app", "http://alive:1", "", 0, now); err != nil {
			t.Fatal(err)
		}
		mk := func(addr string, timeout int32) store.Run {
			runs, err := b.st.Runs.Insert(ctx, []store.Run{{JobID: j.ID, GroupID: b.group.ID, ShardTotal: 1, ScheduledAt: now,
				TriggeredAt: now, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MANUAL, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.st.Runs.RecordDispatches(ctx, followup.Policy{}, []store.Dispatch{{RunID: runs[0].ID, ExecutorAddress: addr, ShardTotal: 1, TimeoutSeconds: timeout}}); err != nil {
				t.Fatal(err)
			}
			return runs[0]
		}
		gone := mk("http://gone:1", 0)   // its executor never registered
		slow := mk("http://alive:1", 60) // alive but past its timeout
		fine := mk("http://alive:1", 0)  // alive, no timeout: left alone
		half := mk("", 0)                // the admin died mid-dispatch

		b.clock.Add(20 * time.Second) // within the grace period: nothing yet
		if err := b.trig.Rescuer.Sweep(ctx, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		for _, r := range []store.Run{gone, slow, fine, half} {
			if got, _ := b.st.Runs.Get(ctx, r.ID); got.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING {
				t.Fatalf("run %d settled as %s within the grace period", r.ID, got.Status)
			}
		}

		b.clock.Add(80 * time.Second) // 100 s after dispatch
		if _, err := b.st.Registry.Register(ctx, "app", "http://alive:1", "", 0, b.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if err := b.trig.Rescuer.Sweep(ctx, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			run  store.Run
			want carillonv1.RunStatus
		}{
			{gone, carillonv1.RunStatus_RUN_STATUS_LOST},
			{slow, carillonv1.RunStatus_RUN_STATUS_TIMED_OUT},
			{fine, carillonv1.RunStatus_RUN_STATUS_RUNNING},
			{half, carillonv1.RunStatus_RUN_STATUS_LOST},
		} {
			got, _ := b.st.Runs.Get(ctx, tt.run.ID)
			if got.Status != tt.want {
				t.Errorf("run %d: %s (%s), want %s", tt.run.ID, got.Status, got.Message, tt.want)
			}
			if got.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING && !got.AdminSettled {
				t.Errorf("run %d: settled %s by the monitor, but not marked as the admin's own judgement", tt.run.ID, got.Status)
			}
		}
		// A result the executor reports later replaces the admin's judgement,
		// and says so; a second result changes nothing.
		if err := b.trig.Completer.Settle(ctx, []store.Result{{RunID: gone.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, Message: "done", FinishedAt: b.clock.Now()}}); err != nil {
			t.Fatal(err)
		}
		got, _ := b.st.Runs.Get(ctx, gone.ID)
		if got.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED || !got.LateResult || !strings.HasPrefix(got.Message, "done (reported after the admin had settled the run LOST: lost: executor") {
			t.Errorf("late result: %s %q late=%v, want SUCCEEDED, saying it replaced LOST", got.Status, got.Message, got.LateResult)
		}
		if err := b.trig.Completer.Settle(ctx, []store.Result{{RunID: gone.ID, Status: carillonv1.RunStatus_RUN_STATUS_FAILED, FinishedAt: b.clock.Now()}}); err != nil {
			t.Fatal(err)
		}
		if again, _ := b.st.Runs.Get(ctx, gone.ID); again.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
			t.Errorf("a second result changed the run to %s", again.Status)
		}
	})
}

// TestStopAfterClaimSkips: a fire handed over ahead of its instant is
// claimed (by the scan, or by the trigger for a pending run) and sent on
// the instant, unless its job was stopped in between: then its run is
// settled SKIPPED and never reaches an executor.
func TestStopAfterClaimSkips(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		for _, byScan := range []bool{false, true} {
			t.Run(map[bool]string{false: "Pending", true: "ClaimedByScan"}[byScan], func(t *testing.T) {
				t.Parallel()
				testStopAfterClaimSkips(t, be, byScan)
			})
		}
	})
}

func testStopAfterClaimSkips(t *testing.T, be dbtest.Backend, byScan bool) {
	t.Helper()
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() // connection refused: a run sent there fails
	ln.Close()
	b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_MANUAL, dead)
	stopped, deleted, kept := b.job(t, nil), b.job(t, nil), b.job(t, nil)
	var es []schedule.Entry
	instant := b.clock.Now().Add(2 * time.Second) // on the trigger's clock: the runs wait for it
	seq := b.st.Jobs.StopSeq()
	for _, j := range []store.Job{stopped, deleted, kept} {
		r := store.Run{JobID: j.ID, GroupID: b.group.ID, ShardTotal: 1, ScheduledAt: b.clock.Now(),
			TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Status: carillonv1.RunStatus_RUN_STATUS_PENDING}
		if byScan {
			r.Status, r.TriggeredAt = carillonv1.RunStatus_RUN_STATUS_RUNNING, instant
		}
		runs, err := b.st.Runs.Insert(ctx, []store.Run{r})
		if err != nil {
			t.Fatal(err)
		}
		e := schedule.Entry{RunID: runs[0].ID, JobID: j.ID, At: instant, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE}
		if byScan {
			e = schedule.ClaimedEntry(&runs[0], seq) // as the scan keeps it
		}
		es = append(es, e)
	}
	stop := func() {
		if _, err := b.st.Jobs.Stop(ctx, stopped.ID, b.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if err := b.st.Jobs.Delete(ctx, deleted.ID); err != nil {
			t.Fatal(err)
		}
	}
	if byScan {
		stop() // after the scan's claim, before the hand-over: Entry.StopSeq tells
		b.trig.Dispatcher.Fire(es)
	} else {
		b.trig.Dispatcher.Fire(es)
		awaitPending(t, b.clock) // claimed and routed, waiting for the instant
		if r, _ := b.st.Runs.Get(ctx, es[0].RunID); r.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING {
			t.Fatalf("run %s while the trigger waits for its instant, want RUNNING: claimed ahead", r.Status)
		}
		stop()
	}
	b.clock.Set(instant) // the instant comes: what is left is sent
	b.trig.Wait()
	for i, what := range []string{"stopped", "deleted"} {
		if r, _ := b.st.Runs.Get(ctx, es[i].RunID); r.Status != carillonv1.RunStatus_RUN_STATUS_SKIPPED || r.ExecutorAddress != "" {
			t.Errorf("%s job's run: %s at %q (%s), want SKIPPED, never sent", what, r.Status, r.ExecutorAddress, r.Message)
		}
	}
	r, _ := b.st.Runs.Get(ctx, es[2].RunID)
	if r.Status != carillonv1.RunStatus_RUN_STATUS_FAILED || r.ExecutorAddress != dead {
		t.Errorf("other job's run: %s at %q (%s), want sent to %s (and FAILED: nobody listens)", r.Status, r.ExecutorAddress, r.Message, dead)
	}
	if want := instant.Truncate(time.Millisecond); !r.TriggeredAt.Equal(want) {
		t.Errorf("triggered at %v, want the instant it was sent for, %v", r.TriggeredAt, want)
	}
}

// awaitPending waits until the trigger waits on the bundle's clock: its
// fires are claimed and routed, and wait for their instant.
func awaitPending(t *testing.T, clock *clock.Fake) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !clock.AwaitPending(ctx, 1) {
		t.Fatal("the trigger did not wait on the clock within 10 s")
	}
}

// awaitTimer waits until the trigger waits for the clock to read at
// (clock.Fake.AwaitTimer), for up to 10 s.
func awaitTimer(t *testing.T, clock *clock.Fake, at time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !clock.AwaitTimer(ctx, at) {
		t.Fatalf("the trigger did not wait for %v on the clock within 10 s", at)
	}
}

// acceptor is an executor that accepts every run and reports nothing.
type acceptor struct {
	carillonv1connect.UnimplementedExecutorServiceHandler
	mu      sync.Mutex
	got     []int64
	params  map[int64]string // the param of each run received
	arrived chan struct{}    // closed and replaced at each run received
}

// param returns the param run came with, and whether it came.
func (a *acceptor) param(run int64) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.params[run]
	return p, ok
}

func (a *acceptor) Run(_ context.Context, req *carillonv1.RunRequest) (*carillonv1.RunResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got = append(a.got, req.RunId)
	if a.params == nil {
		a.params = map[int64]string{}
	}
	a.params[req.RunId] = req.Param
	if a.arrived != nil {
		close(a.arrived)
		a.arrived = nil
	}
	return &carillonv1.RunResponse{}, nil
}

// await waits until the acceptor has received n runs, and fails the test
// with the count it got if that takes over 10 s.
func (a *acceptor) await(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		a.mu.Lock()
		got := len(a.got)
		if got >= n {
			a.mu.Unlock()
			return
		}
		if a.arrived == nil {
			a.arrived = make(chan struct{})
		}
		arrived := a.arrived
		a.mu.Unlock()
		select {
		case <-arrived:
		case <-timeout:
			t.Fatalf("executor received %d runs in 10 s, want %d", got, n)
		}
	}
}

func (a *acceptor) RunBatch(ctx context.Context, req *carillonv1.RunBatchRequest) (*carillonv1.RunBatchResponse, error) {
	res := &carillonv1.RunBatchResponse{}
	for _, r := range req.Runs {
		_, _ = a.Run(ctx, r) // never fails
		res.Outcomes = append(res.Outcomes, &carillonv1.RunOutcome{})
	}
	return res, nil
}

// TestDispatchRecordedWithResult: a scheduled fire's dispatch is stored
// with its result when the result comes first, and on its own (by Wait, or
// after a second) for a run still running.
func TestDispatchRecordedWithResult(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		exec := &acceptor{}
		url := testkit.ServeExecutor(t, exec)
		b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_MANUAL, url)
		var es []schedule.Entry
		for range 2 {
			j := b.job(t, func(j *store.Job) { j.TimeoutSeconds = 7 })
			runs, err := b.st.Runs.Insert(ctx, []store.Run{{JobID: j.ID, GroupID: b.group.ID, ShardTotal: 1, ScheduledAt: b.clock.Now(),
				TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Status: carillonv1.RunStatus_RUN_STATUS_PENDING}})
			if err != nil {
				t.Fatal(err)
			}
			es = append(es, schedule.Entry{RunID: runs[0].ID, JobID: j.ID, At: b.clock.Now(), TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE})
		}
		b.trig.Dispatcher.Fire(es)
		exec.await(t, 2)
		finished := b.clock.Now()
		if err := b.trig.Completer.Settle(ctx, []store.Result{{RunID: es[0].RunID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: finished}}); err != nil {
			t.Fatal(err)
		}
		// Stored by the result's write, not by a flush (which waits a second).
		if r, _ := b.st.Runs.Get(ctx, es[0].RunID); r.ExecutorAddress != url {
			t.Errorf("settled run's executor %q, want %s, recorded with its result", r.ExecutorAddress, url)
		}
		b.trig.Wait()
		for i, want := range []carillonv1.RunStatus{carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, carillonv1.RunStatus_RUN_STATUS_RUNNING} {
			r, err := b.st.Runs.Get(ctx, es[i].RunID)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != want || r.ExecutorAddress != url || r.TimeoutSeconds != 7 || !strings.Contains(r.TriggerMessage, "chose "+url+"; a call of 2 runs") {
				t.Errorf("run %d: %s on %q, timeout %d, trigger message %q; want %s on %s, timeout 7, its dispatch recorded",
					i, r.Status, r.ExecutorAddress, r.TimeoutSeconds, r.TriggerMessage, want, url)
			}
		}
	})
}
