package store

import "sync"

// stops remembers which jobs were stopped or deleted, in order, so that a
// dispatcher holding runs it claimed ahead of their instant can tell
// whether their job was stopped since (StopSeq, StoppedSince). Only the
// latest stopsKept stops are remembered.
type stops struct {
	mu   sync.Mutex
	seq  uint64
	by   map[int64]uint64 // job ID → sequence number of its latest stop
	next chan struct{}    // closed at the next stop (Stopped); nil until asked for
}

// stopsKept bounds the stops remembered: a run is claimed at most a few
// hundred milliseconds ahead, and far fewer jobs are stopped meanwhile.
const stopsKept = 10_000

// mark records that job id was stopped or deleted.
func (s *stops) mark(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	if s.by == nil {
		s.by = map[int64]uint64{}
	}
	s.by[id] = s.seq
	if s.next != nil {
		close(s.next)
		s.next = nil
	}
	if len(s.by) > stopsKept {
		for job, seq := range s.by {
			if seq+stopsKept/2 < s.seq {
				delete(s.by, job)
			}
		}
	}
}

// StopSeq returns the sequence number of the latest job stop or deletion.
// Read it before claiming runs; StoppedSince then says whether a run's job
// was stopped after the claim.
func (s *Store) StopSeq() uint64 {
	s.stops.mu.Lock()
	defer s.stops.mu.Unlock()
	return s.stops.seq
}

// StoppedSince reports whether job id was stopped or deleted after StopSeq
// returned seq.
func (s *Store) StoppedSince(id int64, seq uint64) bool {
	s.stops.mu.Lock()
	defer s.stops.mu.Unlock()
	return s.stops.by[id] > seq
}

// Stopped returns a channel closed at the next job stop or deletion: a
// dispatcher that sent runs ahead of their instant waits on it, to cancel
// on their executors the runs of a job stopped before the instant.
func (s *Store) Stopped() <-chan struct{} {
	s.stops.mu.Lock()
	defer s.stops.mu.Unlock()
	if s.stops.next == nil {
		s.stops.next = make(chan struct{})
	}
	return s.stops.next
}
