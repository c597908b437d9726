package route

import (
	"context"
	"slices"
	"sync/atomic"
)

// LeastFrequentlyUsed returns the LEAST_FREQUENTLY_USED strategy: per job, the address the
// job has been routed to least often, counted since the address joined the group (or since
// the job was last forgotten, see [WithIdleTimeout]). Ties go to the first address in a
// rotation that starts at a different place for each new job, so with a stable group a job
// goes round its executors in turn and new jobs do not all begin on the first one.
//
// An executor that joins starts at the smallest count of those already there, not at zero
// (which would send it every fire of the job until it caught up) nor at a random count (as
// xxl-job does). An executor that leaves is forgotten: if it comes back, it joins anew.
func LeastFrequentlyUsed(opts ...Option) Strategy {
	return &leastFrequentlyUsed{jobs: newTable[usage](newOptions(opts))}
}

type leastFrequentlyUsed struct {
	jobs  *table[usage]
	start atomic.Uint64 // where the next new job's tie-breaking rotation starts
}

func (*leastFrequentlyUsed) String() string { return "LEAST_FREQUENTLY_USED" }

// Pick implements [Strategy].
func (s *leastFrequentlyUsed) Pick(_ context.Context, jobID int64, addresses []string) (Pick, error) {
	if len(addresses) == 0 {
		return Pick{}, noAddresses(s.String())
	}
	shard, u, fresh := s.jobs.lock(jobID)
	if fresh {
		u.start = s.start.Add(1) - 1
	}
	u.sync(addresses, minOrZero)
	i := u.least()
	count := u.values[i]
	u.values[i]++
	a := u.addresses[i]
	shard.mu.Unlock()

	var m message
	m.header(s.String(), addresses, len(a)+80)
	m.chose(a)
	m.WriteString(", used ")
	m.uint(count)
	if count == 1 {
		m.WriteString(" time by job ")
	} else {
		m.WriteString(" times by job ")
	}
	m.int(jobID)
	m.WriteString(" before, the fewest")
	return m.single(a), nil
}

// minOrZero returns the smallest of values, or 0 if there is none.
func minOrZero(values []uint64) uint64 {
	if len(values) == 0 {
		return 0
	}
	return slices.Min(values)
}
