package cron

import (
	"testing"
	"time"
)

func BenchmarkNext(b *testing.B) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		b.Fatal(err)
	}
	for _, bm := range []struct {
		name, spec string
		loc        *time.Location
	}{
		{"every-second", "* * * * * ?", time.UTC},
		{"every-5-minutes", "0 0/5 * * * ?", time.UTC},
		{"third-friday", "0 15 10 ? * 6#3", time.UTC},
		{"last-weekday", "0 0 12 LW * ?", time.UTC},
		{"half-hourly-new-york", "0 */30 * * * ?", ny},
		{"daily-new-york", "0 30 2 * * ?", ny},
	} {
		s, err := Parse(bm.spec, bm.loc)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bm.name, func(b *testing.B) {
			start := time.Date(2026, 11, 1, 0, 0, 0, 0, bm.loc)
			t := start
			for b.Loop() {
				t = s.Next(t)
				if t.IsZero() || t.Year() > 2100 {
					t = start
				}
			}
		})
	}
}
