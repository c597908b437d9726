package trigger

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/internal/clock"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestRoutesWrittenTogether: the routes of instants routed while the
// writer is busy are recorded in one write, and each instant learns which
// of its own runs were recorded: a run settled meanwhile is not sent, and
// the others are.
func TestRoutesWrittenTogether(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, g, j := routeFixture(t)
	runs := runningRuns(t, st, g, j, 4, carillonv1.TriggerType_TRIGGER_TYPE_MANUAL)
	settled := runs[1].ID // killed before its route: never sent
	if _, err := st.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: settled, Status: carillonv1.RunStatus_RUN_STATUS_KILLED, FinishedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}

	work := &inflight{}
	w := &writer{wg: work, now: time.Now, wake: make(chan struct{}, 1)}
	d := &Dispatcher{cfg: &Config{Store: st, Logger: slog.New(slog.DiscardHandler), Clock: clock.Wall}}
	var mu sync.Mutex
	var writes [][]int64 // the runs of each route write
	d.routes = newCoalescer(w, "route", batchMax, 0, func(items []routeItem) error {
		mu.Lock()
		writes = append(writes, nil)
		for _, it := range items {
			writes[len(writes)-1] = append(writes[len(writes)-1], it.route.RunID)
		}
		mu.Unlock()
		return d.recordRoutes(items)
	})
	// A write in progress holds the writer while both instants route.
	release, busy := make(chan struct{}), make(chan struct{})
	hold := newCoalescer(w, "hold", 1, 0, func([]int) error { close(busy); <-release; return nil })
	held := hold.add([]int{0})
	<-busy

	fires := func(rs ...store.Run) []*fire {
		fs := make([]*fire, len(rs))
		for i, r := range rs {
			fs[i] = &fire{id: r.ID, jobID: r.JobID, job: &store.JobDefinition{ID: j.ID, GroupID: g.ID}, address: "http://127.0.0.1:1"}
		}
		return fs
	}
	var kept [2][]*fire
	var errs [2]error
	var wg sync.WaitGroup
	for i, part := range [][]store.Run{runs[:2], runs[2:]} {
		wg.Go(func() { kept[i], errs[i] = d.route(ctx, fires(part...)) })
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if w.queued()["route"] == len(runs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the routes never queued: %v", w.queued())
		}
	}
	close(release)
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	ids := func(fs []*fire) (out []int64) {
		for _, f := range fs {
			out = append(out, f.id)
		}
		return out
	}
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("route: %v, %v", errs[0], errs[1])
	}
	if got, want := ids(kept[0]), []int64{runs[0].ID}; !slices.Equal(got, want) {
		t.Errorf("the first instant kept runs %v, want %v (run %d was settled)", got, want, settled)
	}
	if got, want := ids(kept[1]), []int64{runs[2].ID, runs[3].ID}; !slices.Equal(got, want) {
		t.Errorf("the second instant kept runs %v, want %v", got, want)
	}
	if len(writes) != 1 || len(writes[0]) != len(runs) {
		t.Errorf("route writes %v, want one of all %d runs", writes, len(runs))
	}
}

// TestRouteAheadLane: the route of a fire sent ahead whose send is more
// than routeAheadLinger off waits in the lingering route-ahead lane; one
// whose send is near goes through the route lane, written at once; both
// are recorded.
func TestRouteAheadLane(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, g, j := routeFixture(t)
	runs := runningRuns(t, st, g, j, 2, carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE)
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	clk := clock.NewFake(now)
	work := &inflight{}
	w := &writer{wg: work, now: time.Now, wake: make(chan struct{}, 1)}
	d := &Dispatcher{cfg: &Config{Store: st, Logger: slog.New(slog.DiscardHandler), Clock: clk, SendAhead: 300 * time.Millisecond}}
	d.routes = newCoalescer(w, "route", batchMax, 0, d.recordRoutes)
	d.routesAhead = newCoalescer(w, "route-ahead", batchMax, routeAheadLinger, d.recordRoutes)
	// A write in progress holds the writer: the routes wait in their lanes.
	release, busy := make(chan struct{}), make(chan struct{})
	hold := newCoalescer(w, "hold", 1, 0, func([]int) error { close(busy); <-release; return nil })
	held := hold.add([]int{0})
	<-busy

	fireOf := func(r store.Run) []*fire {
		return []*fire{{id: r.ID, jobID: r.JobID, job: &store.JobDefinition{ID: j.ID, GroupID: g.ID}, address: "http://127.0.0.1:1", dueAt: true}}
	}
	var kept [2][]*fire
	var errs [2]error
	var wg sync.WaitGroup
	far, near := now.Add(2*time.Second), now.Add(routeAheadLinger/2)
	wg.Go(func() { kept[0], errs[0] = d.routeAhead(ctx, fireOf(runs[0]), far.Add(300*time.Millisecond), far) })
	wg.Go(func() { kept[1], errs[1] = d.routeAhead(ctx, fireOf(runs[1]), near.Add(300*time.Millisecond), near) })
	// queuedIn returns the runs whose routes wait in lane.
	queuedIn := func(lane *coalescer[routeItem]) (ids []int64) {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, g := range lane.groups {
			for _, it := range g.items {
				ids = append(ids, it.route.RunID)
			}
		}
		return ids
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		ahead, at := queuedIn(d.routesAhead), queuedIn(d.routes)
		if len(ahead)+len(at) == 2 {
			if !slices.Equal(ahead, []int64{runs[0].ID}) || !slices.Equal(at, []int64{runs[1].ID}) {
				t.Fatalf("route-ahead holds runs %v and route %v; want the far send's run %d in route-ahead, the near one's %d in route",
					ahead, at, runs[0].ID, runs[1].ID)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the routes never queued: %v", w.queued())
		}
	}
	close(release)
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	for i := range kept {
		if errs[i] != nil || len(kept[i]) != 1 {
			t.Errorf("route %d: kept %d fires, %v; want it recorded", i, len(kept[i]), errs[i])
		}
	}
}

// routeFixture returns a store with a group and a job of it.
func routeFixture(t *testing.T) (*store.Store, store.Group, store.Job) {
	t.Helper()
	ctx := context.Background()
	st := dbtest.SQLite.Open(t)
	g, err := st.Groups.Create(ctx, store.Group{AppName: "app", Title: "App", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	j, err := st.Jobs.Create(ctx, store.Job{GroupID: g.ID, Description: "j", Handler: "h",
		ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return st, g, j
}

// runningRuns stores n running runs of job j, of trigger type tt, each at
// its own instant.
func runningRuns(t *testing.T, st *store.Store, g store.Group, j store.Job, n int, tt carillonv1.TriggerType) []store.Run {
	t.Helper()
	runs := make([]store.Run, n)
	for i := range runs {
		runs[i] = store.Run{JobID: j.ID, GroupID: g.ID, Handler: "h", ShardTotal: 1, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING,
			TriggerType: tt, ScheduledAt: time.UnixMilli(int64(i+1) * 1000)}
	}
	runs, err := st.Runs.Insert(context.Background(), runs)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}
