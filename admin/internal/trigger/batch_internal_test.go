package trigger

import (
	"context"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/internal/clock"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestBatchTimeout: a dispatch batch's deadline counts from its last
// instant, so a burst handed over long before it is not cancelled before
// it is sent.
func TestBatchTimeout(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	const dt = 10 * time.Second
	for _, c := range []struct {
		ats  []time.Duration // the runs' instants after now
		want time.Duration
	}{
		{[]time.Duration{0}, 25 * time.Second},
		{[]time.Duration{-time.Second}, 25 * time.Second}, // late: from now
		{[]time.Duration{100 * time.Millisecond}, 25*time.Second + 100*time.Millisecond},
		{[]time.Duration{time.Second, 30 * time.Second, 2 * time.Second}, 55 * time.Second},
	} {
		cs := make([]fire, len(c.ats))
		for i, a := range c.ats {
			cs[i].at = now.Add(a)
		}
		if got := batchTimeout(now, cs, dt); got != c.want {
			t.Errorf("batchTimeout(instants %v) = %v, want %v", c.ats, got, c.want)
		}
	}
}

// TestSlotWait: a batch handed over ahead of its instant waits for a slot
// until that instant, then a dispatch timeout, or the misfire threshold
// when its fires are all scheduled, and counts toward the pool's overload
// only once its instant is within a dispatch timeout.
func TestSlotWait(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	const dt, threshold = 10 * time.Second, 5 * time.Second
	retry := carillonv1.TriggerType_TRIGGER_TYPE_RETRY
	for _, c := range []struct {
		name      string
		ats       []time.Duration // the runs' instants after now; nil: manual
		other     bool            // the first run is a retry, not a scheduled fire
		want      time.Duration
		wantAhead bool
	}{
		{"manual", nil, false, dt, false},
		{"due now", []time.Duration{0}, false, threshold, false},
		{"late", []time.Duration{-time.Second}, false, threshold - time.Second, false},
		{"overdue", []time.Duration{-6 * time.Second}, false, 0, false},
		{"a second ahead", []time.Duration{time.Second}, false, threshold + time.Second, false},
		{"a burst handed over 25 s ahead", []time.Duration{25 * time.Second, 26 * time.Second}, false, threshold + 25*time.Second, true},
		{"the earliest instant counts", []time.Duration{56 * time.Second, 5 * time.Second}, false, threshold + 5*time.Second, false},
		{"a retry, late", []time.Duration{-6 * time.Second, 0}, true, dt, false},
		{"a retry, a second ahead", []time.Duration{time.Second}, true, dt + time.Second, false},
	} {
		fs := []fire{{}} // a manual fire's instant is zero
		if c.ats != nil {
			fs = make([]fire, len(c.ats))
			for i, a := range c.ats {
				fs[i].at, fs[i].triggerType = now.Add(a), carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE
			}
			if c.other {
				fs[0].triggerType = retry
			}
		}
		got, ahead := slotWait(now, fs, dt, threshold)
		if got != c.want || ahead != c.wantAhead {
			t.Errorf("%s: slotWait = %v, ahead %v; want %v, %v", c.name, got, ahead, c.want, c.wantAhead)
		}
	}
	// A threshold longer than the dispatch timeout: the timeout bounds.
	fs := []fire{{at: now, triggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE}}
	if got, _ := slotWait(now, fs, dt, time.Minute); got != dt {
		t.Errorf("threshold 1m: slotWait = %v, want %v", got, dt)
	}
}

// TestPoolAhead: a pool whose slots are taken and whose waiting line is
// full refuses a batch due now at once, but a batch handed over ahead
// waits for a slot and gets the one let go.
func TestPoolAhead(t *testing.T) {
	t.Parallel()
	p := newPool("fast", 1)
	p.maxWaiting = 1
	if !p.acquire(time.Second, false) {
		t.Fatal("the first acquire of an empty pool failed")
	}
	p.waiting.Add(1) // one batch due now waits already: the line is full
	if p.acquire(time.Hour, false) {
		t.Fatal("a batch due now got a slot of an overloaded pool")
	}
	got := make(chan bool)
	go func() { got <- p.acquire(time.Hour, true) }()
	p.release()
	if !<-got {
		t.Fatal("a batch handed over ahead was refused by an overloaded pool")
	}
}

// TestFireWaiting checks that a fire sent ahead lets its job's definition
// go and keeps its group, also when a re-route makes it wait twice.
func TestFireWaiting(t *testing.T) {
	t.Parallel()
	f := &fire{jobID: 3, job: &store.JobDefinition{ID: 3, GroupID: 7}}
	for range 2 {
		f.waiting()
		if f.job != nil || f.group != 7 {
			t.Fatalf("waiting fire: job %v, group %d; want no job, group 7", f.job, f.group)
		}
	}
}

// TestCallNoteMessage checks the trigger message of a run of a call, as
// fmt.Sprintf wrote it before it was appended: a lone run, and a shard.
func TestCallNoteMessage(t *testing.T) {
	t.Parallel()
	n := &callNote{runs: 256}
	took := " took 12 ms"
	n.took.Store(&took)
	for _, tc := range []struct {
		d    store.Dispatch
		want string
	}{
		{store.Dispatch{ExecutorAddress: "http://a"}, "executors registered: ROUND_ROBIN …: chose http://a; a call of 256 runs took 12 ms"},
		{store.Dispatch{ExecutorAddress: "http://a", Failed: true}, "executors registered: ROUND_ROBIN …: chose http://a; a call of 256 runs took 12 ms; failed"},
		{store.Dispatch{ExecutorAddress: "http://b", ShardIndex: 12, ShardTotal: 300},
			"executors registered: ROUND_ROBIN …: chose http://a; shard 12 of 300 (0-based) sent to http://b in a call of 256 runs took 12 ms"},
	} {
		if got := n.message(routeNote{head: "executors registered: ROUND_ROBIN …: ", tail: "chose http://a"}, &tc.d); got != tc.want {
			t.Errorf("message(%+v) = %q; want %q", tc.d, got, tc.want)
		}
	}
}

// TestResume: fires that let their batch's slot go while they waited for
// their instant wait to take it back no longer than the misfire threshold
// after that instant, whatever time their batch has left: past it, they
// go on without the slot (and drop records the overdue ones as misfires).
// A slot free is taken however late; a manual fire waits as its batch
// does.
func TestResume(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	clk := clock.NewFake(now)
	d := &Dispatcher{cfg: &Config{Clock: clk, MisfireThreshold: 5 * time.Second}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour) // the batch's time: not reached
	defer cancel()
	p := newPool("fast", 1)
	other := &batchSlot{p: p}
	other.work(ctx) // another batch holds the one slot

	in := &instant{d: d, slot: &batchSlot{p: p}}
	resumed := make(chan struct{})
	go func() {
		in.resume(ctx, now.Add(-5*time.Second-time.Millisecond))
		close(resumed)
	}()
	select {
	case <-resumed:
	case <-time.After(time.Minute): // it returns at once; this bounds a failure
		t.Fatal("an overdue instant's resume waited for its batch's time")
	}
	if in.slot.taken || in.slot.busy != 1 {
		t.Fatalf("an overdue instant's resume: taken %v, busy %d; want working without the slot", in.slot.taken, in.slot.busy)
	}
	in.slot.idle()

	other.idle() // the slot is free: taken, however late
	in.resume(ctx, now.Add(-time.Minute))
	if !in.slot.taken {
		t.Fatal("an overdue instant did not take a free slot")
	}
	in.slot.idle()

	// A manual fire waits for the slot until it is let go.
	other.work(ctx)
	manual := &instant{d: d, slot: &batchSlot{p: p}}
	done := make(chan struct{})
	go func() {
		manual.resume(ctx, time.Time{})
		close(done)
	}()
	other.idle()
	<-done
	if !manual.slot.taken {
		t.Fatal("a manual fire went on without the slot let go")
	}
}
