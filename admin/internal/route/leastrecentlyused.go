package route

import (
	"context"
	"sync/atomic"
)

// LeastRecentlyUsed returns the LEAST_RECENTLY_USED strategy: per job, the address the job
// has not been routed to for the longest, counted in the job's own fires. An address the job
// has never used (new to the group, or the job is new or was forgotten, see
// [WithIdleTimeout]) counts as least recent; ties go to the first address in a rotation that
// starts at a different place for each new job. With a stable group a job thus goes round
// its executors in turn, and an executor that joins gets the job's next fire once, then
// takes its turn (xxl-job instead made it wait a whole round).
func LeastRecentlyUsed(opts ...Option) Strategy {
	return &leastRecentlyUsed{jobs: newTable[usage](newOptions(opts))}
}

type leastRecentlyUsed struct {
	jobs  *table[usage]
	start atomic.Uint64 // where the next new job's tie-breaking rotation starts
}

func (*leastRecentlyUsed) String() string { return "LEAST_RECENTLY_USED" }

// Pick implements [Strategy].
func (s *leastRecentlyUsed) Pick(_ context.Context, jobID int64, addresses []string) (Pick, error) {
	if len(addresses) == 0 {
		return Pick{}, noAddresses(s.String())
	}
	shard, u, fresh := s.jobs.lock(jobID)
	if fresh {
		u.start = s.start.Add(1) - 1
	}
	u.sync(addresses, never)
	i := u.least()
	u.tick++
	lastUsed := u.values[i]
	u.values[i] = u.tick
	a := u.addresses[i]
	ago := u.tick - lastUsed
	shard.mu.Unlock()

	var m message
	m.header(s.String(), addresses, len(a)+80)
	m.chose(a)
	if lastUsed == 0 {
		m.WriteString(", not used by job ")
		m.int(jobID)
		m.WriteString(" before")
	} else {
		m.WriteString(", last used by job ")
		m.int(jobID)
		m.WriteString(" ")
		m.uint(ago)
		m.WriteString(" fires ago, the longest")
	}
	return m.single(a), nil
}

// never is the tick of an address the job has not used.
func never([]uint64) uint64 { return 0 }
