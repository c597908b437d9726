package cron

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

var monthNames = map[string]int{
	"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6,
	"JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12,
}

var dayNames = map[string]int{
	"SUN": 1, "MON": 2, "TUE": 3, "WED": 4, "THU": 5, "FRI": 6, "SAT": 7,
}

// Parse parses a Quartz cron expression,
// "second minute hour day-of-month month day-of-week [year]", whose fire
// times are computed in loc. A nil loc means UTC (not time.Local), so that
// a schedule never depends on the host's zone by accident.
//
// Fields are separated by spaces or tabs. Names and letters are
// case-insensitive. The grammar is described in the package documentation;
// every error is a *[ParseError].
func Parse(spec string, loc *time.Location) (*Schedule, error) {
	if loc == nil {
		loc = time.UTC
	}
	tokens := strings.FieldsFunc(spec, func(r rune) bool { return r == ' ' || r == '\t' })
	if len(tokens) < 6 || len(tokens) > 7 {
		return nil, &ParseError{Token: spec, Reason: fmt.Sprintf(
			"expected 6 or 7 fields (second minute hour day-of-month month day-of-week [year]), found %d",
			len(tokens))}
	}
	s := &Schedule{spec: spec, loc: loc, zone: newZone(loc)}
	if len(tokens) == 6 {
		tokens = append(tokens, "*")
	}
	var noSpec [len(fields)]bool
	for f, tok := range tokens {
		p := fieldParser{s: s, f: field(f), token: tok}
		if err := p.parse(); err != nil {
			return nil, err
		}
		noSpec[f] = p.noSpec
	}
	dom, dow := noSpec[fieldDayOfMonth], noSpec[fieldDayOfWeek]
	switch {
	case dom && dow:
		return nil, &ParseError{Field: "day-of-week", Token: tokens[fieldDayOfWeek],
			Reason: `day-of-month is "?" too; exactly one of day-of-month and day-of-week must be "?"`}
	case !dom && !dow:
		return nil, &ParseError{Field: "day-of-week", Token: tokens[fieldDayOfWeek], Reason: fmt.Sprintf(
			`cannot be combined with day-of-month %q; exactly one of day-of-month and day-of-week must be "?"`,
			tokens[fieldDayOfMonth])}
	}
	s.byDayOfWeek = dom
	return s, nil
}

// fieldParser parses one field into its Schedule.
type fieldParser struct {
	s      *Schedule
	f      field
	token  string // the whole field as written
	item   string // the list element being parsed, as written
	noSpec bool   // the field is "?"
}

func (p *fieldParser) errorf(format string, args ...any) error {
	return &ParseError{Field: fields[p.f].name, Token: p.item, Reason: fmt.Sprintf(format, args...)}
}

func (p *fieldParser) parse() error {
	items := strings.Split(p.token, ",")
	for _, item := range items {
		p.item = item
		if item == "" {
			p.item = p.token
			return p.errorf("empty element in list")
		}
		u := strings.ToUpper(item)
		if len(items) > 1 && p.mustStandAlone(u) {
			return p.errorf("cannot be combined with other values in a list")
		}
		if err := p.parseItem(u); err != nil {
			return err
		}
	}
	return nil
}

// mustStandAlone reports whether the item u may only be the whole field:
// '?' and the day forms L, W and #, whose meaning Quartz defines only for a
// single value.
func (p *fieldParser) mustStandAlone(u string) bool {
	switch p.f {
	case fieldDayOfMonth:
		return strings.ContainsAny(u, "?LW")
	case fieldDayOfWeek:
		return strings.ContainsAny(u, "?L#")
	}
	return u == "?"
}

// parseItem parses one list element u (upper-cased).
func (p *fieldParser) parseItem(u string) error {
	info := fields[p.f]
	switch {
	case u == "?":
		if p.f != fieldDayOfMonth && p.f != fieldDayOfWeek {
			return p.errorf(`"?" is allowed only in day-of-month and day-of-week`)
		}
		p.noSpec = true
		return nil
	case u == "*":
		return p.addRange(info.min, -1, 1)
	case u[0] == '*' || u[0] == '/':
		rest := u[1:]
		if u[0] == '*' {
			if !strings.HasPrefix(rest, "/") {
				return p.errorf(`"*" may only be followed by "/" and an increment`)
			}
			rest = rest[1:]
		}
		step, err := p.step(rest, true)
		if err != nil {
			return err
		}
		return p.addRange(info.min, -1, step)
	case u[0] == 'L':
		return p.parseLast(u)
	case isLetter(u[0]):
		return p.parseName(u)
	case isDigit(u[0]):
		return p.parseNumber(u)
	}
	return p.errorf("unexpected character %q", u[0])
}

// parseLast parses the items that start with 'L': "L", "LW", "L-n" and
// "L-nW" in day-of-month, "L" (Saturday) in day-of-week.
func (p *fieldParser) parseLast(u string) error {
	switch p.f {
	case fieldDayOfWeek:
		if u != "L" {
			return p.errorf(`"L" alone means Saturday; use "nL" for the last day n of the month`)
		}
		p.s.dow.add(7)
		return nil
	case fieldDayOfMonth:
	default:
		return p.errorf(`"L" is allowed only in day-of-month and day-of-week`)
	}
	rest := u[1:]
	if strings.HasPrefix(rest, "-") {
		digits, tail := splitDigits(rest[1:])
		if digits == "" {
			return p.errorf(`"L-" must be followed by an offset in days`)
		}
		n, err := strconv.Atoi(digits)
		if err != nil || n > 30 {
			return p.errorf("offset from the last day must be between 0 and 30")
		}
		p.s.lastDayOffset = n
		rest = tail
	}
	switch rest {
	case "":
	case "W":
		// Quartz never returns for "L-nW" once L-n falls before the 1st of
		// a month, as L-28 does in February.
		if p.s.lastDayOffset > 27 {
			return p.errorf(`offset from the last day must be between 0 and 27 with "W"`)
		}
		p.s.nearestWeekday = true
	default:
		return p.errorf(`expected "L", "LW", "L-n" or "L-nW"`)
	}
	p.s.lastDayOfMonth = true
	return nil
}

// parseName parses items that use month or day names: "JAN", "JAN-MAR",
// "MON", "MON-FRI", "FRI#3", "FRIL".
func (p *fieldParser) parseName(u string) error {
	var names map[string]int
	switch p.f {
	case fieldMonth:
		names = monthNames
	case fieldDayOfWeek:
		names = dayNames
	case fieldDayOfMonth:
		return p.errorf(`expected a day, "L", "LW", "L-n", "L-nW", "nW" or "?"`)
	default:
		return p.errorf("names are allowed only in month and day-of-week")
	}
	start, ok := lookupName(names, u)
	if !ok {
		return p.errorf("unknown %s name %q", fields[p.f].name, prefix(u, 3))
	}
	rest := u[3:]
	switch {
	case rest == "":
		p.addValue(start)
		return nil
	case rest[0] == '-':
		end, ok := lookupName(names, rest[1:])
		if !ok || len(rest) != 4 {
			return p.errorf("a range of names must end with a name")
		}
		return p.addRange(start, end, 1)
	case p.f == fieldDayOfWeek:
		return p.parseDaySuffix(start, rest)
	}
	return p.errorf("unexpected %q after the month name", rest)
}

// parseNumber parses items that start with a digit: "5", "1-5", "5/15",
// "1-30/5", and the day forms "15W", "6L" and "6#3".
func (p *fieldParser) parseNumber(u string) error {
	digits, rest := splitDigits(u)
	v, err := p.value(digits)
	if err != nil {
		return err
	}
	switch {
	case rest == "":
		p.addValue(v)
		return nil
	case rest[0] == '-':
		endDigits, tail := splitDigits(rest[1:])
		if endDigits == "" {
			return p.errorf(`"-" must be followed by the end of the range`)
		}
		end, err := p.value(endDigits)
		if err != nil {
			return err
		}
		step := 1
		if tail != "" {
			if tail[0] != '/' {
				return p.errorf("unexpected %q after the range", tail)
			}
			if step, err = p.step(tail[1:], false); err != nil {
				return err
			}
		}
		return p.addRange(v, end, step)
	case rest[0] == '/':
		step, err := p.step(rest[1:], true)
		if err != nil {
			return err
		}
		return p.addRange(v, -1, step)
	case rest == "W":
		if p.f != fieldDayOfMonth {
			return p.errorf(`"W" is allowed only in day-of-month`)
		}
		p.s.nearestWeekday = true
		p.addValue(v)
		return nil
	case p.f == fieldDayOfWeek:
		return p.parseDaySuffix(v, rest)
	case rest[0] == 'L' || rest[0] == '#':
		return p.errorf("%q is allowed only in day-of-week", rest[:1])
	}
	return p.errorf("unexpected %q after %s", rest, digits)
}

// parseDaySuffix parses the "L" of "6L" and the "#3" of "6#3" after day of
// week v.
func (p *fieldParser) parseDaySuffix(v int, rest string) error {
	switch {
	case rest == "L":
		p.s.lastDayOfWeek = true
		p.addValue(v)
		return nil
	case rest[0] == '#':
		n, err := strconv.Atoi(rest[1:])
		if err != nil || !allDigits(rest[1:]) || n < 1 || n > 5 {
			return p.errorf(`"#" must be followed by a number between 1 and 5`)
		}
		p.s.nthDayOfWeek = n
		p.addValue(v)
		return nil
	}
	return p.errorf(`unexpected %q; expected "-", "L" or "#n"`, rest)
}

// value parses a decimal value and checks it against the field's bounds.
func (p *fieldParser) value(digits string) (int, error) {
	info := fields[p.f]
	v, err := strconv.Atoi(digits)
	if err != nil || v < info.min || v > info.max {
		return 0, p.errorf("values must be between %d and %d", info.min, info.max)
	}
	return v, nil
}

// step parses the increment after '/'. Quartz limits it to the size of the
// field after '*' or a single value, but not after a range.
func (p *fieldParser) step(digits string, limited bool) (int, error) {
	info := fields[p.f]
	n, err := strconv.Atoi(digits)
	if err != nil || !allDigits(digits) {
		return 0, p.errorf(`"/" must be followed by an increment`)
	}
	if n < 1 {
		return 0, p.errorf("increment must be at least 1")
	}
	if limited && info.maxStep > 0 && n > info.maxStep {
		return 0, p.errorf("increment must be between 1 and %d", info.maxStep)
	}
	return n, nil
}

func (p *fieldParser) addValue(v int) {
	if p.f == fieldYear {
		p.s.years.add(v)
		return
	}
	p.fieldSet().add(v)
}

// addRange adds start, start+step, ... up to end (-1: the field's maximum;
// for years, maxYear). A range whose end is below its start wraps around
// the field ("22-2" hours), as Quartz's addToSet does; year ranges cannot
// wrap.
func (p *fieldParser) addRange(start, end, step int) error {
	info := fields[p.f]
	if p.f == fieldYear {
		if end == -1 {
			end = maxYear
		}
		if end < start {
			return p.errorf("a year range must not end before it starts")
		}
		for y := start; y <= min(end, maxYear); y += step {
			p.s.years.add(y)
		}
		return nil
	}
	if end == -1 {
		end = info.max
	}
	if end < start {
		end += info.modulus
	}
	s := p.fieldSet()
	for i := start; i <= end; i += step {
		v := i % info.modulus
		if v == 0 && info.min == 1 {
			v = info.modulus
		}
		s.add(v)
	}
	return nil
}

func (p *fieldParser) fieldSet() *set {
	switch p.f {
	case fieldSecond:
		return &p.s.second
	case fieldMinute:
		return &p.s.minute
	case fieldHour:
		return &p.s.hour
	case fieldDayOfMonth:
		return &p.s.dom
	case fieldMonth:
		return &p.s.month
	case fieldDayOfWeek:
		return &p.s.dow
	}
	panic("cron: no value set for the year field")
}

func lookupName(names map[string]int, u string) (int, bool) {
	if len(u) < 3 {
		return 0, false
	}
	v, ok := names[u[:3]]
	return v, ok
}

// splitDigits splits s into its leading decimal digits and the rest.
func splitDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

func allDigits(s string) bool {
	d, rest := splitDigits(s)
	return d != "" && rest == ""
}

func prefix(s string, n int) string { return s[:min(n, len(s))] }

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'A' <= c && c <= 'Z' }
