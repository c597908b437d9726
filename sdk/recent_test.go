package sdk

import "testing"

func TestRecentRuns(t *testing.T) {
	t.Parallel()
	var r recentRuns
	k := func(id int64) runKey { return runKey{"db", id} }
	for id := range int64(recentRunsMax) {
		r.add(k(id + 1))
	}
	r.add(k(1)) // already there: not added again
	if !r.has(k(1)) || !r.has(k(recentRunsMax)) || r.has(k(recentRunsMax+1)) {
		t.Fatal("has is wrong while not full")
	}
	if r.has(runKey{"", 1}) || r.has(runKey{"other", 1}) {
		t.Fatal("has says yes for a run of the same id in another database")
	}
	r.add(k(recentRunsMax + 1))
	if r.has(k(1)) || !r.has(k(2)) || !r.has(k(recentRunsMax+1)) {
		t.Error("the oldest id was not the one forgotten")
	}
	if len(r.set) != recentRunsMax {
		t.Errorf("%d ids remembered, want %d", len(r.set), recentRunsMax)
	}
}
