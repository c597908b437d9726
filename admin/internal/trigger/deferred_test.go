package trigger

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/store"
)

// TestDeferredRecords: a held dispatch goes with its run's result when the
// result comes first, and is flushed on its own once recordDelay passed.
func TestDeferredRecords(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := t0
	var flushed []store.Dispatch
	d := newDeferredRecords(func(ds []store.Dispatch) { flushed = append(flushed, ds...) },
		func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	d.armed = true // no timer: the test flushes by hand
	advance := func(by time.Duration) { mu.Lock(); now = now.Add(by); mu.Unlock() }

	d.hold([]store.Dispatch{{RunID: 1, ExecutorAddress: "http://a"}, {RunID: 2, ExecutorAddress: "http://b"}})
	advance(500 * time.Millisecond)
	d.hold([]store.Dispatch{{RunID: 3, ExecutorAddress: "http://c"}})
	d.update(1, func(h *store.Dispatch) { h.TriggerMessage = "took 1ms" })

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

	d.flushBefore(d.now().Add(-recordDelay), false) // 500 ms after the first hold: nothing due
	if len(flushed) != 0 {
		t.Fatalf("flushed %v before recordDelay passed", flushed)
	}
	advance(recordDelay - 500*time.Millisecond) // run 2 held for recordDelay, run 3 not yet
	d.flushBefore(d.now().Add(-recordDelay), false)
	if diff := cmp.Diff([]store.Dispatch{{RunID: 2, ExecutorAddress: "http://b"}}, flushed); diff != "" {
		t.Errorf("first flush (-want +got):\n%s", diff)
	}
	if _, ok := d.release(2); ok {
		t.Error("run 2 still held after its flush")
	}
	d.flushAll()
	if len(flushed) != 2 || flushed[1].RunID != 3 {
		t.Errorf("flushAll flushed %v, want run 3 last", flushed)
	}
	if len(d.byRun) != 0 || len(d.queue) != 0 {
		t.Errorf("still held after flushAll: %v, queue %v", d.byRun, d.queue)
	}
}
