package runner

import (
	"testing"

	"github.com/carillonhq/carillon/sdk/internal/report"
)

func TestRecentRuns(t *testing.T) {
	t.Parallel()
	var r recentRuns
	k := func(id int64) report.Key { return report.Key{DB: "db", ID: id} }
	for id := range int64(recentRunsMax) {
		r.add(k(id + 1))
	}
	r.add(k(1)) // already there: not added again
	if !r.has(k(1)) || !r.has(k(recentRunsMax)) || r.has(k(recentRunsMax+1)) {
		t.Fatal("has is wrong while not full")
	}
	if r.has(report.Key{DB: "", ID: 1}) || r.has(report.Key{DB: "other", ID: 1}) {
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

// TestRecentRunsForget: a run forgotten (dropped to be replaced) and added
// again is remembered until its new place in the ring is reused, not its
// old one.
func TestRecentRunsForget(t *testing.T) {
	t.Parallel()
	var r recentRuns
	k := func(id int64) report.Key { return report.Key{DB: "db", ID: id} }
	for id := range int64(recentRunsMax) {
		r.add(k(id + 1))
	}
	r.forget(k(1))
	if r.has(k(1)) {
		t.Fatal("a run forgotten is still remembered")
	}
	r.add(k(1))                 // reuses the oldest place, which was run 1's, cleared
	r.add(k(recentRunsMax + 1)) // reuses run 2's
	if !r.has(k(1)) || r.has(k(2)) {
		t.Error("run 1, added again, was forgotten with its old place, or run 2 was not")
	}
	r.forget(k(5))
	r.add(k(5))
	for id := int64(recentRunsMax + 2); id < recentRunsMax+5; id++ { // reuse the places of runs 3, 4 and 5 (cleared)
		r.add(k(id))
	}
	if !r.has(k(5)) {
		t.Error("run 5, added again, was forgotten when its old place was reused")
	}
}
