package schedule

import (
	"container/heap"
	"sync"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Entry is one fire waiting for its instant.
type Entry struct {
	RunID int64
	JobID int64
	// At is the instant to fire: the scheduled instant, or for a misfire
	// fired by FIRE_ONCE_NOW the moment it was found late.
	At          time.Time
	TriggerType carillonv1.TriggerType
	// Claimed says the scan's claim stored the fire's run RUNNING,
	// triggered at At: it is to be sent, not claimed again. Otherwise the
	// run is PENDING (a retry, a child job's run, or one recovered from the
	// database), and the dispatcher claims it first.
	Claimed bool
	// Run, when not nil, is the claimed run itself. The scan keeps it only
	// for a run that is more than its job's plain fire (Plain): for a
	// plain one it keeps ScheduledAt and Param, all its send needs, a
	// fifth of a store.Run, since a burst of 1,000,000 fires waits tens
	// of seconds here. Nil for a pending run.
	Run *store.Run
	// ScheduledAt and Param are a plain claimed run's (Run nil): its
	// scheduled instant and its job's param when claimed.
	ScheduledAt time.Time
	Param       string
	// StopSeq is store.JobStore.StopSeq read before the run was claimed: a job
	// stopped since (store.JobStore.StoppedSince) must not get it sent.
	StopSeq uint64
}

// ClaimedEntry returns the entry of run r, claimed by a scan that read
// stop sequence seq before its claim: a plain run (Plain) is kept as its
// ScheduledAt and Param, any other as a copy, not a pointer into the
// claim's array of runs, which the plain ones let go.
func ClaimedEntry(r *store.Run, seq uint64) Entry {
	e := Entry{RunID: r.ID, JobID: r.JobID, At: r.TriggeredAt, TriggerType: r.TriggerType, Claimed: true, StopSeq: seq}
	if Plain(r) {
		e.ScheduledAt, e.Param = r.ScheduledAt, r.Param
	} else {
		kept := *r
		e.Run = &kept
	}
	return e
}

// Plain reports whether claimed run r is its job's plain fire, as the
// scan claims most: a scheduled fire's one shard, first attempt, with no
// misfire count, concurrency slot, workflow, inputs or rendered param.
// Its Entry keeps no store.Run: ScheduledAt and Param with the job
// rebuild it.
func Plain(r *store.Run) bool {
	return r.TriggerType == carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE && r.ShardIndex == 0 && r.ShardTotal == 1 &&
		r.Attempt == 0 && r.MissedCount == 0 && r.Slot == store.SlotNone && r.WorkflowRunID == 0 &&
		r.Inputs == nil && r.RenderedParam == nil && r.Status == carillonv1.RunStatus_RUN_STATUS_RUNNING
}

// Queue holds read-ahead fires in memory, earliest first, and hands each
// one out at its own instant: it is the scheduler's time wheel, with a heap
// in place of slots so a fire keeps millisecond precision and an idle queue
// costs nothing. It is safe for concurrent use.
type Queue struct {
	mu      sync.Mutex
	h       entryHeap
	at      map[int64]int // entries by At (UnixNano): how large each instant's burst is
	changed chan struct{} // signalled when the earliest entry may have changed
}

// NewQueue returns an empty queue.
func NewQueue() *Queue {
	return &Queue{at: map[int64]int{}, changed: make(chan struct{}, 1)}
}

// Push adds entries.
func (q *Queue) Push(es ...Entry) {
	if len(es) == 0 {
		return
	}
	q.mu.Lock()
	for _, e := range es {
		heap.Push(&q.h, e)
		q.at[e.At.UnixNano()]++
	}
	q.mu.Unlock()
	select {
	case q.changed <- struct{}{}:
	default:
	}
}

// Len returns the number of waiting entries.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.h)
}

// PopDue removes and appends to dst the entries due at or before now, and
// returns dst and the instant of the earliest remaining entry (zero if none).
func (q *Queue) PopDue(dst []Entry, now time.Time) ([]Entry, time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.h) > 0 && !q.h[0].At.After(now) {
		e := heap.Pop(&q.h).(Entry)
		dst = append(dst, e)
		if k := e.At.UnixNano(); q.at[k] > 1 {
			q.at[k]--
		} else {
			delete(q.at, k)
		}
	}
	if len(q.h) == 0 {
		if cap(q.h) > keptEntries {
			q.h = nil // a burst's array, empty until the next one
		}
		return dst, time.Time{}
	}
	return dst, q.h[0].At
}

// keptEntries is the most entries an empty queue, or the fire loop
// between hand-overs, keeps room for (1 MiB): a burst of 100,000 fires
// would otherwise hold 6.4 MB of array in each from one burst to the next.
const keptEntries = 16_384

// Earliest returns the instant of the earliest entry and how many entries
// are due on it; zero and 0 when the queue is empty.
func (q *Queue) Earliest() (time.Time, int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.h) == 0 {
		return time.Time{}, 0
	}
	at := q.h[0].At
	return at, q.at[at.UnixNano()]
}

// Changed is signalled after a Push.
func (q *Queue) Changed() <-chan struct{} { return q.changed }

type entryHeap []Entry

func (h entryHeap) Len() int           { return len(h) }
func (h entryHeap) Less(i, j int) bool { return h[i].At.Before(h[j].At) }
func (h entryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *entryHeap) Push(x any)        { *h = append(*h, x.(Entry)) }
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = Entry{} // its run is the dispatcher's now
	*h = old[:len(old)-1]
	return e
}
