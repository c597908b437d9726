package cron

import (
	"testing"
	"time"
)

// FuzzParse checks that Parse never panics and that every schedule it
// accepts yields strictly increasing fire times and ends or keeps going
// without hanging.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"* * * * * ?", "0 0/5 * * * ?", "0 15 10 ? * 6#3", "0 0 12 LW * ?",
		"0 0 12 L-3W * ?", "0 0 12 ? * 6L", "0 0 22-2 ? * FRI-MON", "5/15 3-59/5 * 15W NOV-FEB ? 2027/2",
		"0 0 0 29 2 ?", "0 0 0 1 1 ? 2030", "0 0 12 1 * MON", "0 0 12 ? * 0", "*/0 * * * * ?",
		"0 0 12 ? jan-DEC Fri#2 *", "0 0 12 ?X * MON", "L-30W 1 2 3",
	} {
		f.Add(seed, int64(1795000000), uint8(0))
	}
	zones := []*time.Location{time.UTC}
	for _, name := range []string{"America/New_York", "Australia/Lord_Howe", "America/Sao_Paulo"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			f.Fatal(err)
		}
		zones = append(zones, loc)
	}
	f.Fuzz(func(t *testing.T, spec string, start int64, zone uint8) {
		s, err := Parse(spec, zones[int(zone)%len(zones)])
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("Parse(%q) returned %T, want *ParseError", spec, err)
			}
			return
		}
		// Start anywhere between 1970 and 2100.
		at := time.Unix(uint64Mod(start, 4102444800), 0)
		for range 20 {
			next := s.Next(at)
			if next.IsZero() {
				return
			}
			if !next.After(at) {
				t.Fatalf("%q: Next(%v) = %v, not after it", spec, at, next)
			}
			at = next
		}
	})
}

func uint64Mod(v, m int64) int64 {
	v %= m
	if v < 0 {
		v += m
	}
	return v
}
