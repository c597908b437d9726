package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
)

// stops remembers which jobs were stopped or deleted, or updated, in
// order, so that a dispatcher holding runs it claimed ahead of their
// instant can tell whether their job was stopped or updated since
// (StopSeq, StoppedSince, UpdatedSince). Only the
// latest stopsKept stops are remembered.
type stops struct {
	mu   sync.Mutex
	seq  uint64
	by   map[int64]uint64 // job ID → sequence number of its latest stop
	upd  map[int64]uint64 // job ID → sequence number of its latest update (UpdatedSince)
	next chan struct{}    // closed at the next stop or update (JobStore.Stopped); nil until asked for
}

// stopsKept bounds the stops remembered: a run is claimed at most a few
// hundred milliseconds ahead, and far fewer jobs are stopped meanwhile.
const stopsKept = 10_000

// mark records that job id was stopped or deleted.
func (s *stops) mark(id int64) {
	s.markIn(&s.by, id)
}

// markUpdate records that job id was updated in what its runs' requests
// carry (runsChanged).
func (s *stops) markUpdate(id int64) {
	s.markIn(&s.upd, id)
}

// markIn records job id in *m under the next sequence number, and wakes
// the waiters of Stopped.
func (s *stops) markIn(m *map[int64]uint64, id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	if *m == nil {
		*m = map[int64]uint64{}
	}
	(*m)[id] = s.seq
	if s.next != nil {
		close(s.next)
		s.next = nil
	}
	if len(*m) > stopsKept {
		for job, seq := range *m {
			if seq+stopsKept/2 < s.seq {
				delete(*m, job)
			}
		}
	}
}

// StopSeq returns the sequence number of the latest job stop, deletion or
// update. Read it before claiming runs; StoppedSince and UpdatedSince then
// say whether a run's job was stopped or updated after the claim.
func (s JobStore) StopSeq() uint64 {
	s.stops.mu.Lock()
	defer s.stops.mu.Unlock()
	return s.stops.seq
}

// StoppedSince reports whether job id was stopped or deleted after StopSeq
// returned seq.
func (s JobStore) StoppedSince(id int64, seq uint64) bool {
	s.stops.mu.Lock()
	defer s.stops.mu.Unlock()
	return s.stops.by[id] > seq
}

// UpdatedSince reports whether job id was updated (JobStore.Update) after
// StopSeq returned seq in what its runs' requests carry to their
// executors (handler, param, block strategy, timeout, script): a run
// claimed before, and sent ahead of its instant, carries the job's
// definition of before the update. An update of anything else (its
// description, alarms, schedule, ...) does not count.
func (s JobStore) UpdatedSince(id int64, seq uint64) bool {
	s.stops.mu.Lock()
	defer s.stops.mu.Unlock()
	return s.stops.upd[id] > seq
}

// Stopped returns a channel closed at the next job stop, deletion or
// update: a dispatcher that sent runs ahead of their instant waits on it,
// to cancel on their executors the runs of a job stopped before the
// instant, and to replace those of a job updated.
func (s JobStore) Stopped() <-chan struct{} {
	s.stops.mu.Lock()
	defer s.stops.mu.Unlock()
	if s.stops.next == nil {
		s.stops.next = make(chan struct{})
	}
	return s.stops.next
}

// Redefine stores the handler and param a run is sent again with: a
// run sent ahead of its instant and replaced because its job was updated
// (KillRequest.replace) carries its job's new ones; rendered is the param
// rendered from a template param (Run.RenderedParam), nil for another.
func (s RunStore) Redefine(ctx context.Context, runID int64, handler, param string, rendered *string) error {
	err := s.execQuery(func(q *dbsqlc.Queries) error {
		return q.RedefineRun(ctx, dbsqlc.RedefineRunParams{Handler: handler, Param: param, RenderedParam: nullString(rendered), ID: runID})
	})
	if err != nil {
		return fmt.Errorf("store: redefine run %d: %w", runID, err)
	}
	return nil
}
