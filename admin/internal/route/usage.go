package route

import "slices"

// usage is what [LeastFrequentlyUsed] and [LeastRecentlyUsed] remember of one job: a number
// per address of the group as the job last saw it.
type usage struct {
	addresses []string // a copy of the group when last synced
	values    []uint64 // values[i] belongs to addresses[i]: a count (LFU) or a tick (LRU)
	tick      uint64   // LRU: how many picks this job has had
	start     uint64   // where the scan for the smallest value starts, to break ties
}

// sync aligns u with addresses. Addresses that left are forgotten, so one that comes back
// starts anew; an address that joined gets joined(values of the addresses that stayed).
func (u *usage) sync(addresses []string, joined func(kept []uint64) uint64) {
	if slices.Equal(u.addresses, addresses) {
		return
	}
	old := make(map[string]uint64, len(u.addresses))
	for i, a := range u.addresses {
		old[a] = u.values[i]
	}
	values := make([]uint64, len(addresses))
	kept := make([]uint64, 0, len(addresses))
	for i, a := range addresses {
		if v, ok := old[a]; ok {
			values[i] = v
			kept = append(kept, v)
		}
	}
	initial := joined(kept)
	for i, a := range addresses {
		if _, ok := old[a]; !ok {
			values[i] = initial
		}
	}
	u.addresses, u.values = slices.Clone(addresses), values
}

// least returns the index of the smallest value, scanning from u.start so that ties go to
// a different address for different jobs.
func (u *usage) least() int {
	n := len(u.values)
	first := int(u.start % uint64(n)) //nolint:gosec // hashing and counters: wraparound is harmless
	best := first
	for k := 1; k < n; k++ {
		i := first + k
		if i >= n {
			i -= n
		}
		if u.values[i] < u.values[best] {
			best = i
		}
	}
	return best
}
