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
	// Run, when not nil, is the fire's run, stored RUNNING by the scan's
	// claim (triggered at At): it is to be sent, not claimed again. A nil
	// Run is a PENDING run (a retry, a child job's run, or one recovered
	// from the database), which the dispatcher claims first.
	Run *store.Run
	// StopSeq is store.StopSeq read before Run was claimed: a job stopped
	// since (store.StoppedSince) must not get Run sent.
	StopSeq uint64
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
