package trigger

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/internal/clock"
)

// TestDeferredRecords: a held dispatch goes with its run's result when the
// result comes first, and is flushed on its own once recordDelay passed.
func TestDeferredRecords(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC))
	flushes := make(chan []store.Dispatch, 10)
	d := newDeferredRecords(func(ds []store.Dispatch) { flushes <- ds }, clk)
	noFlush := func(when string) {
		t.Helper()
		select {
		case ds := <-flushes:
			t.Fatalf("%s: flushed %v", when, ds)
		default:
		}
	}

	d.keep(whole([]store.Dispatch{{RunID: 1, ExecutorAddress: "http://a"}, {RunID: 2, ExecutorAddress: "http://b"}}), time.Time{})
	clk.Add(500 * time.Millisecond)
	d.keep(whole([]store.Dispatch{{RunID: 3, ExecutorAddress: "http://c"}}), time.Time{})
	d.note(1, "took 1ms")

	results := []store.Result{{RunID: 1, Message: "ok"}, {RunID: 9, Message: "not held"}}
	got, taken := d.attach(results)
	want := []store.Result{{RunID: 1, Message: "ok", Dispatch: &store.Dispatch{RunID: 1, ExecutorAddress: "http://a", TriggerMessage: "took 1ms"}},
		{RunID: 9, Message: "not held"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attach (-want +got):\n%s", diff)
	}
	if results[0].Dispatch != nil {
		t.Error("attach changed the caller's results")
	}
	if len(taken) != 1 || taken[0].RunID != 1 {
		t.Errorf("taken %v, want run 1's dispatch", taken)
	}
	if again, _ := d.attach(results); again[0].Dispatch != nil {
		t.Error("a dispatch went with two results")
	}

	noFlush("500 ms after the first hold")
	if n := clk.Pending(); n != 1 {
		t.Fatalf("%d flushes scheduled on the clock, want 1", n)
	}
	// recordDelay after the first hold the clock's timer flushes run 2
	// (run 1 went with its result); run 3, held 500 ms later, waits.
	clk.Add(recordDelay - 500*time.Millisecond)
	if diff := cmp.Diff([]store.Dispatch{{RunID: 2, ExecutorAddress: "http://b"}}, <-flushes); diff != "" {
		t.Errorf("first flush (-want +got):\n%s", diff)
	}
	if _, ok := d.release(2); ok {
		t.Error("run 2 still held after its flush")
	}
	noFlush("before run 3's recordDelay")
	clk.Add(500 * time.Millisecond) // the flush re-armed for run 3
	if diff := cmp.Diff([]store.Dispatch{{RunID: 3, ExecutorAddress: "http://c"}}, <-flushes); diff != "" {
		t.Errorf("second flush (-want +got):\n%s", diff)
	}

	d.keep(whole([]store.Dispatch{{RunID: 4}}), time.Time{})
	d.flushAll()
	if ds := <-flushes; len(ds) != 1 || ds[0].RunID != 4 {
		t.Errorf("flushAll flushed %v, want run 4", ds)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.byRun) != 0 || len(d.queue) != 0 {
		t.Errorf("still held after flushAll: %v, queue %v", d.byRun, d.queue)
	}
}

// TestDeferredRecordsSentAhead: the dispatch of a run sent ahead of its
// instant is held for recordDelay from the instant, not from the send (its
// result comes after the instant), and one held later for an earlier
// instant is flushed first.
func TestDeferredRecordsSentAhead(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC))
	flushes := make(chan []store.Dispatch, 10)
	d := newDeferredRecords(func(ds []store.Dispatch) { flushes <- ds }, clk)
	burst := clk.Now().Add(2 * time.Second)
	d.keep(whole([]store.Dispatch{{RunID: 1}}), burst)                      // a burst, sent 2 s ahead
	d.keep(whole([]store.Dispatch{{RunID: 2}}), clk.Now().Add(time.Second)) // sent after it, due before it

	clk.Add(recordDelay + time.Second) // run 2's instant + recordDelay
	if ds := <-flushes; len(ds) != 1 || ds[0].RunID != 2 {
		t.Fatalf("flushed %v, want run 2 only", ds)
	}
	clk.Add(time.Second - time.Millisecond)
	select {
	case ds := <-flushes:
		t.Fatalf("flushed %v before the burst's instant + recordDelay", ds)
	default:
	}
	clk.Add(time.Millisecond)
	if ds := <-flushes; len(ds) != 1 || ds[0].RunID != 1 {
		t.Fatalf("flushed %v, want run 1", ds)
	}
}
