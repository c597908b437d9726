package route_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/carillonhq/carillon/admin/internal/route"
)

// names are the strategy names route.New accepts.
var names = []string{
	"FIRST", "LAST", "ROUND_ROBIN", "RANDOM", "CONSISTENT_HASH",
	"LEAST_FREQUENTLY_USED", "LEAST_RECENTLY_USED", "FAILOVER", "BUSYOVER",
	"SHARDING_BROADCAST",
}

// letters returns the addresses http://a … up to n of them, sorted.
func letters(n int) []string {
	addresses := make([]string, n)
	for i := range addresses {
		addresses[i] = fmt.Sprintf("http://%c", 'a'+i)
	}
	return addresses
}

// hosts returns n sorted addresses http://10.0.0.1:9999 … that sort as numbered.
func hosts(n int) []string {
	addresses := make([]string, n)
	for i := range addresses {
		addresses[i] = fmt.Sprintf("http://10.0.%d.%d:9999", i/100, 100+i%100)
	}
	return addresses
}

// pickOne runs s.Pick and returns its single address, failing the test on an error or
// another number of addresses.
func pickOne(t testing.TB, s route.Strategy, jobID int64, addresses []string) string {
	t.Helper()
	p, err := s.Pick(context.Background(), jobID, addresses)
	if err != nil {
		t.Fatalf("%v.Pick(%d, %q): %v", s, jobID, addresses, err)
	}
	if len(p.Addresses) != 1 {
		t.Fatalf("%v.Pick(%d, %q).Addresses = %q, want one address", s, jobID, addresses, p.Addresses)
	}
	return p.Addresses[0]
}

// picks returns the addresses of n picks of jobID.
func picks(t testing.TB, s route.Strategy, jobID int64, addresses []string, n int) []string {
	t.Helper()
	got := make([]string, n)
	for i := range got {
		got[i] = pickOne(t, s, jobID, addresses)
	}
	return got
}

// inMemoryProber finds every executor alive and idle without asking it, for tests that are
// not about probing.
type inMemoryProber struct{}

func (inMemoryProber) Beat(context.Context, string) error { return nil }
func (inMemoryProber) IdleBeat(context.Context, string, int64) (bool, string, error) {
	return true, "", nil
}

func TestNew(t *testing.T) {
	t.Parallel()

	for _, name := range names {
		s, err := route.New(name, inMemoryProber{})
		if err != nil {
			t.Errorf("New(%q): %v", name, err)
			continue
		}
		if got := fmt.Sprint(s); got != name {
			t.Errorf("New(%q) prints as %q, want %q", name, got, name)
		}
		p, err := s.Pick(t.Context(), 1, letters(3))
		if err != nil {
			t.Errorf("New(%q).Pick: %v", name, err)
		}
		if !strings.HasPrefix(p.Message(), name+" over 3 executors (http://a, http://b, http://c): ") {
			t.Errorf("New(%q).Pick().Message() = %q, want it to start with the strategy and candidates", name, p.Message())
		}
	}

	t.Run("UnknownName", func(t *testing.T) {
		t.Parallel()

		for _, name := range []string{"", "first", "ROUTE_STRATEGY_FIRST", "ROUND"} {
			s, err := route.New(name, inMemoryProber{})
			if err == nil || s != nil {
				t.Errorf("New(%q) = %v, %v; want an error", name, s, err)
				continue
			}
			if want := "route: unknown strategy"; !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "ROUND_ROBIN") {
				t.Errorf("New(%q) error = %q, want %q and the valid names", name, err, want)
			}
		}
	})

	t.Run("ProbingNeedsProber", func(t *testing.T) {
		t.Parallel()

		for _, name := range []string{"FAILOVER", "BUSYOVER"} {
			if s, err := route.New(name, nil); err == nil {
				t.Errorf("New(%q, nil) = %v, nil; want an error", name, s)
			}
		}
		if _, err := route.New("FIRST", nil); err != nil {
			t.Errorf("New(FIRST, nil): %v", err)
		}
	})
}

func TestNoAddresses(t *testing.T) {
	t.Parallel()

	for _, name := range names {
		s, err := route.New(name, inMemoryProber{})
		if err != nil {
			t.Fatal(err)
		}
		for _, addresses := range [][]string{nil, {}} {
			p, err := s.Pick(t.Context(), 1, addresses)
			if !errors.Is(err, route.ErrNoExecutor) {
				t.Errorf("%s.Pick(%#v) error = %v, want ErrNoExecutor", name, addresses, err)
				continue
			}
			if want := name + " routing: no live executor among 0 addresses"; err.Error() != want {
				t.Errorf("%s.Pick(%#v) error = %q, want %q", name, addresses, err, want)
			}
			if p.Addresses != nil {
				t.Errorf("%s.Pick(%#v).Addresses = %q, want none", name, addresses, p.Addresses)
			}
		}
	}
}

func TestFirstLast(t *testing.T) {
	t.Parallel()

	for _, test := range []struct {
		addresses   []string
		first, last string
	}{
		{[]string{"http://a"}, "http://a", "http://a"},
		{[]string{"http://a", "http://b"}, "http://a", "http://b"},
		{letters(10), "http://a", "http://j"},
	} {
		for job := range int64(3) {
			if got := pickOne(t, route.First(), job, test.addresses); got != test.first {
				t.Errorf("First().Pick(%d, %q) = %q, want %q", job, test.addresses, got, test.first)
			}
			if got := pickOne(t, route.Last(), job, test.addresses); got != test.last {
				t.Errorf("Last().Pick(%d, %q) = %q, want %q", job, test.addresses, got, test.last)
			}
		}
	}

	p, err := route.First().Pick(t.Context(), 1, letters(10))
	if err != nil {
		t.Fatal(err)
	}
	if want := "FIRST over 10 executors (http://a, http://b, http://c, http://d, http://e, http://f, http://g, http://h, … 2 more): chose http://a"; p.Message() != want {
		t.Errorf("First().Pick().Message() = %q, want %q", p.Message(), want)
	}
}

func TestPickKeepsNoAlias(t *testing.T) {
	t.Parallel()

	for _, name := range names {
		s, err := route.New(name, inMemoryProber{})
		if err != nil {
			t.Fatal(err)
		}
		addresses := letters(3)
		p, err := s.Pick(t.Context(), 1, addresses)
		if err != nil {
			t.Fatal(err)
		}
		before := fmt.Sprint(p.Addresses)
		for i := range addresses {
			addresses[i] = "http://changed"
		}
		if after := fmt.Sprint(p.Addresses); after != before {
			t.Errorf("%s: Pick.Addresses changed from %s to %s when the caller reused its slice", name, before, after)
		}
	}
}

// TestPickHeadShared: the Picks over the same candidates share one Head
// string, even from different slices, so that a burst's waiting fires hold
// one copy of it; other candidates, or another count of them, get their own.
func TestPickHeadShared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := route.RoundRobin()
	addrs := func(n int, last string) []string {
		as := make([]string, n)
		for i := range as {
			as[i] = fmt.Sprintf("http://10.0.0.%d:9999", i+1)
		}
		as[n-1] = last
		return as
	}
	pick := func(job int64, as []string) route.Pick {
		t.Helper()
		p, err := s.Pick(ctx, job, as)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	same := func(a, b string) bool { return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b) }
	a := pick(1, addrs(3, "http://10.0.0.3:9999"))
	b := pick(2, addrs(3, "http://10.0.0.3:9999"))
	if !same(a.Head, b.Head) {
		t.Errorf("two Picks over equal candidates hold two Heads: %q, %q", a.Head, b.Head)
	}
	if c := pick(3, addrs(3, "http://10.0.0.30:9999")); same(a.Head, c.Head) || c.Head == a.Head {
		t.Errorf("Picks over other candidates share a Head: %q", c.Head)
	}
	// The Head lists 8 candidates: a ninth that differs changes nothing
	// in it; a tenth (the count) does.
	nine := pick(4, addrs(9, "http://10.0.0.9:9999"))
	if other := pick(5, addrs(9, "http://10.0.0.99:9999")); !same(nine.Head, other.Head) {
		t.Errorf("Heads over the same 8 listed of 9: %q, %q", nine.Head, other.Head)
	}
	if ten := pick(6, addrs(10, "http://10.0.0.10:9999")); !strings.Contains(ten.Head, "over 10 executors") || !strings.Contains(nine.Head, "over 9 executors") {
		t.Errorf("Heads of 9 and 10 candidates: %q, %q", nine.Head, ten.Head)
	}
	if want := a.Head + a.Detail; a.Message() != want || !strings.HasPrefix(want, "ROUND_ROBIN over 3 executors (") {
		t.Errorf("Message = %q, want %q", a.Message(), want)
	}
}
