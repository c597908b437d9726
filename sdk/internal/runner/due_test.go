package runner

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk/internal/report"
)

// startRecorder is a handler that records when each run started.
type startRecorder struct {
	mu      sync.Mutex
	started map[int64]time.Time
	hold    time.Duration // how long each run takes
}

func (s *startRecorder) ServeJob(ctx context.Context, job *Job) error {
	s.mu.Lock()
	if s.started == nil {
		s.started = map[int64]time.Time{}
	}
	s.started[job.RunID] = time.Now()
	s.mu.Unlock()
	if s.hold <= 0 {
		// No timer: go1.26.8's race runtime crashed (SIGSEGV in
		// timer.maybeRunChan) on a select over an expired time.After in a
		// synctest bubble, about one run of the package in ten.
		return nil
	}
	select {
	case <-time.After(s.hold):
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (s *startRecorder) at(id int64) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.started[id]
	return at, ok
}

// acceptDue accepts run id of job, due at due.
func (h *harness) acceptDue(id, job int64, block carillonv1.BlockStrategy, due time.Time, handler Handler) error {
	return h.d.Accept(&Run{ID: id, JobID: job, Name: "test", Handler: handler, Block: block, ShardTotal: 1, DueAt: due, ScheduledAt: due})
}

// TestDueAtStartsOnItsInstant: runs accepted ahead of their due_at are held
// (HeldRuns says ACTIVE, a repeat is refused), start exactly on their
// instant by the executor's clock, all of one instant together, and a run
// whose due_at has passed starts at once.
func TestDueAtStartsOnItsInstant(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		rec := &startRecorder{}
		start := time.Now()
		due := start.Add(300 * time.Millisecond)
		later := start.Add(time.Second)
		for id := int64(1); id <= 50; id++ {
			if err := h.acceptDue(id, id, serial, due, rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.acceptDue(51, 51, serial, later, rec); err != nil {
			t.Fatal(err)
		}
		if err := h.acceptDue(52, 52, serial, start.Add(-time.Second), rec); err != nil { // due already
			t.Fatal(err)
		}
		if err := h.acceptDue(1, 1, serial, due, rec); err == nil {
			t.Error("a waiting run sent again was accepted, want ErrDuplicateRun")
		}
		synctest.Wait()
		if _, ok := rec.at(1); ok {
			t.Fatal("run 1 started before its due_at")
		}
		if at, ok := rec.at(52); !ok || !at.Equal(start) {
			t.Errorf("run 52, due in the past, started at %v (%v), want at once", at.Sub(start), ok)
		}
		for i, s := range h.d.Held("", []int64{1, 51, 99}) {
			want := []carillonv1.HeldRunState{carillonv1.HeldRunState_HELD_RUN_STATE_ACTIVE, carillonv1.HeldRunState_HELD_RUN_STATE_ACTIVE, carillonv1.HeldRunState_HELD_RUN_STATE_UNSPECIFIED}[i]
			if s != want {
				t.Errorf("held #%d: %v, want %v", i, s, want)
			}
		}
		time.Sleep(time.Until(due))
		synctest.Wait()
		for id := int64(1); id <= 50; id++ {
			if at, ok := rec.at(id); !ok || !at.Equal(due) {
				t.Errorf("run %d started at %v (%v), want on its due_at, %v", id, at.Sub(start), ok, due.Sub(start))
			}
		}
		if _, ok := rec.at(51); ok {
			t.Error("run 51 started on another run's instant")
		}
		time.Sleep(time.Until(later))
		synctest.Wait()
		if at, ok := rec.at(51); !ok || !at.Equal(later) {
			t.Errorf("run 51 started at %v (%v), want %v", at.Sub(start), ok, later.Sub(start))
		}
		if !strings.Contains(h.log(t, 1), "due at ") {
			t.Errorf("run 1's log does not say when it was due:\n%s", h.log(t, 1))
		}
		wantResult(t, h.result(t, 1), succeeded, "")
	})
}

// TestDueAtKilledBeforeInstant: a waiting run killed alone, or with its job,
// or cancelled before its start, ends without its handler having run; a
// cancel after the start leaves the run alone.
func TestDueAtKilledBeforeInstant(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		rec := &startRecorder{hold: time.Second}
		due := time.Now().Add(500 * time.Millisecond)
		for id := int64(1); id <= 4; id++ {
			if err := h.acceptDue(id, id, serial, due, rec); err != nil {
				t.Fatal(err)
			}
		}
		h.d.KillRun(report.Key{DB: "", ID: 1}, 0)
		h.d.Kill(2)
		if !h.d.CancelBeforeStart(report.Key{DB: "", ID: 3}, 3, "the job was stopped before this fire's instant", false) {
			t.Error("cancelBeforeStart of a waiting run: false, want true")
		}
		if h.d.CancelBeforeStart(report.Key{DB: "", ID: 99}, 0, "", false) {
			t.Error("cancelBeforeStart of a run not held: true, want false")
		}
		time.Sleep(time.Until(due))
		synctest.Wait()
		if h.d.CancelBeforeStart(report.Key{DB: "", ID: 4}, 4, "too late", false) {
			t.Error("cancelBeforeStart of a started run: true, want false")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		for _, id := range []int64{1, 2, 3} {
			if _, ok := rec.at(id); ok {
				t.Errorf("run %d's handler ran, want it dropped before its instant", id)
			}
		}
		wantResult(t, h.result(t, 1), killed, "sdk: run killed by the admin before it started")
		wantResult(t, h.result(t, 2), killed, "sdk: run killed by the admin before it started")
		wantResult(t, h.result(t, 3), carillonv1.RunStatus_RUN_STATUS_SKIPPED, "the job was stopped before this fire's instant")
		wantResult(t, h.result(t, 4), succeeded, "")
		if h.d.Held("", []int64{3})[0] != carillonv1.HeldRunState_HELD_RUN_STATE_ENDED {
			t.Error("a cancelled run is not held as ENDED")
		}
	})
}

// TestDueAtBlockStrategyAtStart: a run's block strategy applies when it
// starts, not when it is accepted: DISCARD_LATER is accepted while its job
// is busy and ends FAILED only if the job is still busy on its instant;
// COVER_EARLY kills what runs on its instant.
func TestDueAtBlockStrategyAtStart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		start := time.Now()
		// Job 1 runs for 200 ms, job 2 for 2 s; each has a DISCARD_LATER
		// run due at 1 s. Job 3 runs for 2 s and has a COVER_EARLY run due at 1 s.
		if err := h.accept(1, 1, serial, 0, sleeper(200*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if err := h.accept(2, 2, serial, 0, sleeper(2*time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := h.accept(3, 3, serial, 0, sleeper(2*time.Second)); err != nil {
			t.Fatal(err)
		}
		due := start.Add(time.Second)
		rec := &startRecorder{}
		for _, tc := range []struct {
			id, job int64
			block   carillonv1.BlockStrategy
		}{{11, 1, discardLater}, {12, 2, discardLater}, {13, 3, coverEarly}} {
			if err := h.acceptDue(tc.id, tc.job, tc.block, due, rec); err != nil {
				t.Fatalf("run %d refused at accept: %v", tc.id, err)
			}
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if at, ok := rec.at(11); !ok || !at.Equal(due) {
			t.Errorf("run 11 (its job idle on its instant) started at %v (%v), want %v", at.Sub(start), ok, due.Sub(start))
		}
		if r := h.result(t, 12); r.Status != failed || !strings.Contains(r.Message, "DISCARD_LATER") {
			t.Errorf("run 12 (its job busy on its instant): %v %q, want FAILED by DISCARD_LATER", r.Status, r.Message)
		}
		if _, ok := rec.at(12); ok {
			t.Error("run 12's handler ran")
		}
		if r := h.result(t, 3); r.Status != killed || !r.FinishedAt.Equal(due) {
			t.Errorf("run 3: %v at %v, want KILLED by run 13 on its instant", r.Status, r.FinishedAt.Sub(start))
		}
		if at, ok := rec.at(13); !ok || !at.Equal(due) {
			t.Errorf("run 13 started at %v (%v), want %v", at.Sub(start), ok, due.Sub(start))
		}
	})
}

// TestDueAtShutdown: a graceful shutdown ends the waiting runs KILLED and
// starts none of them.
func TestDueAtShutdown(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		rec := &startRecorder{}
		due := time.Now().Add(time.Second)
		if err := h.acceptDue(1, 1, serial, due, rec); err != nil {
			t.Fatal(err)
		}
		h.d.StopAccepting()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if _, ok := rec.at(1); ok {
			t.Error("a waiting run started after the shutdown began")
		}
		wantResult(t, h.result(t, 1), killed, ErrShuttingDown.Error())
	})
}

// TestDueAtReplacedBeforeInstant: a waiting run cancelled before its start
// to be replaced (KillRequest.replace: its job was updated) is dropped
// without a result, and the same run id sent again, with the new
// definition, is accepted and starts once, on its instant, with its new
// param; the old one never runs.
func TestDueAtReplacedBeforeInstant(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		var mu sync.Mutex
		var params []string
		handler := HandlerFunc(func(_ context.Context, job *Job) error {
			mu.Lock()
			params = append(params, job.Param)
			mu.Unlock()
			return nil
		})
		due := time.Now().Add(300 * time.Millisecond)
		if err := h.d.Accept(&Run{ID: 7, JobID: 7, Name: "test", Handler: handler, Block: serial, ShardTotal: 1,
			DueAt: due, ScheduledAt: due, Param: "old"}); err != nil {
			t.Fatal(err)
		}
		if !h.d.CancelBeforeStart(report.Key{DB: "", ID: 7}, 7, "the job was updated before this fire's instant", true) {
			t.Fatal("cancelBeforeStart with replace of a waiting run: false, want true")
		}
		synctest.Wait()
		if h.hasResult(7) {
			t.Fatal("a run dropped to be replaced reported a result")
		}
		if s := h.d.Held("", []int64{7})[0]; s != carillonv1.HeldRunState_HELD_RUN_STATE_UNSPECIFIED {
			t.Errorf("a run dropped to be replaced is held as %v, want UNSPECIFIED (not held: to be sent again)", s)
		}
		if err := h.d.Accept(&Run{ID: 7, JobID: 7, Name: "test", Handler: handler, Block: serial, ShardTotal: 1,
			DueAt: due, ScheduledAt: due, Param: "new"}); err != nil {
			t.Fatalf("the run sent again after its replace cancel was refused: %v", err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		mu.Lock()
		if len(params) != 1 || params[0] != "new" {
			t.Errorf("the handler ran with params %q, want once with %q", params, "new")
		}
		mu.Unlock()
		wantResult(t, h.result(t, 7), succeeded, "")
		if log := h.log(t, 7); strings.Count(log, "accepted") != 1 || !strings.Contains(log, `param "new"`) {
			t.Errorf("run 7's log is not the log of the run sent again alone:\n%s", log)
		}
	})
}

// TestDueAtLaunchedRunEnds: a run launched on its instant sees itself to
// its end as a worker's run would: timed out on its deadline, its
// stubborn handler abandoned abandonAfter later, when the run queued
// behind it starts; killed by the admin; and waited for by a shutdown,
// which leaves no goroutine behind (the bubble would not end).
func TestDueAtLaunchedRunEnds(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		release := make(chan struct{})
		stubborn := HandlerFunc(func(ctx context.Context, job *Job) error {
			<-release
			return nil
		})
		blocking := HandlerFunc(func(ctx context.Context, job *Job) error {
			<-ctx.Done()
			return context.Cause(ctx)
		})
		var nextStarted time.Time
		next := HandlerFunc(func(ctx context.Context, job *Job) error {
			nextStarted = time.Now()
			return nil
		})
		due := time.Now().Add(time.Second)
		timed := &Run{ID: 1, JobID: 1, Name: "test", Handler: stubborn, Block: serial, ShardTotal: 1, DueAt: due, ScheduledAt: due, Timeout: 2 * time.Second}
		if err := h.d.Accept(timed); err != nil {
			t.Fatal(err)
		}
		if err := h.acceptDue(2, 2, serial, due, blocking); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(due))
		synctest.Wait()
		if err := h.accept(3, 1, serial, 0, next); err != nil { // queued behind run 1
			t.Fatal(err)
		}
		h.d.KillRun(report.Key{DB: "", ID: 2}, 2)
		synctest.Wait()
		wantResult(t, h.result(t, 2), killed, "sdk: run killed by the admin")

		time.Sleep(2 * time.Second)
		synctest.Wait()
		wantResult(t, h.result(t, 1), timedOut, "sdk: run timed out after 2s")
		if h.hasResult(3) {
			t.Fatal("the run queued behind a timed-out launched run started while its handler still had time to return")
		}
		time.Sleep(AbandonAfterDefault)
		synctest.Wait()
		if want := due.Add(2*time.Second + AbandonAfterDefault); !nextStarted.Equal(want) {
			t.Errorf("the queued run started at %v, want %v (the launched run's deadline + abandonAfter)", nextStarted, want)
		}
		wantResult(t, h.result(t, 3), succeeded, "")
		close(release)

		// A shutdown waits for a launched run.
		later := time.Now().Add(time.Second)
		rec := &startRecorder{hold: 3 * time.Second}
		if err := h.acceptDue(4, 4, serial, later, rec); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(later))
		synctest.Wait() // run 4 started
		if _, ok := rec.at(4); !ok {
			t.Fatal("run 4 did not start on its instant")
		}
		h.d.StopAccepting()
		done := make(chan struct{})
		go func() { h.d.Drain(context.Background()); close(done) }()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("drain returned while a launched run ran")
		default:
		}
		time.Sleep(3 * time.Second)
		<-done
		wantResult(t, h.result(t, 4), succeeded, "")
	})
}

// TestDueAtLargeBurst: a burst larger than a gate (gateRuns) starts whole
// on its instant, gate after gate, and its runs are finished and reported
// finishDelay after the instant, not before.
func TestDueAtLargeBurst(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		rec := &startRecorder{}
		const n = 2*gateRuns + 100 // three gates
		due := time.Now().Add(time.Second)
		for id := int64(1); id <= n; id++ {
			if err := h.acceptDue(id, id, serial, due, rec); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Until(due))
		synctest.Wait()
		for id := int64(1); id <= n; id++ {
			if at, ok := rec.at(id); !ok || !at.Equal(due) {
				t.Fatalf("run %d started at %v (%v), want on its instant %v", id, at, ok, due)
			}
		}
		if h.hasResult(1) {
			t.Fatal("a run of a large burst was reported before its settleDelay")
		}
		time.Sleep(finishDelay(n))
		synctest.Wait()
		for id := int64(1); id <= n; id++ {
			wantResult(t, h.result(t, id), succeeded, "")
		}
	})
}

// TestDueAtCutBeforeItBegins: a run its instant launched, killed before
// its goroutine began it, ends KILLED before it started, its handler never
// called, and its job is idle again.
func TestDueAtCutBeforeItBegins(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		called := false
		never := HandlerFunc(func(context.Context, *Job) error { called = true; return nil })
		due := time.Now().Add(time.Second)
		if err := h.acceptDue(1, 1, serial, due, never); err != nil {
			t.Fatal(err)
		}
		// The instant decides run 1 (as launcher.start does), and its goroutine
		// begins it only after a kill.
		h.d.mu.Lock()
		r := h.d.runs[report.Key{DB: "", ID: 1}]
		var ends []ending
		_, launch := h.d.launcher.startAt(r, &ends)
		h.d.mu.Unlock()
		if !launch || len(ends) > 0 {
			t.Fatalf("startAt of a waiting run of an idle job: launch %v, ends %v; want launched", launch, ends)
		}
		h.d.KillRun(report.Key{DB: "", ID: 1}, 1)
		h.d.launcher.launch(r)
		synctest.Wait()
		if called {
			t.Error("the handler of a run cut before it began was called")
		}
		wantResult(t, h.result(t, 1), killed, "sdk: run killed by the admin before it started")

		rec := &startRecorder{}
		if err := h.accept(2, 1, serial, 0, rec); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if _, ok := rec.at(2); !ok {
			t.Error("the job of a run cut before it began is still busy: its next run did not start")
		}
		time.Sleep(time.Until(due) + time.Millisecond) // its instant's timer finds nothing to start
		synctest.Wait()
		h.result(t, 1) // still one result
		wantResult(t, h.result(t, 2), succeeded, "")
	})
}

// TestDueAtHandlerPanics: a run launched on its instant whose handler
// panics, or calls runtime.Goexit, ends FAILED with it, and its job is
// idle again.
func TestDueAtHandlerPanics(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		due := time.Now().Add(time.Second)
		panics := HandlerFunc(func(context.Context, *Job) error { panic("boom") })
		exits := HandlerFunc(func(context.Context, *Job) error { runtime.Goexit(); return nil })
		if err := h.acceptDue(1, 1, serial, due, panics); err != nil {
			t.Fatal(err)
		}
		if err := h.acceptDue(2, 2, serial, due, exits); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(due) + finishDelay(2))
		synctest.Wait()
		wantResult(t, h.result(t, 1), failed, "panic: boom")
		wantResult(t, h.result(t, 2), failed, "panic: runtime.Goexit called")
		rec := &startRecorder{}
		for _, job := range []int64{1, 2} {
			if err := h.accept(10+job, job, serial, 0, rec); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		wantResult(t, h.result(t, 11), succeeded, "")
		wantResult(t, h.result(t, 12), succeeded, "")
	})
}
