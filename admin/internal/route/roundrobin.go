package route

import (
	"context"
	"slices"
	"sync/atomic"
)

// RoundRobin returns the ROUND_ROBIN strategy: each job cycles through the group on its own,
// taking the address that follows, in sorted order, the one it used last, and wrapping
// around after the last. When executors join or leave, the job carries on from where it was:
// none is skipped or used twice in a row because the group changed size.
//
// A job with no remembered state (new, or forgotten after the idle timeout, see
// [WithIdleTimeout]) starts at the address after the one the previous new job started at,
// so the first fires of many jobs spread evenly over the group. Unlike xxl-job, the start is
// not random and the state of active jobs is never reset.
func RoundRobin(opts ...Option) Strategy {
	return &roundRobin{jobs: newTable[string](newOptions(opts))}
}

type roundRobin struct {
	jobs  *table[string] // per job, the address it used last
	start atomic.Uint64  // where the next new job starts
}

func (*roundRobin) String() string { return "ROUND_ROBIN" }

// Pick implements [Strategy].
func (s *roundRobin) Pick(_ context.Context, jobID int64, addresses []string) (Pick, error) {
	if len(addresses) == 0 {
		return Pick{}, noAddresses(s.String())
	}
	shard, last, fresh := s.jobs.lock(jobID)
	previous := *last
	var i int
	if fresh {
		i = int((s.start.Add(1) - 1) % uint64(len(addresses))) //nolint:gosec // hashing and counters: wraparound is harmless
	} else {
		var found bool
		i, found = slices.BinarySearch(addresses, previous)
		if found {
			i++
		}
		if i == len(addresses) {
			i = 0
		}
	}
	*last = addresses[i]
	shard.mu.Unlock()

	a := addresses[i]
	var m message
	m.header(s.String(), addresses, 2*len(a)+64)
	m.chose(a)
	if fresh {
		m.WriteString(", the start for job ")
		m.int(jobID)
		m.WriteString(" (no recent pick of it to follow)")
	} else {
		m.WriteString(", the next after ")
		m.WriteString(previous)
		m.WriteString(" for job ")
		m.int(jobID)
	}
	return m.single(a), nil
}
