package route

import (
	"strconv"
	"strings"
)

// listedMax is how many candidates a Pick's Message lists before it abbreviates the rest.
const listedMax = 8

// message builds a Pick's Message, in one allocation when its room was guessed right.
type message struct{ strings.Builder }

// header starts the Message of strategy over addresses, with room for about extra more bytes:
// "NAME over 3 executors (http://a, http://b, http://c): ".
func (m *message) header(strategy string, addresses []string, extra int) {
	size := len(strategy) + len(" over 1234 executors (, … 1234 more): ") + extra
	for i, a := range addresses {
		if i == listedMax {
			break
		}
		size += len(a) + len(", ")
	}
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

// single returns the Pick of the one address a, with m as its Message.
func (m *message) single(a string) Pick {
	return Pick{Addresses: []string{a}, Message: m.String()}
}
