package route

import (
	"context"
	"math/rand/v2"
	"sync"
)

// Random returns the RANDOM strategy: a uniformly random address. The strategy draws from
// src, which it then owns and locks (do not use src elsewhere); a seeded source such as
// rand.NewPCG(1, 2) makes the choices repeatable in tests. If src is nil, it uses the
// math/rand/v2 top-level functions, which need no lock.
func Random(src rand.Source) Strategy {
	if src == nil {
		return &random{}
	}
	return &random{rand: rand.New(src)}
}

type random struct {
	mu   sync.Mutex
	rand *rand.Rand // nil: the global source
}

func (*random) String() string { return "RANDOM" }

// Pick implements [Strategy].
func (s *random) Pick(_ context.Context, _ int64, addresses []string) (Pick, error) {
	if len(addresses) == 0 {
		return Pick{}, noAddresses(s.String())
	}
	var i int
	if s.rand == nil {
		i = rand.IntN(len(addresses))
	} else {
		s.mu.Lock()
		i = s.rand.IntN(len(addresses))
		s.mu.Unlock()
	}
	a := addresses[i]
	var m message
	m.header(s.String(), addresses, len("chose ")+len(a))
	m.chose(a)
	return m.single(a), nil
}
