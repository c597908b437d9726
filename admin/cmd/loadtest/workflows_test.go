package main

import (
	"fmt"
	"testing"
	"time"
)

// TestDagOf: the measured shapes have the nodes asked for, each
// dependency a node before it.
func TestDagOf(t *testing.T) {
	t.Parallel()
	for _, k := range []int{3, 5, 52, 53, 54, 100, 1000} {
		d := dagOf(k)
		if len(d.keys) != k {
			t.Errorf("dagOf(%d): %d nodes", k, len(d.keys))
		}
		seen := map[string]bool{}
		for _, key := range d.keys {
			for _, dep := range d.deps[key] {
				if !seen[dep] {
					t.Errorf("dagOf(%d): %s depends on %s, not before it", k, key, dep)
				}
			}
			seen[key] = true
		}
	}
	if d := dagOf(100); len(d.deps["join"]) != 50 || len(d.deps["sink"]) != 47 {
		t.Errorf("dagOf(100): join after %d, sink after %d nodes; want 50 and 47", len(d.deps["join"]), len(d.deps["sink"]))
	}
}

// TestMeasureWorkflows: node start is measured from the last dependency's
// end; a missing and a duplicated node run are counted and make their
// workflow run incomplete.
func TestMeasureWorkflows(t *testing.T) {
	t.Parallel()
	wl := &workflowLoad{shape: dagOf(3), ids: []int64{7, 8}} // root -> a01 -> sink
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	want := map[nodeKey]bool{}
	for i := range 2 {
		for _, key := range wl.shape.keys {
			want[nodeKey{fmt.Sprintf("%d/%s", i, key), at.UnixMilli()}] = true
		}
	}
	ms := func(n int) int64 { return at.Add(time.Duration(n) * time.Millisecond).UnixNano() }
	rc := func(param string, start, end int) nodeReceipt {
		return nodeReceipt{param: param, at: at.UnixMilli(), start: ms(start), end: ms(end)}
	}
	receipts := []nodeReceipt{
		rc("0/root", 2, 10), rc("0/a01", 14, 20), rc("0/sink", 30, 31), // complete: starts 4 and 10 ms after
		rc("1/root", 3, 5), rc("1/a01", 6, 8), rc("1/a01", 7, 9), // a01 twice, sink missing
	}
	got := wl.measure(want, 2, receipts, 1)
	if got.Complete != 1 || got.NodeRunsMissing != 1 || got.NodeRunsDuplicated != 1 || got.PerMinute != 1 {
		t.Errorf("complete %d, missing %d, duplicated %d, per minute %v; want 1, 1, 1, 1", got.Complete, got.NodeRunsMissing, got.NodeRunsDuplicated, got.PerMinute)
	}
	if got.NodeStarts != 3 || got.NodeStart.Max != 10 || got.NodeStart.P50 != 4 {
		t.Errorf("node starts %d (p50 %v, max %v), want 3 (4, 1 and 10 ms: p50 4, max 10)", got.NodeStarts, got.NodeStart.P50, got.NodeStart.Max)
	}
	if got.RootLateness.Max != 3 {
		t.Errorf("root lateness max %v, want 3 ms", got.RootLateness.Max)
	}
}
