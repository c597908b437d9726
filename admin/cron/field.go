package cron

import "math/bits"

// A field identifies one of the seven fields of an expression.
type field int

const (
	fieldSecond field = iota
	fieldMinute
	fieldHour
	fieldDayOfMonth
	fieldMonth
	fieldDayOfWeek
	fieldYear
)

// fieldInfo holds what the parser needs to know about a field.
type fieldInfo struct {
	name     string
	min, max int // the values a token may name
	// maxStep is the largest increment Quartz accepts after a single value
	// or '*' ("*/n", "a/n").
	maxStep int
	// modulus is used to wrap ranges whose end is below their start
	// ("22-2" hours, "FRI-MON"); 0 means the field does not wrap.
	modulus int
}

var fields = [...]fieldInfo{
	fieldSecond:     {name: "second", min: 0, max: 59, maxStep: 59, modulus: 60},
	fieldMinute:     {name: "minute", min: 0, max: 59, maxStep: 59, modulus: 60},
	fieldHour:       {name: "hour", min: 0, max: 23, maxStep: 23, modulus: 24},
	fieldDayOfMonth: {name: "day-of-month", min: 1, max: 31, maxStep: 31, modulus: 31},
	fieldMonth:      {name: "month", min: 1, max: 12, maxStep: 12, modulus: 12},
	fieldDayOfWeek:  {name: "day-of-week", min: 1, max: 7, maxStep: 7, modulus: 7},
	fieldYear:       {name: "year", min: minYear, max: maxExplicitYear},
}

// A set is a set of small values (0 to 63): seconds, minutes, hours, days
// of the month, months or days of the week.
type set uint64

func (s *set) add(v int) { *s |= 1 << uint(v) }

// next returns the smallest value in s that is >= v.
func (s set) next(v int) (int, bool) {
	if v < 0 {
		v = 0
	}
	if v >= 64 {
		return 0, false
	}
	m := s >> uint(v) << uint(v)
	if m == 0 {
		return 0, false
	}
	return bits.TrailingZeros64(uint64(m)), true
}

// first returns the smallest value in s. s must not be empty.
func (s set) first() int { return bits.TrailingZeros64(uint64(s)) }

// Year bounds. Explicit year values must lie in [minYear, maxExplicitYear],
// the range Quartz documents. '*' and increments ("2030/5") fill the set up
// to maxYear, as Quartz does.
const (
	minYear         = 1970
	maxExplicitYear = 2099
	// loopLimitYear is Quartz's guard: the search gives up past this year.
	loopLimitYear = 2999
)

// maxYear is Quartz's CronExpression.MAX_YEAR: the current year plus 100,
// fixed when the package is loaded. No fire time lies beyond it.
var maxYear = min(currentYear()+100, loopLimitYear)

const yearWords = (loopLimitYear - minYear + 1 + 63) / 64

// A yearSet is a set of years in [minYear, loopLimitYear].
type yearSet [yearWords]uint64

func (s *yearSet) add(y int) {
	i := y - minYear
	s[i/64] |= 1 << uint(i%64)
}

// next returns the smallest year in s that is >= y.
func (s *yearSet) next(y int) (int, bool) {
	i := max(y-minYear, 0)
	for w := i / 64; w < yearWords; w++ {
		m := s[w]
		if w == i/64 {
			m = m >> uint(i%64) << uint(i%64)
		}
		if m != 0 {
			return minYear + w*64 + bits.TrailingZeros64(m), true
		}
	}
	return 0, false
}
