package runner

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk/internal/report"
	"github.com/carillonhq/carillon/sdk/internal/runlog"
)

// These tests drive the dispatcher directly inside a synctest bubble, so
// time is fake: a handler that sleeps an hour returns at once, and times
// can be compared exactly.

const (
	serial       = carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL
	discardLater = carillonv1.BlockStrategy_BLOCK_STRATEGY_DISCARD_LATER
	coverEarly   = carillonv1.BlockStrategy_BLOCK_STRATEGY_COVER_EARLY

	succeeded = carillonv1.RunStatus_RUN_STATUS_SUCCEEDED
	failed    = carillonv1.RunStatus_RUN_STATUS_FAILED
	timedOut  = carillonv1.RunStatus_RUN_STATUS_TIMED_OUT
	killed    = carillonv1.RunStatus_RUN_STATUS_KILLED
)

// harness is a dispatcher whose results are recorded.
type harness struct {
	d *Dispatcher

	mu      sync.Mutex
	results map[int64][]report.Result
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessIn(t, t.TempDir())
}

// newHarnessIn is newHarness with its run logs in dir.
func newHarnessIn(t *testing.T, dir string) *harness {
	t.Helper()
	h := &harness{results: make(map[int64][]report.Result)}
	h.d = New(Config{
		PrepareFunc:  prepare,
		Logs:         newTestLogStore(t, dir, time.Now),
		NowFunc:      time.Now,
		Logger:       slog.New(slog.NewTextHandler(t.Output(), nil)),
		ReportFunc:   h.report,
		IdleTimeout:  IdleTimeoutDefault,
		AbandonAfter: AbandonAfterDefault,
	})
	t.Cleanup(func() {
		// Stop the workers: a bubble must end with no goroutine left.
		h.d.StopAccepting()
		h.d.Drain(context.Background())
	})
	return h
}

func (h *harness) report(r report.Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.results[r.RunID] = append(h.results[r.RunID], r)
}

func (h *harness) accept(runID, jobID int64, block carillonv1.BlockStrategy, timeout time.Duration, handler Handler) error {
	return h.d.Accept(&Run{ID: runID, JobID: jobID, Name: "test", Handler: handler, Block: block, Timeout: timeout, ShardTotal: 1})
}

// result returns the only result of runID; it fails the test if there is
// none or more than one.
func (h *harness) result(t *testing.T, runID int64) report.Result {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	rs := h.results[runID]
	if len(rs) != 1 {
		t.Fatalf("run %d has %d results %v, want 1", runID, len(rs), rs)
	}
	return rs[0]
}

func (h *harness) hasResult(runID int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.results[runID]) > 0
}

func (h *harness) log(t *testing.T, runID int64) string {
	t.Helper()
	src, err := h.d.Logs.Find("", runID)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	b, err := io.ReadAll(src)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (h *harness) workers() int {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	return len(h.d.workers)
}

func wantResult(t *testing.T, got report.Result, status carillonv1.RunStatus, msg string) {
	t.Helper()
	if got.Status != status || got.Message != msg {
		t.Errorf("run %d: %v %q, want %v %q", got.RunID, got.Status, got.Message, status, msg)
	}
}

// sleeper sleeps for d (fake time) or until ctx ends.
func sleeper(d time.Duration) Handler {
	return HandlerFunc(func(ctx context.Context, job *Job) error {
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
}

func TestBlockStrategy(t *testing.T) {
	t.Parallel()

	t.Run("SerialRunsOneAtATimeInOrder", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t)
			var active, most atomic.Int32
			var mu sync.Mutex
			var order []int64
			handler := HandlerFunc(func(ctx context.Context, job *Job) error {
				n := active.Add(1)
				defer active.Add(-1)
				if n > most.Load() {
					most.Store(n)
				}
				mu.Lock()
				order = append(order, job.RunID)
				mu.Unlock()
				time.Sleep(time.Second)
				return nil
			})
			start := time.Now()
			// Concurrent requests: any order, but one at a time.
			var wg sync.WaitGroup
			for id := int64(1); id <= 5; id++ {
				wg.Go(func() {
					if err := h.accept(id, 1, serial, 0, handler); err != nil {
						t.Errorf("accept(%d): %v", id, err)
					}
				})
			}
			wg.Wait()
			time.Sleep(time.Minute)
			synctest.Wait()
			if most.Load() != 1 {
				t.Errorf("%d runs of one job ran at once, want 1", most.Load())
			}
			if len(order) != 5 {
				t.Fatalf("ran %v, want 5 runs", order)
			}
			for i, id := range order {
				r := h.result(t, id)
				wantResult(t, r, succeeded, "")
				if want := start.Add(time.Duration(i+1) * time.Second); !r.FinishedAt.Equal(want) {
					t.Errorf("run %d (#%d) finished at %v, want %v", id, i+1, r.FinishedAt.Sub(start), want.Sub(start))
				}
			}
			// Requests one after another run in the order they came.
			order = nil
			for id := int64(11); id <= 13; id++ {
				if err := h.accept(id, 1, serial, 0, handler); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(time.Minute)
			synctest.Wait()
			if got := order; len(got) != 3 || got[0] != 11 || got[1] != 12 || got[2] != 13 {
				t.Errorf("order %v, want [11 12 13]", got)
			}
		})
	})

	t.Run("DiscardLaterRefusesWhileBusy", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t)
			var wg sync.WaitGroup
			var accepted, discarded atomic.Int32
			for id := int64(1); id <= 8; id++ {
				wg.Go(func() {
					err := h.accept(id, 1, discardLater, 0, sleeper(time.Second))
					switch {
					case err == nil:
						accepted.Add(1)
					case errors.Is(err, ErrDiscarded):
						discarded.Add(1)
					default:
						t.Errorf("accept(%d) = %v", id, err)
					}
				})
			}
			wg.Wait()
			if accepted.Load() != 1 || discarded.Load() != 7 {
				t.Errorf("accepted %d, discarded %d; want 1 and 7", accepted.Load(), discarded.Load())
			}
			// A queued SERIAL run makes the job busy too.
			synctest.Wait() // the worker has started run 1
			if err := h.accept(20, 1, serial, 0, sleeper(time.Second)); err != nil {
				t.Fatal(err)
			}
			err := h.accept(21, 1, discardLater, 0, sleeper(time.Second))
			if !errors.Is(err, ErrDiscarded) || !strings.Contains(err.Error(), "1 more queued") {
				t.Errorf("accept behind a queued run = %v, want ErrDiscarded saying so", err)
			}
			time.Sleep(time.Minute)
			synctest.Wait()
			if err := h.accept(22, 1, discardLater, 0, sleeper(time.Second)); err != nil {
				t.Errorf("accept once idle: %v", err)
			}
			time.Sleep(time.Minute)
			synctest.Wait()
			wantResult(t, h.result(t, 22), succeeded, "")
		})
	})

	t.Run("CoverEarlyKillsRunningAndQueued", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t)
			var cause error
			running := HandlerFunc(func(ctx context.Context, job *Job) error {
				<-ctx.Done()
				cause = context.Cause(ctx)
				return cause
			})
			start := time.Now()
			for id := int64(1); id <= 3; id++ {
				if err := h.accept(id, 1, serial, 0, running); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(time.Second)
			if err := h.accept(4, 1, coverEarly, 0, sleeper(time.Second)); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			if !errors.Is(cause, ErrKilled) {
				t.Errorf("context.Cause = %v, want ErrKilled", cause)
			}
			wantResult(t, h.result(t, 1), killed, "sdk: run killed: covered by run 4")
			wantResult(t, h.result(t, 2), killed, "sdk: run killed: covered by run 4 before it started")
			wantResult(t, h.result(t, 3), killed, "sdk: run killed: covered by run 4 before it started")
			time.Sleep(time.Minute)
			synctest.Wait()
			r := h.result(t, 4)
			wantResult(t, r, succeeded, "")
			if want := start.Add(2 * time.Second); !r.FinishedAt.Equal(want) {
				t.Errorf("covering run finished at +%v, want +2s", r.FinishedAt.Sub(start))
			}
			// On an idle job, COVER_EARLY just runs.
			if err := h.accept(5, 1, coverEarly, 0, sleeper(time.Second)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Minute)
			synctest.Wait()
			wantResult(t, h.result(t, 5), succeeded, "")
		})
	})

	t.Run("JobsRunConcurrently", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t)
			start := time.Now()
			for job := int64(1); job <= 3; job++ {
				if err := h.accept(job, job, serial, 0, sleeper(time.Second)); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(time.Minute)
			synctest.Wait()
			for id := int64(1); id <= 3; id++ {
				if r := h.result(t, id); !r.FinishedAt.Equal(start.Add(time.Second)) {
					t.Errorf("run %d finished at +%v, want +1s", id, r.FinishedAt.Sub(start))
				}
			}
		})
	})
}

func TestDuplicateRunIsNotRunTwice(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		var runs atomic.Int32
		handler := HandlerFunc(func(ctx context.Context, job *Job) error {
			runs.Add(1)
			time.Sleep(time.Second)
			return nil
		})
		if err := h.accept(1, 1, serial, 0, handler); err != nil {
			t.Fatal(err)
		}
		if err := h.accept(1, 1, serial, 0, handler); !errors.Is(err, ErrDuplicateRun) {
			t.Errorf("accept while running = %v, want ErrDuplicateRun", err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if err := h.accept(1, 2, serial, 0, handler); !errors.Is(err, ErrDuplicateRun) {
			t.Errorf("accept after it ended = %v, want ErrDuplicateRun", err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if runs.Load() != 1 {
			t.Errorf("handler ran %d times, want 1", runs.Load())
		}
		h.result(t, 1)
	})
}

func TestDuplicateRunAfterRestart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		first := newHarnessIn(t, dir)
		for id := int64(1_000); id <= 1_002; id++ {
			if err := first.accept(id, 1, serial, 0, sleeper(time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Minute)
		synctest.Wait()

		// A new process, same directory.
		second := newHarnessIn(t, dir)
		if err := second.accept(1_001, 1, serial, 0, sleeper(time.Second)); !errors.Is(err, ErrDuplicateRun) {
			t.Errorf("accept of a run of before the restart = %v, want ErrDuplicateRun", err)
		}
		if err := second.accept(1_003, 1, serial, 0, sleeper(time.Second)); err != nil {
			t.Errorf("accept of a new run in the same bucket = %v", err)
		}
		if err := second.accept(2_000, 1, serial, 0, sleeper(time.Second)); err != nil {
			t.Errorf("accept of a new run = %v", err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		second.result(t, 1_003)
	})
}

func TestTimeout(t *testing.T) {
	t.Parallel()

	t.Run("HandlerIgnoresContext", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t)
			release := make(chan struct{})
			stubborn := HandlerFunc(func(ctx context.Context, job *Job) error {
				job.Logf("ignoring my context")
				<-release
				job.Logf("too late")
				return nil
			})
			var secondStarted time.Time
			second := HandlerFunc(func(ctx context.Context, job *Job) error {
				secondStarted = time.Now()
				return nil
			})
			start := time.Now()
			if err := h.accept(1, 1, serial, 2*time.Second, stubborn); err != nil {
				t.Fatal(err)
			}
			if err := h.accept(2, 1, serial, 0, second); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Second)
			synctest.Wait()
			r := h.result(t, 1)
			wantResult(t, r, timedOut, "sdk: run timed out after 2s")
			if !r.FinishedAt.Equal(start.Add(2 * time.Second)) {
				t.Errorf("reported at +%v, want at the deadline, +2s", r.FinishedAt.Sub(start))
			}
			if h.hasResult(2) {
				t.Error("the next run started while the timed-out handler still had time to return")
			}
			time.Sleep(AbandonAfterDefault)
			synctest.Wait()
			if want := start.Add(2*time.Second + AbandonAfterDefault); !secondStarted.Equal(want) {
				t.Errorf("next run started at +%v, want +%v", secondStarted.Sub(start), want.Sub(start))
			}
			wantResult(t, h.result(t, 2), succeeded, "")
			close(release) // the abandoned goroutine returns; its result is ignored
			synctest.Wait()
			log := h.log(t, 1)
			if !strings.Contains(log, "abandoned") || strings.Contains(log, "too late") {
				t.Errorf("log of the abandoned run:\n%s", log)
			}
			h.result(t, 1) // still exactly one result
		})
	})

	t.Run("HandlerHonoursContext", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t)
			var cause error
			handler := HandlerFunc(func(ctx context.Context, job *Job) error {
				<-ctx.Done()
				cause = context.Cause(ctx)
				return ctx.Err()
			})
			start := time.Now()
			if err := h.accept(1, 1, serial, time.Second, handler); err != nil {
				t.Fatal(err)
			}
			var next time.Time
			if err := h.accept(2, 1, serial, 0, HandlerFunc(func(context.Context, *Job) error {
				next = time.Now()
				return nil
			})); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Minute)
			synctest.Wait()
			wantResult(t, h.result(t, 1), timedOut, "sdk: run timed out after 1s")
			if !errors.Is(cause, ErrTimedOut) {
				t.Errorf("context.Cause = %v, want ErrTimedOut", cause)
			}
			if !next.Equal(start.Add(time.Second)) {
				t.Errorf("next run started at +%v, want +1s", next.Sub(start))
			}
		})
	})
}

func TestKill(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		var cause error
		handler := HandlerFunc(func(ctx context.Context, job *Job) error {
			<-ctx.Done()
			cause = context.Cause(ctx)
			return cause
		})
		for id := int64(1); id <= 3; id++ {
			if err := h.accept(id, 7, serial, 0, handler); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.accept(4, 8, serial, 0, sleeper(time.Hour)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if idle, reason := h.d.Idle(7); idle || reason != "job 7 is running run 1 with 2 more queued" {
			t.Errorf("idle(7) = %v %q", idle, reason)
		}
		h.d.Kill(7)
		synctest.Wait()
		if !errors.Is(cause, ErrKilled) {
			t.Errorf("context.Cause = %v, want ErrKilled", cause)
		}
		wantResult(t, h.result(t, 1), killed, "sdk: run killed by the admin")
		wantResult(t, h.result(t, 2), killed, "sdk: run killed by the admin before it started")
		wantResult(t, h.result(t, 3), killed, "sdk: run killed by the admin before it started")
		if h.hasResult(4) {
			t.Error("killing job 7 ended a run of job 8")
		}
		if idle, _ := h.d.Idle(7); !idle {
			t.Error("job 7 is not idle after the kill")
		}
		// The job's worker goes on.
		if err := h.accept(5, 7, serial, 0, sleeper(time.Second)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		wantResult(t, h.result(t, 5), succeeded, "")
		h.d.Kill(8)
		synctest.Wait()
		wantResult(t, h.result(t, 4), killed, "sdk: run killed by the admin")
	})
}

func TestPanic(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		if err := h.accept(1, 1, serial, 0, HandlerFunc(func(context.Context, *Job) error {
			panic("boom")
		})); err != nil {
			t.Fatal(err)
		}
		if err := h.accept(2, 1, serial, 0, HandlerFunc(func(context.Context, *Job) error {
			var m map[string]int
			m["x"] = 1 //nolint:staticcheck // a runtime error, on purpose
			return nil
		})); err != nil {
			t.Fatal(err)
		}
		if err := h.accept(3, 1, serial, 0, sleeper(time.Second)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		wantResult(t, h.result(t, 1), failed, "panic: boom")
		wantResult(t, h.result(t, 2), failed, "panic: assignment to entry in nil map")
		wantResult(t, h.result(t, 3), succeeded, "")
		log := h.log(t, 1)
		for _, want := range []string{"panic: boom", "goroutine ", "dispatcher_test.go:", "ended: FAILED: panic: boom"} {
			if !strings.Contains(log, want) {
				t.Errorf("log lacks %q:\n%s", want, log)
			}
		}
	})
}

func TestIdleWorkerExits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		if err := h.accept(1, 1, serial, 0, sleeper(time.Second)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		h.result(t, 1)
		time.Sleep(IdleTimeoutDefault - time.Second)
		synctest.Wait()
		if h.workers() != 1 {
			t.Fatalf("%d workers just before the idle timeout, want 1", h.workers())
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if h.workers() != 0 {
			t.Fatalf("%d workers after the idle timeout, want 0", h.workers())
		}
		// Recreated on demand.
		if err := h.accept(2, 1, serial, 0, sleeper(time.Second)); err != nil {
			t.Fatal(err)
		}
		if h.workers() != 1 {
			t.Errorf("%d workers after a new run, want 1", h.workers())
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		wantResult(t, h.result(t, 2), succeeded, "")
	})
}

func TestDispatcherShutdown(t *testing.T) {
	t.Parallel()

	t.Run("WaitsForRunningRuns", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t)
			start := time.Now()
			if err := h.accept(1, 1, serial, 0, sleeper(3*time.Second)); err != nil {
				t.Fatal(err)
			}
			if err := h.accept(2, 1, serial, 0, sleeper(time.Second)); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			h.d.StopAccepting()
			wantResult(t, h.result(t, 2), killed, "sdk: executor shutting down")
			if err := h.accept(3, 2, serial, 0, sleeper(time.Second)); !errors.Is(err, ErrShuttingDown) {
				t.Errorf("accept while stopping = %v, want ErrShuttingDown", err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			h.d.Drain(ctx)
			if got := time.Since(start); got != 3*time.Second {
				t.Errorf("drain returned after %v, want 3s, when the run ended", got)
			}
			wantResult(t, h.result(t, 1), succeeded, "")
		})
	})

	t.Run("CancelsAfterTimeout", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t)
			start := time.Now()
			var cause error
			if err := h.accept(1, 1, serial, 0, HandlerFunc(func(ctx context.Context, job *Job) error {
				<-ctx.Done()
				cause = context.Cause(ctx)
				return cause
			})); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			h.d.StopAccepting()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()
			h.d.Drain(ctx)
			if got := time.Since(start); got != 2*time.Second {
				t.Errorf("drain returned after %v, want the 2s timeout", got)
			}
			if !errors.Is(cause, ErrShuttingDown) {
				t.Errorf("context.Cause = %v, want ErrShuttingDown", cause)
			}
			wantResult(t, h.result(t, 1), killed, "sdk: executor shutting down")
			if h.workers() != 0 {
				t.Errorf("%d workers left", h.workers())
			}
		})
	})
}

// newTestLogStore opens a run log store in dir, closed at the end of the
// test.
func newTestLogStore(t testing.TB, dir string, now func() time.Time) *runlog.Store {
	t.Helper()
	s, err := runlog.Open(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
