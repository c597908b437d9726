package route

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// listedMax is how many candidates a Pick's Message lists before it abbreviates the rest.
const listedMax = 8

// message builds a Pick's Detail, in one allocation when its room was guessed right, after
// its Head (header).
type message struct {
	strings.Builder
	head string
}

// header sets the Head of the Pick of strategy over addresses, "NAME over 3 executors
// (http://a, http://b, http://c): ", shared by every Pick over the same candidates (heads),
// and gives the Detail room for about extra bytes.
func (m *message) header(strategy string, addresses []string, extra int) {
	m.head = heads.of(strategy, addresses)
	m.Grow(extra)
}

// headsKept is how many Heads heads keeps: more than the groups whose fires a burst routes at
// once, under one strategy each.
const headsKept = 64

// heads keeps the Heads of the latest Picks, so that the fires routed over the same
// candidates share one: a burst of a million fires held a million copies of it.
var heads headCache

// headCache is a small cache of Heads by strategy and listed candidates.
type headCache struct {
	mu      sync.Mutex
	entries [headsKept]headEntry
	next    int // the entry replaced next
}

// headEntry is one Head and what it was made of: the strategy, how many candidates, and
// the ones it lists.
type headEntry struct {
	strategy string
	n        int
	listed   []string
	head     string
}

// of returns the Head of strategy over addresses, from the cache or made and kept.
func (c *headCache) of(strategy string, addresses []string) string {
	listed := addresses[:min(len(addresses), listedMax)]
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.entries {
		e := &c.entries[i]
		if e.n == len(addresses) && e.strategy == strategy && slices.Equal(e.listed, listed) {
			return e.head
		}
	}
	e := &c.entries[c.next]
	c.next = (c.next + 1) % headsKept
	*e = headEntry{strategy: strategy, n: len(addresses), listed: slices.Clone(listed), head: makeHead(strategy, addresses)}
	return e.head
}

// makeHead returns the Head of strategy over addresses.
func makeHead(strategy string, addresses []string) string {
	size := len(strategy) + len(" over 1234 executors (, … 1234 more): ")
	for i, a := range addresses {
		if i == listedMax {
			break
		}
		size += len(a) + len(", ")
	}
	var m message
	m.Grow(size)
	m.WriteString(strategy)
	m.WriteString(" over ")
	m.int(int64(len(addresses)))
	if len(addresses) == 1 {
		m.WriteString(" executor (")
	} else {
		m.WriteString(" executors (")
	}
	for i, a := range addresses {
		if i == listedMax {
			m.WriteString(", … ")
			m.int(int64(len(addresses) - listedMax))
			m.WriteString(" more")
			break
		}
		if i > 0 {
			m.WriteString(", ")
		}
		m.WriteString(a)
	}
	m.WriteString("): ")
	return m.String()
}

// int writes n in decimal.
func (m *message) int(n int64) {
	var digits [20]byte
	m.Write(strconv.AppendInt(digits[:0], n, 10))
}

// uint writes n in decimal.
func (m *message) uint(n uint64) {
	var digits [20]byte
	m.Write(strconv.AppendUint(digits[:0], n, 10))
}

// chose writes "chose a".
func (m *message) chose(a string) {
	m.WriteString("chose ")
	m.WriteString(a)
}

// pick returns the Pick of addresses, with m as its Head and Detail.
func (m *message) pick(addresses []string) Pick {
	return Pick{Addresses: addresses, Head: m.head, Detail: m.String()}
}

// single returns the Pick of the one address a, with m as its Head and Detail.
func (m *message) single(a string) Pick { return m.pick([]string{a}) }
