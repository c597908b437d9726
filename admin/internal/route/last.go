package route

import "context"

// Last returns the LAST strategy: the last address, in the group's sorted order.
func Last() Strategy { return last{} }

type last struct{}

func (last) String() string { return "LAST" }

// Pick implements [Strategy].
func (s last) Pick(_ context.Context, _ int64, addresses []string) (Pick, error) {
	if len(addresses) == 0 {
		return Pick{}, noAddresses(s.String())
	}
	a := addresses[len(addresses)-1]
	var m message
	m.header(s.String(), addresses, len("chose ")+len(a))
	m.chose(a)
	return m.single(a), nil
}
