package sdk

import "testing"

func TestRecentRuns(t *testing.T) {
	t.Parallel()
	var r recentRuns
	for id := range int64(recentRunsMax) {
		r.add(id + 1)
	}
	r.add(1) // already there: not added again
	if !r.has(1) || !r.has(recentRunsMax) || r.has(recentRunsMax+1) {
		t.Fatal("has is wrong while not full")
	}
	r.add(recentRunsMax + 1)
	if r.has(1) || !r.has(2) || !r.has(recentRunsMax+1) {
		t.Error("the oldest id was not the one forgotten")
	}
	if len(r.set) != recentRunsMax {
		t.Errorf("%d ids remembered, want %d", len(r.set), recentRunsMax)
	}
}
