package sdk

import "slices"

// recentRunsMax is how many accepted runs the dispatcher remembers to
// refuse a run it was sent twice.
const recentRunsMax = 1 << 16

// recentRuns is a bounded set of runs (of any database): the last
// recentRunsMax added, the oldest forgotten first. Its zero value is empty
// and ready to use; it is not safe for concurrent use.
type recentRuns struct {
	ring []runKey // in the order added, a circular buffer once full
	next int      // where the next run goes once ring is full
	set  map[runKey]struct{}
}

// has says whether id is one of the runs remembered.
func (r *recentRuns) has(id runKey) bool {
	_, ok := r.set[id]
	return ok
}

// add remembers id, forgetting the oldest run when full.
func (r *recentRuns) add(id runKey) {
	if r.has(id) {
		return
	}
	if r.set == nil {
		r.set = make(map[runKey]struct{})
	}
	r.set[id] = struct{}{}
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
func (r *recentRuns) forget(id runKey) {
	if !r.has(id) {
		return
	}
	delete(r.set, id)
	if i := slices.Index(r.ring, id); i >= 0 {
		r.ring[i] = runKey{}
	}
}
