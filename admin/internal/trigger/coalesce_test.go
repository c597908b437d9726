package trigger

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestWriter: groups added while a write runs wait for it and then go in
// one batch with the others of their lane that queued meanwhile, up to max
// items, without splitting a group; the first lane goes before the second;
// a failed batch is retried group by group, so only the bad group sees the
// error.
func TestWriter(t *testing.T) {
	var wg inflight
	w := &writer{wg: &wg, now: time.Now, wake: make(chan struct{}, 1)}
	h := newHeldWrites()
	high := newCoalescer(w, "test", 4, 0, h.record("high", nil))
	low := newCoalescer(w, "test", 4, 0, h.record("low", nil))

	first := low.add([]int{0})
	<-h.entered
	// The writer is held in the first write: these queue behind it.
	l1 := low.add([]int{1, 2})
	h1 := high.add([]int{3, 4, 5, 6, 7}) // more than max: a batch of its own
	h2 := high.add([]int{8})
	h3 := high.add([]int{13})
	close(h.release)
	for i, done := range []<-chan error{first, l1, h1, h2} {
		if err := <-done; err != nil {
			t.Errorf("group %d: %v, want nil", i, err)
		}
	}
	if err := <-h3; !errors.Is(err, errBadItem) {
		t.Errorf("bad group: %v, want %v", err, errBadItem)
	}
	wg.Wait()

	want := []string{
		"low[0]",
		"high[3 4 5 6 7]",
		"high[8 13]", // fails: each group again on its own
		"high[8]",
		"high[13]",
		"low[1 2]", // the low lane waited for the high one
	}
	if diff := cmp.Diff(want, h.calls); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}

// TestWriterLinger: a lingering lane that wrote lately holds its first
// group until the linger has passed, for others to join it, while a lane
// without linger is written at once; max items waiting end the linger
// early; an idle lingering lane (nothing written for lingerIdle) writes at
// once.
func TestWriterLinger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var wg inflight
		w := &writer{wg: &wg, now: time.Now, wake: make(chan struct{}, 1)}
		var mu sync.Mutex
		var calls []string
		start := time.Now()
		record := func(lane string) func([]int) error {
			return func(items []int) error {
				mu.Lock()
				defer mu.Unlock()
				calls = append(calls, fmt.Sprint(lane, items, " at ", time.Since(start)))
				return nil
			}
		}
		now := newCoalescer(w, "test", 4, 0, record("now"))
		slow := newCoalescer(w, "test", 4, 10*time.Millisecond, record("slow"))

		slow.add([]int{0}) // idle: written at once
		synctest.Wait()
		slow.add([]int{1})
		time.Sleep(4 * time.Millisecond)
		now.add([]int{2}) // written at once, while slow's group lingers
		slow.add([]int{3})
		synctest.Wait()
		time.Sleep(6 * time.Millisecond) // slow's first group is 10 ms old
		synctest.Wait()
		slow.add([]int{4, 5})
		slow.add([]int{6, 7}) // 4 items: max, written without lingering
		synctest.Wait()
		time.Sleep(lingerIdle) // slow is idle again
		slow.add([]int{8})
		synctest.Wait()
		wg.Wait()

		want := []string{"slow[0] at 0s", "now[2] at 4ms", "slow[1 3] at 10ms", "slow[4 5 6 7] at 10ms", "slow[8] at 110ms"}
		if diff := cmp.Diff(want, calls); diff != "" {
			t.Errorf("writes (-want +got):\n%s", diff)
		}
	})
}

// TestWriterNoStarvation: a lower lane's group that has waited starveAfter
// goes ahead of a higher lane that never runs dry.
func TestWriterNoStarvation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var wg inflight
		w := &writer{wg: &wg, now: time.Now, wake: make(chan struct{}, 1)}
		start := time.Now()
		var high *coalescer[int]
		stop := false
		high = newCoalescer(w, "test", 1, 0, func([]int) error {
			time.Sleep(10 * time.Millisecond) // a busy writer
			if !stop && time.Since(start) < time.Second {
				high.add([]int{1}) // always more claims waiting (for a second, so a failure ends)
			}
			return nil
		})
		var lowAt time.Duration
		low := newCoalescer(w, "test", 1, 0, func([]int) error {
			lowAt = time.Since(start)
			stop = true
			return nil
		})
		high.add([]int{1})
		if err := <-low.add([]int{2}); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if lowAt < starveAfter || lowAt > starveAfter+20*time.Millisecond {
			t.Errorf("low lane written after %v, want about %v (starveAfter)", lowAt, starveAfter)
		}
	})
}

// TestWriterStarvedTakeTurns: of the lower lanes starved, the one written
// least lately goes first, so a backlog in one (a burst's dispatch
// records) does not starve the lane after it (the results).
func TestWriterStarvedTakeTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var wg inflight
		w := &writer{wg: &wg, now: time.Now, wake: make(chan struct{}, 1)}
		start := time.Now()
		stop := false
		var high *coalescer[int]
		high = newCoalescer(w, "test", 1, 0, func([]int) error {
			time.Sleep(10 * time.Millisecond) // a busy writer
			if !stop && time.Since(start) < time.Second {
				high.add([]int{1}) // always more waiting (for a second, so a failure ends)
			}
			return nil
		})
		backlog := newCoalescer(w, "test", 1, 0, func([]int) error {
			time.Sleep(10 * time.Millisecond)
			return nil
		})
		var lastAt time.Duration
		last := newCoalescer(w, "test", 1, 0, func([]int) error {
			lastAt = time.Since(start)
			stop = true
			return nil
		})
		high.add([]int{1})
		for range 50 {
			backlog.add([]int{1}) // 500 ms of writes, all waiting before the last lane's
		}
		if err := <-last.add([]int{2}); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if lastAt > 100*time.Millisecond {
			t.Errorf("the last lane was written after %v, want within a few writes of starveAfter (%v)", lastAt, starveAfter)
		}
	})
}

// TestWithdraw: a group still queued is taken out of its lane, and its
// items are never written; a group a write took cannot be.
func TestWithdraw(t *testing.T) {
	var wg inflight
	w := &writer{wg: &wg, now: time.Now, wake: make(chan struct{}, 1)}
	var mu sync.Mutex
	var written []int
	entered, release := make(chan struct{}), make(chan struct{})
	lane := newCoalescer(w, "lane", 1, 0, func(items []int) error {
		if items[0] == 1 {
			close(entered)
			<-release // hold the first write while the second queues
		}
		mu.Lock()
		written = append(written, items...)
		mu.Unlock()
		return nil
	})
	first := lane.add([]int{1})
	<-entered
	second := lane.add([]int{2})
	third := lane.add([]int{3})
	if lane.withdraw(first) {
		t.Error("withdrew the group a write had taken")
	}
	if !lane.withdraw(second) {
		t.Error("could not withdraw a queued group")
	}
	if lane.withdraw(second) {
		t.Error("withdrew a group twice")
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-third; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	select {
	case err := <-second:
		t.Errorf("the withdrawn group's outcome came: %v", err)
	default:
	}
	if want := []int{1, 3}; !slices.Equal(written, want) {
		t.Errorf("written %v, want %v", written, want)
	}
}

// TestWriterSplit: a splitting lane writes a caller's items beyond max in
// parts of at most max, another lane's write going between them, and the
// caller hears once every part was written: the first error of a part
// that failed, the other parts written all the same.
func TestWriterSplit(t *testing.T) {
	var wg inflight
	w := &writer{wg: &wg, now: time.Now, wake: make(chan struct{}, 1)}
	h := newHeldWrites()
	high := newCoalescer(w, "high", 4, 0, h.record("high", nil))
	low := newCoalescer(w, "low", 3, 0, h.record("low", func(items []int) {
		if items[0] == 1 {
			high.add([]int{9}) // a claim arriving while the parts are written
		}
	}))
	low.split = true

	first := low.add([]int{0})
	<-h.entered
	if low.backlogged(time.Hour) {
		t.Error("backlogged with less than max waiting, ever")
	}
	whole := low.add([]int{1, 2, 3, 4, 5, 6, 7})
	if !low.backlogged(0) {
		t.Error("not backlogged with more than max waiting")
	}
	failed := low.add([]int{11, 12, 13, 14})
	close(h.release)
	for i, done := range []<-chan error{first, whole} {
		if err := <-done; err != nil {
			t.Errorf("caller %d: %v, want nil", i, err)
		}
	}
	if err := <-failed; !errors.Is(err, errBadItem) {
		t.Errorf("caller with a bad part: %v, want %v", err, errBadItem)
	}
	wg.Wait()
	want := []string{
		"low[0]",
		"low[1 2 3]",
		"high[9]", // between the parts
		"low[4 5 6]",
		"low[7]", // the last part of one caller, alone: the next caller's parts are full
		"low[11 12 13]",
		"low[14]",
	}
	if diff := cmp.Diff(want, h.calls); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}

// errBadItem is the error of a write holding item 13 (heldWrites).
var errBadItem = errors.New("bad item")

// heldWrites records the writes of a writer's lanes: the first write,
// of item 0, holds until release is closed, so that the groups added
// meanwhile queue behind it; each write is noted in calls as its lane
// and items, and fails with errBadItem when it holds item 13.
type heldWrites struct {
	calls            []string // only the writer's one goroutine appends
	entered, release chan struct{}
}

func newHeldWrites() *heldWrites {
	return &heldWrites{entered: make(chan struct{}), release: make(chan struct{})}
}

// record returns lane's write; also, if not nil, sees each write's items
// once noted.
func (h *heldWrites) record(lane string, also func([]int)) func([]int) error {
	return func(items []int) error {
		if items[0] == 0 {
			close(h.entered)
			<-h.release // hold the first write while others queue
		}
		h.calls = append(h.calls, fmt.Sprint(lane, items))
		if also != nil {
			also(items)
		}
		if slices.Contains(items, 13) {
			return errBadItem
		}
		return nil
	}
}
