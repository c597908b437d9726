package trigger

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestRefuseOverdue: of the fires a dispatcher cannot dispatch (no slot
// free: refuse), those overdue are recorded as misfires, SKIPPED, and the
// others, a FIRE_ONCE_NOW job's overdue fire among them, fail with the
// reason.
func TestRefuseOverdue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, tr, runs := overdueFixture(t, 0)
	fs := make([]fire, len(runs))
	for i := range runs {
		fs[i] = fireOf(&runs[i], runs[i].TriggeredAt, st.Jobs.StopSeq())
	}
	if err := tr.Dispatcher.refuse(ctx, fs, "no slot"); err != nil {
		t.Fatal(err)
	}
	tr.Wait()
	for i, want := range []carillonv1.RunStatus{carillonv1.RunStatus_RUN_STATUS_SKIPPED, carillonv1.RunStatus_RUN_STATUS_FAILED,
		carillonv1.RunStatus_RUN_STATUS_FAILED} {
		r, err := st.Runs.Get(ctx, runs[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		wantMsg := "no slot"
		if want == carillonv1.RunStatus_RUN_STATUS_SKIPPED {
			wantMsg = "misfire: the admin was overloaded"
		}
		if r.Status != want || !strings.Contains(r.Message, wantMsg) {
			t.Errorf("fire %d refused: %v, %q; want %v, %q", i, r.Status, r.Message, want, wantMsg)
		}
	}
}

// TestAwaitRoutesOverdue: scheduled fires whose routes wait for a busy
// writer past the misfire threshold after their instant are taken back
// from the route lane: a DO_NOTHING job's overdue fire is recorded as a
// misfire at once and never routed, and the others (a FIRE_ONCE_NOW job's
// overdue fire, a fire not yet overdue) are queued again and routed once
// the writer is free.
func TestAwaitRoutesOverdue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, tr, runs := overdueFixture(t, time.Hour)
	d := tr.Dispatcher
	jobs, err := st.Jobs.Definitions(ctx, []int64{runs[0].JobID, runs[1].JobID})
	if err != nil {
		t.Fatal(err)
	}
	fires := make([]*fire, len(runs))
	for i := range runs {
		f := fireOf(&runs[i], runs[i].TriggeredAt, st.Jobs.StopSeq())
		f.job, f.address = jobs[runs[i].JobID], "http://127.0.0.1:1"
		fires[i] = &f
	}

	// A write in progress holds the route lane's writer.
	w := &writer{wg: &inflight{}, now: time.Now, wake: make(chan struct{}, 1)}
	lane := newCoalescer(w, "route", batchMax, 0, d.recordRoutes)
	release, busy := make(chan struct{}), make(chan struct{})
	held := newCoalescer(w, "hold", 1, 0, func([]int) error { close(busy); <-release; return nil }).add([]int{0})
	<-busy

	type outcome struct {
		kept []*fire
		err  error
	}
	routed := make(chan outcome, 1)
	go func() {
		kept, err := d.routeIn(ctx, lane, fires, true)
		routed <- outcome{kept, err}
	}()
	// The overdue DO_NOTHING fire's route is taken back, the two others
	// queued again: the lane holds two routes, not three.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		w.mu.Lock()
		size := lane.size
		w.mu.Unlock()
		if size == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the route lane holds %d routes a minute on, want the 2 not overdue or not skipped", size)
		}
	}
	tr.Wait() // the misfire's settle, on the trigger's own writer
	skipped, err := st.Runs.Get(ctx, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if skipped.Status != carillonv1.RunStatus_RUN_STATUS_SKIPPED || !strings.Contains(skipped.Message, "misfire: the admin was overloaded") {
		t.Errorf("the overdue DO_NOTHING fire: %v, %q; want SKIPPED as a misfire", skipped.Status, skipped.Message)
	}

	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	out := <-routed
	if out.err != nil {
		t.Fatal(out.err)
	}
	var kept []int64
	for _, f := range out.kept {
		kept = append(kept, f.id)
	}
	if want := []int64{runs[1].ID, runs[2].ID}; !slices.Equal(kept, want) {
		t.Errorf("routed %v, want %v: the FIRE_ONCE_NOW job's and the timely fire", kept, want)
	}
}

// overdueFixture returns a trigger over a new store and three running
// scheduled runs: a DO_NOTHING job's and a FIRE_ONCE_NOW job's, each a
// second past the misfire threshold after its instant, and the DO_NOTHING
// job's, due third after now.
func overdueFixture(t *testing.T, third time.Duration) (*store.Store, *Trigger, []store.Run) {
	t.Helper()
	ctx := context.Background()
	st, g, doNothing := routeFixture(t)
	onceNow, err := st.Jobs.Create(ctx, store.Job{GroupID: g.ID, Description: "j", Handler: "h", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE,
		MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(Config{Store: st, Queue: nopQueue{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	late, then := now.Add(-tr.Dispatcher.cfg.MisfireThreshold-time.Second), now.Add(third)
	run := func(job int64, at time.Time) store.Run {
		return store.Run{JobID: job, GroupID: g.ID, ShardTotal: 1, ScheduledAt: at, TriggeredAt: at,
			TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING}
	}
	runs, err := st.Runs.Insert(ctx, []store.Run{run(doNothing.ID, late), run(onceNow.ID, late), run(doNothing.ID, then)})
	if err != nil {
		t.Fatal(err)
	}
	return st, tr, runs
}
