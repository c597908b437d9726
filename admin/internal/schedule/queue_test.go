package schedule_test

import (
	"reflect"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestPopDueForgetsRuns: the queue keeps no hold on the runs of the
// entries it handed out: a burst's runs are garbage once dispatched, not
// when the queue's array is next written over.
func TestPopDueForgetsRuns(t *testing.T) {
	t.Parallel()
	q := schedule.NewQueue()
	run := &store.Run{ID: 1}
	handed := weak.Make(run)
	q.Push(schedule.Entry{RunID: 1, At: benchT0, Claimed: true, Run: run}, schedule.Entry{RunID: 2, At: benchT0.Add(time.Hour)})
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

// TestClaimedEntry: the entry of a plain scheduled fire the scan claimed
// keeps no store.Run, only its scheduled instant and param; the entry of
// any other claimed run keeps a copy of it, not a pointer into the
// claim's array, which would keep the plain runs' array alive.
func TestClaimedEntry(t *testing.T) {
	t.Parallel()
	due := benchT0.Add(time.Minute)
	plain := store.Run{ID: 7, JobID: 3, Param: "p", ShardTotal: 1, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE,
		ScheduledAt: due, TriggeredAt: due, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING}
	e := schedule.ClaimedEntry(&plain, 42)
	want := schedule.Entry{RunID: 7, JobID: 3, At: due, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Claimed: true,
		ScheduledAt: due, Param: "p", StopSeq: 42}
	if e != want {
		t.Errorf("plain fire: entry %+v, want %+v", e, want)
	}
	misfire, capped := plain, plain
	misfire.TriggerType, misfire.MissedCount, misfire.TriggeredAt = carillonv1.TriggerType_TRIGGER_TYPE_MISFIRE, 3, due.Add(time.Hour)
	capped.Slot = store.SlotHeld
	for _, r := range []*store.Run{&misfire, &capped} {
		e := schedule.ClaimedEntry(r, 42)
		if !e.Claimed || e.Run == nil || e.Run == r || !reflect.DeepEqual(*e.Run, *r) || !e.At.Equal(r.TriggeredAt) || e.StopSeq != 42 {
			t.Errorf("run %+v: entry %+v; want claimed, at its TriggeredAt, with a copy of the run", *r, e)
		}
	}
}
