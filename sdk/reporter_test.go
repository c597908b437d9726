package sdk

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// fakeAdmin is a ReportResults that fails while down.
type fakeAdmin struct {
	mu        sync.Mutex
	down      bool
	calls     []time.Time
	delivered map[int64]int
	batches   []int
}

func (a *fakeAdmin) send(_ context.Context, batch []result) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, time.Now())
	if a.down {
		return errors.New("admin down")
	}
	for _, r := range batch {
		a.delivered[r.RunID]++
	}
	a.batches = append(a.batches, len(batch))
	return nil
}

func (a *fakeAdmin) setDown(down bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.down = down
}

func newTestReporter(t *testing.T, dir string, a *fakeAdmin) *reporter {
	t.Helper()
	sp, err := openSpool(dir)
	if err != nil {
		t.Fatal(err)
	}
	return newReporter(sp, a.send, slog.New(slog.NewTextHandler(t.Output(), nil)))
}

func spoolFiles(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

func TestReporter(t *testing.T) {
	t.Parallel()

	t.Run("RetriesWithBackoffUntilAcknowledged", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			a := &fakeAdmin{down: true, delivered: make(map[int64]int)}
			r := newTestReporter(t, dir, a)
			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			wg.Go(func() { r.run(ctx, nil) })
			synctest.Wait() // idle, waiting for results

			start := time.Now()
			for id := int64(1); id <= 3; id++ {
				r.add(newResult(id, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "", time.Now()))
			}
			// Down for 4 attempts: at +5ms, then after backoffs of 1s, 2s and
			// 4s, each plus up to a quarter of jitter: by +8.755s at most. The
			// fifth comes 8s to 10s after the fourth.
			time.Sleep(9 * time.Second)
			synctest.Wait()
			a.setDown(false)
			time.Sleep(20 * time.Second)
			synctest.Wait()

			a.mu.Lock()
			calls := append([]time.Time(nil), a.calls...)
			a.mu.Unlock()
			if len(calls) != 5 {
				t.Fatalf("%d calls, want 4 failed and 1 that succeeds", len(calls))
			}
			if calls[0] != start.Add(reportBatchDelay) {
				t.Errorf("first call at +%v, want +%v", calls[0].Sub(start), reportBatchDelay)
			}
			for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second} {
				if got := calls[i+1].Sub(calls[i]); got < want || got > want*5/4 {
					t.Errorf("retry %d after %v, want %v to %v", i+1, got, want, want*5/4)
				}
			}
			for id := int64(1); id <= 3; id++ {
				if a.delivered[id] != 1 {
					t.Errorf("run %d delivered %d times, want once", id, a.delivered[id])
				}
			}
			if n := spoolFiles(t, dir); n != 0 {
				t.Errorf("%d files left in the spool", n)
			}
			cancel()
			wg.Wait()
		})
	})

	t.Run("BatchesAndBoundsMemory", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			a := &fakeAdmin{down: true, delivered: make(map[int64]int)}
			r := newTestReporter(t, dir, a)
			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			wg.Go(func() { r.run(ctx, nil) })

			const n = 2500
			for id := int64(1); id <= n; id++ {
				r.add(newResult(id, carillonv1.RunStatus_RUN_STATUS_FAILED, "no", time.Now()))
			}
			synctest.Wait()
			if p := r.pending(); p > reportMemMax {
				t.Errorf("%d results in memory, want at most %d", p, reportMemMax)
			}
			if got := spoolFiles(t, dir); got != n {
				t.Errorf("%d results on disk, want %d", got, n)
			}
			a.setDown(false)
			time.Sleep(2 * time.Minute)
			synctest.Wait()
			a.mu.Lock()
			for id := int64(1); id <= n; id++ {
				if a.delivered[id] != 1 {
					t.Errorf("run %d delivered %d times, want once", id, a.delivered[id])
				}
			}
			for _, b := range a.batches {
				if b > reportBatchMax {
					t.Errorf("batch of %d, want at most %d", b, reportBatchMax)
				}
			}
			a.mu.Unlock()
			if got := spoolFiles(t, dir); got != 0 {
				t.Errorf("%d files left in the spool", got)
			}
			cancel()
			wg.Wait()
		})
	})

	t.Run("SurvivesRestart", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			a := &fakeAdmin{down: true, delivered: make(map[int64]int)}
			first := newTestReporter(t, dir, a)
			for id := int64(1); id <= 5; id++ {
				first.add(newResult(id, carillonv1.RunStatus_RUN_STATUS_KILLED, "killed", time.Now()))
			}
			if err := first.flush(t.Context()); err == nil {
				t.Fatal("flush to a down admin succeeded")
			}
			// A new process, same directory.
			a.setDown(false)
			second := newTestReporter(t, dir, a)
			if err := second.flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			for id := int64(1); id <= 5; id++ {
				if a.delivered[id] != 1 {
					t.Errorf("run %d delivered %d times, want once", id, a.delivered[id])
				}
			}
			if got := spoolFiles(t, dir); got != 0 {
				t.Errorf("%d files left in the spool", got)
			}
		})
	})
}

func TestSpool(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sp, err := openSpool(dir)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	want := newResult(42, carillonv1.RunStatus_RUN_STATUS_TIMED_OUT, "sdk: run timed out after 1s", at)
	if err := sp.put(want); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/7.json", []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/9-123.tmp", []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	sp, err = openSpool(dir) // removes the crash leftover
	if err != nil {
		t.Fatal(err)
	}
	got, more, err := sp.load(10, func(int64) bool { return false })
	if err == nil {
		t.Error("load of a corrupt file reported no error")
	}
	if more || len(got) != 1 || got[0] != want {
		t.Errorf("load = %v (more %v), want [%v]", got, more, want)
	}
	if _, err := os.Stat(dir + "/7.json.bad"); err != nil {
		t.Errorf("the corrupt file was not set aside: %v", err)
	}
	if _, err := os.Stat(dir + "/9-123.tmp"); err == nil {
		t.Error("the temporary file a crash left is still there")
	}
}
