package route

import (
	"cmp"
	"context"
	"hash/maphash"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

const (
	// virtualNodes is how many points each address has on the ring, as in xxl-job. More
	// points even out the executors' shares of the jobs: with 100, each of a group of 10
	// gets between about 0.8 and 1.2 times its fair share.
	virtualNodes = 100
	// ringsMax is how many rings (one per distinct address list) a strategy keeps built.
	ringsMax = 64
)

// ConsistentHash returns the CONSISTENT_HASH strategy: each address owns 100 points on a
// ring of 64-bit hashes, and a job goes to the owner of the first point at or after the job's
// own place, wrapping around. A job therefore sticks to one executor while the group stays
// the same, in every admin process and across restarts: the hashes are fixed (the points of
// an address are the 64-bit FNV-1a hashes of "address#0" … "address#99", a job's place is
// its ID plus 0x9e3779b97f4a7c15, and both go through the splitmix64 finalizer). The order
// of the addresses does not matter. When an executor leaves, only the jobs it had move; when
// one joins a group of n, only about 1/(n+1) of the jobs move, all of them to it.
//
// Rings are built on first use of an address list and cached, up to 64 lists (groups),
// evicting the least recently used.
func ConsistentHash() Strategy {
	return &consistentHash{seed: maphash.MakeSeed(), rings: make(map[uint64]*ring)}
}

type consistentHash struct {
	seed  maphash.Seed // for cache keys only; ring positions use fixed hashes
	tick  atomic.Int64 // a logical clock for evicting the least recently used ring
	mu    sync.RWMutex
	rings map[uint64]*ring // by the maphash of the address list
}

// ring is the hash ring of one address list.
type ring struct {
	addresses []string // the list it was built from, in the order given
	points    []uint64 // sorted
	owners    []int32  // owners[i] indexes the address of points[i]
	used      atomic.Int64
}

func (*consistentHash) String() string { return "CONSISTENT_HASH" }

// Pick implements [Strategy].
func (s *consistentHash) Pick(_ context.Context, jobID int64, addresses []string) (Pick, error) {
	if len(addresses) == 0 {
		return Pick{}, noAddresses(s.String())
	}
	r := s.ring(addresses)
	i, _ := slices.BinarySearch(r.points, jobPoint(jobID))
	if i == len(r.points) {
		i = 0
	}
	a := r.addresses[r.owners[i]]

	var m message
	m.header(s.String(), addresses, len(a)+80)
	m.chose(a)
	m.WriteString(", owner of job ")
	m.int(jobID)
	m.WriteString("'s place on a ring of ")
	m.int(int64(len(r.points)))
	m.WriteString(" virtual nodes")
	return m.single(a), nil
}

// key returns the cache key of addresses.
func (s *consistentHash) key(addresses []string) uint64 {
	var h maphash.Hash
	h.SetSeed(s.seed)
	for _, a := range addresses {
		h.WriteString(a)
		h.WriteByte(0)
	}
	return h.Sum64()
}

// ring returns the ring of addresses, built and cached if needed.
func (s *consistentHash) ring(addresses []string) *ring {
	key := s.key(addresses)

	s.mu.RLock()
	r := s.rings[key]
	s.mu.RUnlock()
	if r == nil || !slices.Equal(r.addresses, addresses) {
		r = newRing(addresses)
		s.mu.Lock()
		if _, replace := s.rings[key]; !replace && len(s.rings) >= ringsMax {
			s.evict()
		}
		s.rings[key] = r
		s.mu.Unlock()
	}
	r.used.Store(s.tick.Add(1))
	return r
}

// evict drops the least recently used ring. s.mu must be held for writing.
func (s *consistentHash) evict() {
	var oldest uint64
	least := int64(-1)
	for key, r := range s.rings {
		if used := r.used.Load(); least < 0 || used < least {
			oldest, least = key, used
		}
	}
	delete(s.rings, oldest)
}

// newRing builds the ring of addresses.
func newRing(addresses []string) *ring {
	type node struct {
		point uint64
		owner int32
	}
	nodes := make([]node, 0, len(addresses)*virtualNodes)
	for owner, a := range addresses {
		h := fnv1a(fnvOffset, a)
		for i := range virtualNodes {
			var digits [20]byte
			p := fnv1a(h, "#")
			p = fnv1a(p, strconv.AppendInt(digits[:0], int64(i), 10))
			nodes = append(nodes, node{mix64(p), int32(owner)})
		}
	}
	// Ties (two addresses on one point) go to the smaller address, whatever the list's order,
	// so that removing the other one moves no job.
	slices.SortFunc(nodes, func(x, y node) int {
		return cmp.Or(cmp.Compare(x.point, y.point), cmp.Compare(addresses[x.owner], addresses[y.owner]))
	})
	r := &ring{
		addresses: slices.Clone(addresses),
		points:    make([]uint64, len(nodes)),
		owners:    make([]int32, len(nodes)),
	}
	for i, n := range nodes {
		r.points[i], r.owners[i] = n.point, n.owner
	}
	return r
}

// jobPoint is the place of jobID on the ring.
func jobPoint(jobID int64) uint64 {
	return mix64(uint64(jobID) + 0x9e3779b97f4a7c15) //nolint:gosec // hashing and counters: wraparound is harmless
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnv1a continues the 64-bit FNV-1a hash h over s.
func fnv1a[S ~string | ~[]byte](h uint64, s S) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// mix64 is the finalizer of splitmix64: a bijection that spreads every input bit over the
// whole output.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
