package cron

import (
	"sync"
	"testing"
	"time"
)

// TestNextExtremes checks Next with start times far outside the years a
// schedule can fire in.
func TestNextExtremes(t *testing.T) {
	s, err := Parse("0 0 12 ? * MON", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Next(time.Time{}), time.Date(1970, 1, 5, 12, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("Next(zero time) = %v, want %v", got, want)
	}
	for _, at := range []time.Time{
		time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Unix(1<<62, 0),
	} {
		if got := s.Next(at); !got.IsZero() {
			t.Errorf("Next(%v) = %v, want the zero time", at, got)
		}
	}
}

// TestNextSubsecond checks that Next returns the first whole second
// strictly after t, however close t is to it.
func TestNextSubsecond(t *testing.T) {
	s, err := Parse("* * * * * ?", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 22, 8, 7, 16, 0, time.UTC)
	for _, ns := range []int{0, 1, 500_000_000, 999_999_999} {
		at := base.Add(time.Duration(ns))
		if got, want := s.Next(at), base.Add(time.Second); !got.Equal(want) {
			t.Errorf("Next(%v) = %v, want %v", at, got, want)
		}
	}
}

// TestNextConcurrent runs Next on one Schedule from several goroutines;
// run it with -race.
func TestNextConcurrent(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("0 */30 * * * ?", ny)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 10, 31, 0, 0, 0, 0, ny)
	want := s.Next(start)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				if got := s.Next(start); !got.Equal(want) {
					t.Errorf("Next = %v, want %v", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
