package route

import "context"

// First returns the FIRST strategy: the first address, in the group's sorted order.
func First() Strategy { return first{} }

type first struct{}

func (first) String() string { return "FIRST" }

// Pick implements [Strategy].
func (s first) Pick(_ context.Context, _ int64, addresses []string) (Pick, error) {
	if len(addresses) == 0 {
		return Pick{}, noAddresses(s.String())
	}
	a := addresses[0]
	var m message
	m.header(s.String(), addresses, len("chose ")+len(a))
	m.chose(a)
	return m.single(a), nil
}
