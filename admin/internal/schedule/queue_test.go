package schedule_test

import (
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
)

// TestPopDueForgetsRuns: the queue keeps no hold on the runs of the
// entries it handed out: a burst's runs are garbage once dispatched, not
// when the queue's array is next written over.
func TestPopDueForgetsRuns(t *testing.T) {
	t.Parallel()
	q := schedule.NewQueue()
	run := &store.Run{ID: 1}
	handed := weak.Make(run)
	q.Push(schedule.Entry{RunID: 1, At: benchT0, Run: run}, schedule.Entry{RunID: 2, At: benchT0.Add(time.Hour)})
	due, next := q.PopDue(nil, benchT0)
	if len(due) != 1 || due[0].Run != run || !next.Equal(benchT0.Add(time.Hour)) {
		t.Fatalf("PopDue = %v, %v; want the run of entry 1, and entry 2 next", due, next)
	}
	due, run = nil, nil //nolint:ineffassign,wastedassign // dropped: only the queue could hold the run now
	runtime.GC()
	if handed.Value() != nil {
		t.Error("the queue holds the run of an entry it handed out")
	}
	runtime.KeepAlive(q)
}
