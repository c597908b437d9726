package cron

import (
	"errors"
	"testing"
	"time"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		spec  string
		field string
		token string
		msg   string
	}{
		{"0 0 12 ? * 0", "day-of-week", "0", `cron: day-of-week "0": values must be between 1 and 7`},
		{"0 0 12 ? * 1-8", "day-of-week", "1-8", `cron: day-of-week "1-8": values must be between 1 and 7`},
		{"60 * * * * ?", "second", "60", `cron: second "60": values must be between 0 and 59`},
		{"0 0,60 * * * ?", "minute", "60", `cron: minute "60": values must be between 0 and 59`},
		{"0 0 24 * * ?", "hour", "24", `cron: hour "24": values must be between 0 and 23`},
		{"0 0 12 32 * ?", "day-of-month", "32", `cron: day-of-month "32": values must be between 1 and 31`},
		{"0 0 12 1 13 ?", "month", "13", `cron: month "13": values must be between 1 and 12`},
		{"0 0 12 1 1 ? 2100", "year", "2100", `cron: year "2100": values must be between 1970 and 2099`},
		{"0 0 12 1 1 ? 2030-2020", "year", "2030-2020", `cron: year "2030-2020": a year range must not end before it starts`},
		{"0 0 12 * *", "", "0 0 12 * *", `cron: "0 0 12 * *": expected 6 or 7 fields (second minute hour day-of-month month day-of-week [year]), found 5`},
		{"0 0 12 * * ? 2030 x", "", "0 0 12 * * ? 2030 x", `cron: "0 0 12 * * ? 2030 x": expected 6 or 7 fields (second minute hour day-of-month month day-of-week [year]), found 8`},
		{"0 0 12 1 * MON", "day-of-week", "MON", `cron: day-of-week "MON": cannot be combined with day-of-month "1"; exactly one of day-of-month and day-of-week must be "?"`},
		{"0 0 12 * * *", "day-of-week", "*", `cron: day-of-week "*": cannot be combined with day-of-month "*"; exactly one of day-of-month and day-of-week must be "?"`},
		{"0 0 12 ? * ?", "day-of-week", "?", `cron: day-of-week "?": day-of-month is "?" too; exactly one of day-of-month and day-of-week must be "?"`},
		{"0 ? 12 * * ?", "minute", "?", `cron: minute "?": "?" is allowed only in day-of-month and day-of-week`},
		{"0 0 12 ? * FOO", "day-of-week", "FOO", `cron: day-of-week "FOO": unknown day-of-week name "FOO"`},
		{"0 0 12 1 jam ?", "month", "jam", `cron: month "jam": unknown month name "JAM"`},
		{"0 0 JAN 1 * ?", "hour", "JAN", `cron: hour "JAN": names are allowed only in month and day-of-week`},
		{"0 0 12 ? * MON#6", "day-of-week", "MON#6", `cron: day-of-week "MON#6": "#" must be followed by a number between 1 and 5`},
		{"0 0 12 ? * 6#3,2", "day-of-week", "6#3", `cron: day-of-week "6#3": cannot be combined with other values in a list`},
		{"0 0 12 15W,20 * ?", "day-of-month", "15W", `cron: day-of-month "15W": cannot be combined with other values in a list`},
		{"0 0 12 L-31 * ?", "day-of-month", "L-31", `cron: day-of-month "L-31": offset from the last day must be between 0 and 30`},
		{"0 0 12 LX * ?", "day-of-month", "LX", `cron: day-of-month "LX": expected "L", "LW", "L-n" or "L-nW"`},
		{"0 0 12 5L * ?", "day-of-month", "5L", `cron: day-of-month "5L": "L" is allowed only in day-of-week`},
		{"0 0 12 ? * 5W", "day-of-week", "5W", `cron: day-of-week "5W": "W" is allowed only in day-of-month`},
		{"L 0 12 * * ?", "second", "L", `cron: second "L": "L" is allowed only in day-of-month and day-of-week`},
		{"*/60 * * * * ?", "second", "*/60", `cron: second "*/60": increment must be between 1 and 59`},
		{"*/0 * * * * ?", "second", "*/0", `cron: second "*/0": increment must be at least 1`},
		{"5/ * * * * ?", "second", "5/", `cron: second "5/": "/" must be followed by an increment`},
		{"1- * * * * ?", "second", "1-", `cron: second "1-": "-" must be followed by the end of the range`},
		{"1,,2 * * * * ?", "second", "1,,2", `cron: second "1,,2": empty element in list`},
		{"5X * * * * ?", "second", "5X", `cron: second "5X": unexpected "X" after 5`},
		{"0 0 12 ? * MON-FRI/2", "day-of-week", "MON-FRI/2", `cron: day-of-week "MON-FRI/2": a range of names must end with a name`},
		{"0 0 12 ? * LW", "day-of-week", "LW", `cron: day-of-week "LW": "L" alone means Saturday; use "nL" for the last day n of the month`},
		{"-1 * * * * ?", "second", "-1", `cron: second "-1": unexpected character '-'`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			_, err := Parse(tt.spec, time.UTC)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error = %v, want a *ParseError", tt.spec, err)
			}
			if pe.Field != tt.field || pe.Token != tt.token {
				t.Errorf("Parse(%q): Field %q, Token %q; want %q, %q", tt.spec, pe.Field, pe.Token, tt.field, tt.token)
			}
			if got := err.Error(); got != tt.msg {
				t.Errorf("Parse(%q) error:\n got %s\nwant %s", tt.spec, got, tt.msg)
			}
		})
	}
}

// TestParseQuartzHangs covers expressions that Quartz accepts and then
// loops on forever, so they cannot be in the golden files: Parse rejects
// them.
func TestParseQuartzHangs(t *testing.T) {
	for _, spec := range []string{"0 0 12 0W * ?", "0 0 12 L-28W * ?", "0 0 12 L-30W * ?"} {
		if _, err := Parse(spec, time.UTC); err == nil {
			t.Errorf("Parse(%q) succeeded", spec)
		}
	}
}

func TestScheduleAccessors(t *testing.T) {
	const spec = " 0 0 12 ? * mon-fri "
	s, err := Parse(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.String() != spec {
		t.Errorf("String() = %q, want %q", s.String(), spec)
	}
	if s.Location() != time.UTC {
		t.Errorf("Location() = %v, want UTC for a nil location", s.Location())
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	s, err = Parse(spec, ny)
	if err != nil {
		t.Fatal(err)
	}
	if s.Location() != ny {
		t.Errorf("Location() = %v, want %v", s.Location(), ny)
	}
	got := s.Next(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)) // a Friday, 07:00 in New York
	if want := time.Date(2026, 11, 27, 12, 0, 0, 0, ny); !got.Equal(want) || got.Location() != ny {
		t.Errorf("Next = %v, want %v", got, want)
	}
}

// TestNextEnds checks that schedules without further fire times end with
// the zero time instead of searching forever.
func TestNextEnds(t *testing.T) {
	from := time.Date(2026, 11, 22, 8, 7, 16, 0, time.UTC)
	for _, spec := range []string{
		"0 0 0 1 1 ? 2025",
		"0 0 0 30 2 ?",
		"0 0 0 31 4,6,9,11 ?",
		"0 0 0 ? 2 1#5 2026-2027",
		"0 0 0 L-30 2 ?",
	} {
		s, err := Parse(spec, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Next(from); !got.IsZero() {
			t.Errorf("%q: Next = %v, want the zero time", spec, got)
		}
	}
}
