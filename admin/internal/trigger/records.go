package trigger

import (
	"slices"
	"sync"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/internal/clock"
)

// recordDelay is how long the dispatch of a scheduled fire waits for its
// run's result before it is recorded on its own. Most runs finish within
// it, and their dispatch (executor, trigger message) is then stored by the
// result's write: one row write per run fewer on the fire path. A run still
// running after it shows its executor from then on, long before the
// monitor looks at it.
const recordDelay = time.Second

// recordDelayPerKept lengthens recordDelay by this much for each record
// kept when a call's records are kept: the results of a burst come as fast
// as the writer settles them, so the later ones of a million runs arrive
// many seconds after their instant, and storing their records first would
// double the writes that hold them up. A settle took 21 µs of the admin's
// CPU a run at a million on one minute mark (2 cores), sharing the writer
// with the next mark's claims: 50 s for a million (keptDelay, at most
// recordMax).
const recordDelayPerKept = 50 * time.Microsecond

// recordMax is the longest a record is kept for its result: instead of
// recordDelay while results are backlogged (deferredRecords.hold), and
// at most what keptDelay adds. The results of a burst take their records
// with them as they come, however late, and writing the records on their
// own meanwhile would double the writes that hold the results up (at
// 300,000 runs on one minute mark, the records written on their own took
// two thirds of the writer's time the settles took). A run whose result
// is not coming (its executor died) shows its executor this much later.
const recordMax = time.Minute

// deferredRecords keeps the dispatch records of scheduled fires sent
// successfully, not stored yet, until their run's result takes them
// (Completer.Settle) or recordDelay passes (flush).
// After an admin crash a run whose dispatch record was only kept here is RUNNING
// with no executor: its result, which the executor repeats until the
// admin acknowledges it, settles it as usual; meanwhile the next admin's
// Reconcile asks the executors, finds the one that holds it and records it.
type deferredRecords struct {
	mu    sync.Mutex
	byRun map[int64]*deferredRecord
	queue []deferredAt // in the order kept, so oldest first
	armed bool         // a flush is scheduled
	flush func(ds []store.Dispatch)
	clock clock.Clock
	// hold says that results are backlogged: the scheduled flush then
	// stores only the records kept recordMax or longer. Nil: never.
	hold func() bool
}

// deferredAt is when a run's dispatch record was kept.
type deferredAt struct {
	run int64
	at  time.Time
}

// deferredRecord is a dispatch record kept for its run's result: a
// store.Dispatch of a run sent (none kept failed), in the fields that such
// a record uses, since a burst sent ahead keeps one for each of its runs
// until their results come. The trigger message of a run sent by a call
// is kept in parts until it is stored (record): how the run was routed,
// and what its call said, shared by the call's runs; message is what
// follows them.
type deferredRecord struct {
	RunID           int64
	ExecutorAddress string
	ShardIndex      int32
	ShardTotal      int32
	TimeoutSeconds  int32
	triggeredAt     int64 // store.Dispatch.TriggeredAt in Unix nanoseconds; 0 for the zero time
	message         string
	route           routeNote
	call            *callNote // nil: message is whole
}

// keptRecord returns d, of a run sent, to keep with its route note and
// call (nil: d's trigger message is whole).
func keptRecord(d store.Dispatch, route routeNote, call *callNote) deferredRecord {
	h := deferredRecord{RunID: d.RunID, ExecutorAddress: d.ExecutorAddress, ShardIndex: d.ShardIndex, ShardTotal: d.ShardTotal,
		TimeoutSeconds: d.TimeoutSeconds, message: d.TriggerMessage, route: route, call: call}
	h.setTriggeredAt(d.TriggeredAt)
	return h
}

// setTriggeredAt sets the time the record's run was sent, if not zero.
func (h *deferredRecord) setTriggeredAt(t time.Time) {
	h.triggeredAt = 0
	if !t.IsZero() {
		h.triggeredAt = t.UnixNano()
	}
}

// whole returns ds, records of runs sent whose trigger messages are
// whole, to keep.
func whole(ds []store.Dispatch) []deferredRecord {
	hs := make([]deferredRecord, len(ds))
	for i, d := range ds {
		hs[i] = keptRecord(d, routeNote{}, nil)
	}
	return hs
}

// record returns h's dispatch record to store, its trigger message put
// together.
func (h *deferredRecord) record() store.Dispatch {
	d := store.Dispatch{RunID: h.RunID, ExecutorAddress: h.ExecutorAddress, ShardIndex: h.ShardIndex, ShardTotal: h.ShardTotal,
		TimeoutSeconds: h.TimeoutSeconds, TriggerMessage: h.message}
	if h.triggeredAt != 0 {
		d.TriggeredAt = time.Unix(0, h.triggeredAt)
	}
	if h.call != nil {
		d.TriggerMessage = h.call.message(h.route, &d) + h.message
	}
	return d
}

func newDeferredRecords(flush func([]store.Dispatch), clock clock.Clock) *deferredRecords {
	return &deferredRecords{byRun: map[int64]*deferredRecord{}, flush: flush, clock: clock}
}

// keptDelay is how much later than recordDelay a record is stored while n
// are kept: recordDelayPerKept each, in steps of a quarter of recordDelay
// (the flush's least period), so none for fewer than 5,000, and at most
// recordMax.
func keptDelay(n int) time.Duration {
	return min(time.Duration(n)*recordDelayPerKept, recordMax).Truncate(recordDelay / 4)
}

// keep keeps ds until their results come or recordDelay passes from now,
// or from due for runs sent ahead of their instant due (zero: none): such
// a run's result comes after its instant, not after its send. The delay
// grows with the records kept, ds included (keptDelay). It is
// called before the runs are sent, so that a result cannot come first.
func (d *deferredRecords) keep(ds []deferredRecord, due time.Time) {
	at := d.clock.Now()
	if due.After(at) {
		at = due
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	at = at.Add(keptDelay(len(d.byRun) + len(ds)))
	// The queue stays in the order of at: a burst sent ahead is kept
	// before runs sent later for an earlier instant.
	i := len(d.queue)
	for i > 0 && d.queue[i-1].at.After(at) {
		i--
	}
	kept := make([]deferredAt, len(ds))
	for k := range ds {
		d.byRun[ds[k].RunID] = &ds[k]
		kept[k] = deferredAt{run: ds[k].RunID, at: at}
	}
	d.queue = slices.Insert(d.queue, i, kept...)
	if !d.armed && len(d.queue) > 0 {
		d.armed = true
		d.clock.AfterFunc(recordDelay, d.flushDue)
	}
}

// note adds text to the trigger message of run's record, if it is still
// kept.
func (d *deferredRecords) note(run int64, text string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if h, ok := d.byRun[run]; ok {
		h.message += text
	}
}

// delivered marks run's record, if it is still kept, as a duplicate send
// (see isDuplicate): the run keeps its triggered_at, and its trigger
// message says so.
func (d *deferredRecords) delivered(run int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if h, ok := d.byRun[run]; ok {
		h.setTriggeredAt(time.Time{})
		h.message += duplicateNote
	}
}

// holds says whether run's record is kept.
func (d *deferredRecords) holds(run int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.byRun[run]
	return ok
}

// address returns the executor run's kept record names, or "" when none
// is kept.
func (d *deferredRecords) address(run int64) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if h, ok := d.byRun[run]; ok {
		return h.ExecutorAddress
	}
	return ""
}

// release returns run's record and stops keeping it; ok is false when it
// is not kept (any more).
func (d *deferredRecords) release(run int64) (ds store.Dispatch, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	h, ok := d.byRun[run]
	if ok {
		ds = h.record()
		delete(d.byRun, run)
	}
	return ds, ok
}

// attach returns results with the kept records of their runs attached
// (releasing them), and those records, to keep again should the results
// not be stored. It does not change the caller's results.
func (d *deferredRecords) attach(results []store.Result) ([]store.Result, []store.Dispatch) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.byRun) == 0 {
		return results, nil
	}
	var out []store.Result
	var taken []store.Dispatch
	for i, r := range results {
		h, ok := d.byRun[r.RunID]
		if !ok || r.Dispatch != nil {
			continue
		}
		if out == nil {
			out = make([]store.Result, len(results))
			copy(out, results)
		}
		delete(d.byRun, r.RunID)
		ds := h.record()
		out[i].Dispatch = &ds
		taken = append(taken, ds)
	}
	if out == nil {
		return results, nil
	}
	return out, taken
}

// flushDue stores the records kept for recordDelay or longer (recordMax
// while results are backlogged: hold), and schedules the next flush while
// any are kept.
func (d *deferredRecords) flushDue() {
	if d.hold != nil && d.hold() {
		d.flushBefore(d.clock.Now().Add(-recordMax), true, true)
		return
	}
	d.flushBefore(d.clock.Now().Add(-recordDelay), true, false)
}

// flushAll stores every kept record now.
func (d *deferredRecords) flushAll() {
	d.flushBefore(time.Time{}, false, false)
}

// flushBefore stores the records kept before cutoff (all of them when
// cutoff is zero); rearm says this is the scheduled flush, held that it
// held back records for a backlog of results, to look again soon.
func (d *deferredRecords) flushBefore(cutoff time.Time, rearm, held bool) {
	d.mu.Lock()
	var ds []store.Dispatch
	n := 0
	for _, q := range d.queue {
		if !cutoff.IsZero() && q.at.After(cutoff) {
			break
		}
		n++
		if h, ok := d.byRun[q.run]; ok {
			ds = append(ds, h.record())
			delete(d.byRun, q.run)
		}
	}
	// A burst's queue is not copied at each of its flushes: what was
	// flushed goes with the array, when appends outgrow it or it empties.
	d.queue = d.queue[n:]
	if len(d.queue) == 0 {
		d.queue = nil
	}
	if rearm {
		d.armed = len(d.queue) > 0
		if d.armed { // at most four flushes a second, each of many
			next := max(d.queue[0].at.Sub(cutoff), recordDelay/4)
			if held {
				next = recordDelay / 4
			}
			d.clock.AfterFunc(next, d.flushDue)
		}
	}
	d.mu.Unlock()
	if len(ds) > 0 {
		d.flush(ds)
	}
}
