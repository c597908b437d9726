package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCPUEach: each admin's CPU in percent of one core over its own two
// readings, -1 for one that failed (an admin killed meanwhile), and none
// for a lone admin, whose figure is the sum's.
func TestCPUEach(t *testing.T) {
	at := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	read := func(at time.Time, cpu time.Duration, ok bool) sample { return sample{at: at, cpu: cpu, ok: ok} }
	a := []sample{read(at, time.Second, true), read(at, 0, true), read(at, 0, true)}
	b := []sample{
		read(at.Add(10*time.Second), time.Second+1500*time.Millisecond, true), // 15 %
		read(at.Add(10*time.Second), 120*time.Millisecond, true),              // 1.2 %
		read(at.Add(10*time.Second), 0, false),
	}
	if diff := cmp.Diff([]float64{15, 1.2, -1}, cpuEach(a, b)); diff != "" {
		t.Errorf("cpuEach (-want +got):\n%s", diff)
	}
	if got := cpuEach(a[:1], b[:1]); got != nil {
		t.Errorf("cpuEach of one admin = %v, want none", got)
	}
}
