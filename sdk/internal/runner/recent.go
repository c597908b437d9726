package runner

import (
	"slices"

	"github.com/carillonhq/carillon/sdk/internal/report"
)

// recentRunsMax is how many accepted runs the dispatcher remembers to
// refuse a run it was sent twice.
const recentRunsMax = 1 << 16

// runOrigin says how the executor knows that it accepted a run.
type runOrigin uint8

const (
	// acceptedHere: this process accepted the run.
	acceptedHere runOrigin = iota + 1
	// spooledBefore: the run's result was in the spool when this process
	// started: an earlier process ended it.
	spooledBefore
	// loggedBefore: the run's log was on disk when this process started:
	// an earlier process accepted it, and may or may not have ended it.
	loggedBefore
)

// recentRuns is a bounded set of runs (of any database), each with its
// origin: the last recentRunsMax added, the oldest forgotten first. Its
// zero value is empty and ready to use; it is not safe for concurrent use.
type recentRuns struct {
	ring []report.Key // in the order added, a circular buffer once full
	next int          // where the next run goes once ring is full
	set  map[report.Key]runOrigin
}

// has says whether id is one of the runs remembered.
func (r *recentRuns) has(id report.Key) bool {
	_, ok := r.set[id]
	return ok
}

// origin returns how id was added; 0 when it is not remembered.
func (r *recentRuns) origin(id report.Key) runOrigin {
	return r.set[id]
}

// add remembers id, as accepted by this process, forgetting the oldest run
// when full.
func (r *recentRuns) add(id report.Key) { r.addFrom(id, acceptedHere) }

// addFrom remembers id with its origin, forgetting the oldest run when
// full. A run remembered already keeps the origin it has.
func (r *recentRuns) addFrom(id report.Key, origin runOrigin) {
	if r.has(id) {
		return
	}
	if r.set == nil {
		r.set = make(map[report.Key]runOrigin)
	}
	r.set[id] = origin
	if len(r.ring) < recentRunsMax {
		r.ring = append(r.ring, id)
		return
	}
	delete(r.set, r.ring[r.next])
	r.ring[r.next] = id
	r.next = (r.next + 1) % recentRunsMax
}

// forget drops id, if remembered: a run dropped to be sent again
// (KillRequest.replace) is accepted again. Its place in ring is cleared
// (the zero runKey is never a run), so that forgetting that place later
// does not forget id added again since. It scans ring: it is rare.
func (r *recentRuns) forget(id report.Key) {
	if !r.has(id) {
		return
	}
	delete(r.set, id)
	if i := slices.Index(r.ring, id); i >= 0 {
		r.ring[i] = report.Key{}
	}
}
