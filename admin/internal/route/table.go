package route

import (
	"sync"
	"time"
)

// tableShards is how many independently locked parts a table has, so that fires of
// different jobs rarely wait for each other.
const tableShards = 16

// table holds per-job state for a stateful strategy and forgets jobs that go unused.
//
// Each shard keeps two generations of entries. A job's entry lives in the current one while
// it is used; when a generation is older than the idle timeout, the next access to the shard
// makes it the old generation and drops the one before. An entry used again from the old
// generation moves back to the current one, so a job routed at least once per idle timeout
// is never forgotten, and one that is not is dropped after between one and two idle
// timeouts. No goroutine and no per-entry timestamps are needed.
type table[T any] struct {
	idle   time.Duration
	now    func() time.Time
	shards [tableShards]tableShard[T]
}

type tableShard[T any] struct {
	mu    sync.Mutex
	since time.Time // when cur became the current generation; zero before the first access
	cur   map[int64]*T
	old   map[int64]*T
}

func newTable[T any](o options) *table[T] {
	return &table[T]{idle: o.idle, now: o.now}
}

// lock locks jobID's shard and returns it with jobID's entry, creating the entry (fresh is
// true) if the job is new or was forgotten. The caller must unlock shard.mu.
func (t *table[T]) lock(jobID int64) (shard *tableShard[T], entry *T, fresh bool) {
	now := t.now()
	shard = &t.shards[uint64(jobID)%tableShards] //nolint:gosec // hashing and counters: wraparound is harmless
	shard.mu.Lock()
	shard.rotate(now, t.idle)
	if entry, ok := shard.cur[jobID]; ok {
		return shard, entry, false
	}
	if entry, ok := shard.old[jobID]; ok {
		delete(shard.old, jobID)
		shard.cur[jobID] = entry
		return shard, entry, false
	}
	entry = new(T)
	shard.cur[jobID] = entry
	return shard, entry, true
}

// rotate starts a new generation if the current one is older than idle.
func (s *tableShard[T]) rotate(now time.Time, idle time.Duration) {
	if s.cur == nil {
		s.since, s.cur = now, make(map[int64]*T)
		return
	}
	age := now.Sub(s.since)
	if age < idle {
		return // including a clock that went backwards
	}
	if age < 2*idle {
		// Every entry of cur was used after since, and is kept for another generation.
		s.old = s.cur
	} else {
		// The last access was before since+idle, so every entry has been idle for more than idle.
		s.old = nil
	}
	s.since, s.cur = now, make(map[int64]*T)
}

// size returns how many jobs the table remembers, for tests.
func (t *table[T]) size() int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		n += len(s.cur) + len(s.old)
		s.mu.Unlock()
	}
	return n
}
