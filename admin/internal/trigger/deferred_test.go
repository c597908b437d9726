package trigger

import (
	"context"
	"sync"
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

// TestDeferredRecordsBurst: the dispatch records of a large burst are
// kept longer, by recordDelayPerKept a record kept, in quarters of
// recordDelay: their results come as fast as the writer settles them.
func TestDeferredRecordsBurst(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kept int
		want time.Duration
	}{{1, 0}, {4_999, 0}, {5_000, 250 * time.Millisecond}, {1_000_000, 50 * time.Second}, {2_000_000, recordMax}} {
		if got := keptDelay(c.kept); got != c.want {
			t.Errorf("keptDelay(%d) = %v, want %v", c.kept, got, c.want)
		}
	}

	clk := clock.NewFake(time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC))
	flushes := make(chan []store.Dispatch, 10)
	d := newDeferredRecords(func(ds []store.Dispatch) { flushes <- ds }, clk)
	ds := make([]store.Dispatch, 20_000) // kept 1 s longer
	for i := range ds {
		ds[i].RunID = int64(i + 1)
	}
	d.keep(whole(ds), time.Time{})
	clk.Add(recordDelay + time.Second - time.Millisecond)
	// The flush (on a goroutine of its own) looked, kept them all, and
	// waits for its next look, a quarter of recordDelay later; one that
	// flushed them would wait for nothing.
	wait, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if !clk.AwaitPending(wait, 1) {
		t.Fatal("the flush did not wait for its next look within 10 s")
	}
	select {
	case got := <-flushes:
		t.Fatalf("flushed %d records before recordDelay + 1 s", len(got))
	default:
	}
	clk.Add(recordDelay / 4)
	if got := <-flushes; len(got) != len(ds) {
		t.Fatalf("flushed %d records, want %d", len(got), len(ds))
	}
}

// TestUnstored: the monitor takes a run for undispatched only when this
// admin holds no dispatch record of it: none kept for its result, none
// waiting for the writer alone or with its result (a burst's wait seconds
// in each, a million results' a minute), and none being written.
func TestUnstored(t *testing.T) {
	t.Parallel()
	c := idleCompleter()
	c.deferred.keep(whole([]store.Dispatch{{RunID: 1, ExecutorAddress: "http://a"}}), time.Time{})
	c.records.add([]store.Dispatch{{RunID: 2, ExecutorAddress: "http://b"}})
	c.results.add([]store.Result{{RunID: 4, Dispatch: &store.Dispatch{RunID: 4, ExecutorAddress: "http://b"}}, {RunID: 5}})
	got := c.unstored([]store.Run{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}, {ID: 5}})
	if diff := cmp.Diff(map[int64]bool{1: true, 2: true, 4: true}, got); diff != "" {
		t.Errorf("unstored (-want +got):\n%s", diff)
	}

	// A record being written is not stored until its write returns.
	wg := &inflight{}
	busy := &Completer{cfg: &Config{}}
	entered, release := make(chan struct{}), make(chan struct{})
	writing := &writer{wg: wg, now: time.Now, wake: make(chan struct{}, 1)}
	busy.records = newCoalescer(writing, "record", batchMax, 0, func([]store.Dispatch) error { close(entered); <-release; return nil })
	busy.results = newCoalescer(writing, "result", batchMax, 0, func([]store.Result) error { return nil })
	busy.deferred = newDeferredRecords(func([]store.Dispatch) {}, clock.NewFake(time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)))
	done := busy.records.add([]store.Dispatch{{RunID: 6, ExecutorAddress: "http://b"}})
	<-entered
	if got := busy.unstored([]store.Run{{ID: 6}}); !got[6] {
		t.Error("a record being written is taken for stored")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if got := busy.unstored([]store.Run{{ID: 6}}); got[6] {
		t.Error("a record written is still taken for unstored")
	}
}

// TestKeptRecord: a dispatch record kept in its compact form comes back
// as it was given, its trigger message whole, with or without the time
// its run was sent; one sent by a call starts with its route and call.
func TestKeptRecord(t *testing.T) {
	t.Parallel()
	sent := time.Date(2026, 11, 28, 8, 0, 0, 123_456_789, time.UTC)
	for _, d := range []store.Dispatch{
		{RunID: 7, ExecutorAddress: "http://a", ShardIndex: 2, ShardTotal: 3, TimeoutSeconds: 30, TriggerMessage: "; noted", TriggeredAt: sent},
		{RunID: 8, ExecutorAddress: "http://b", TriggerMessage: "whole"},
	} {
		h := keptRecord(d, routeNote{}, nil)
		got := h.record()
		if !got.TriggeredAt.Equal(d.TriggeredAt) || got.TriggeredAt.IsZero() != d.TriggeredAt.IsZero() {
			t.Errorf("run %d: sent at %v, want %v", d.RunID, got.TriggeredAt, d.TriggeredAt)
		}
		got.TriggeredAt = d.TriggeredAt
		if got != d {
			t.Errorf("kept and recorded: %+v, want %+v", got, d)
		}
	}
	n := &callNote{runs: 2}
	h := keptRecord(store.Dispatch{RunID: 9, ExecutorAddress: "http://a"}, routeNote{head: "FIRST over 1 executor (http://a): ", tail: "chose http://a"}, n)
	h.message += "; a note"
	if got, want := h.record().TriggerMessage, "FIRST over 1 executor (http://a): chose http://a; a call of 2 runs; a note"; got != want {
		t.Errorf("trigger message %q, want %q", got, want)
	}
}

// TestDeferredRecordsHeld: while results are backlogged (hold), a kept
// record is not flushed on its own after recordDelay: it waits for its
// result, and is flushed once the backlog ends, or once kept recordMax.
// The test calls the scheduled flush itself after each move of the clock
// (the clock's timers run it on their own goroutines too).
func TestDeferredRecordsHeld(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC))
	flushes := make(chan []store.Dispatch, 100)
	d := newDeferredRecords(func(ds []store.Dispatch) { flushes <- ds }, clk)
	var mu sync.Mutex
	backlog := true
	d.hold = func() bool {
		mu.Lock()
		defer mu.Unlock()
		return backlog
	}
	setBacklog := func(b bool) {
		mu.Lock()
		defer mu.Unlock()
		backlog = b
	}
	after := func(step time.Duration) {
		clk.Add(step)
		d.flushDue()
	}
	none := func(when string) {
		t.Helper()
		select {
		case ds := <-flushes:
			t.Fatalf("%s: flushed %v, want none", when, ds)
		default:
		}
	}
	flushed := func(want int64) {
		t.Helper()
		select {
		case ds := <-flushes:
			if len(ds) != 1 || ds[0].RunID != want {
				t.Fatalf("flushed %v, want run %d's record", ds, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("run %d's record not flushed", want)
		}
	}

	d.keep(whole([]store.Dispatch{{RunID: 1}, {RunID: 2}}), time.Time{})
	after(2 * recordDelay)
	none("past recordDelay in a backlog of results")
	if _, ok := d.release(1); !ok { // run 1's result came
		t.Fatal("run 1's record not kept")
	}
	setBacklog(false)
	after(0)
	flushed(2)

	setBacklog(true)
	d.keep(whole([]store.Dispatch{{RunID: 3}}), time.Time{})
	after(recordMax - time.Millisecond)
	none("before recordMax in a backlog")
	after(time.Millisecond)
	flushed(3)
}

// TestUndispatched: the monitor takes for undispatched neither a run whose
// record this admin holds nor one whose record was stored between its
// read of the runs and its check of what it holds (the second read no
// longer finds it).
func TestUndispatched(t *testing.T) {
	t.Parallel()
	c := idleCompleter()
	c.deferred.keep(whole([]store.Dispatch{{RunID: 1, ExecutorAddress: "http://a"}}), time.Time{})
	rs := &Rescuer{completer: c}
	reads := 0
	read := func(context.Context) ([]store.Run, error) {
		reads++
		if reads == 1 {
			return []store.Run{{ID: 1}, {ID: 2}, {ID: 3}}, nil
		}
		return []store.Run{{ID: 1}, {ID: 3}}, nil // run 2's record was stored meanwhile
	}
	got, err := rs.undispatched(t.Context(), read)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != 3 || reads != 2 {
		t.Errorf("undispatched %v after %d reads, want run 3 after 2", got, reads)
	}

	reads = 0
	none := func(context.Context) ([]store.Run, error) { reads++; return []store.Run{{ID: 1}}, nil }
	if got, err := rs.undispatched(t.Context(), none); err != nil || len(got) != 0 || reads != 1 {
		t.Errorf("undispatched %v, %v after %d reads; want none after 1: the only run's record is held", got, err, reads)
	}
}

// idleCompleter returns a Completer whose writer never drains: what its
// lanes are given waits there.
func idleCompleter() *Completer {
	w := &writer{wg: &inflight{}, now: time.Now, wake: make(chan struct{}, 1), running: true}
	c := &Completer{cfg: &Config{}}
	c.records = newCoalescer(w, "record", batchMax, 0, func([]store.Dispatch) error { return nil })
	c.results = newCoalescer(w, "result", batchMax, 0, func([]store.Result) error { return nil })
	c.deferred = newDeferredRecords(func([]store.Dispatch) {}, clock.NewFake(time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)))
	return c
}
