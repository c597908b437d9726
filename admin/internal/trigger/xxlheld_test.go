package trigger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// xxlExecutor is an xxl-job executor on loopback: it has a log file of
// each run in logged (it started it there), says the jobs in busy have a
// run running or queued, and accepts every run it is sent.
type xxlExecutor struct {
	mu     sync.Mutex
	logged map[int64]bool
	busy   map[int64]bool
	ran    []int64
}

func (x *xxlExecutor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		LogID int64 `json:"logId"`
		JobID int64 `json:"jobId"`
	}
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &body)
	x.mu.Lock()
	defer x.mu.Unlock()
	switch r.URL.Path {
	case "/log":
		content := "readLog fail, logFile not exists"
		if x.logged[body.LogID] {
			content = "2026-11-23 08:00:00 [JobThread] ----------- xxl-job job execute start -----------\n"
		}
		out, _ := json.Marshal(map[string]any{"code": 200, "content": map[string]any{"fromLineNum": 1, "toLineNum": 1, "logContent": content, "isEnd": true}})
		_, _ = w.Write(out)
	case "/idleBeat":
		if x.busy[body.JobID] {
			_, _ = io.WriteString(w, `{"code":500,"msg":"job thread is running or has trigger queue."}`)
			return
		}
		_, _ = io.WriteString(w, `{"code":200,"msg":null}`)
	case "/run":
		x.ran = append(x.ran, body.LogID)
		_, _ = io.WriteString(w, `{"code":200,"msg":null}`)
	default:
		_, _ = io.WriteString(w, fmt.Sprintf(`{"code":500,"msg":"invalid request, uri-mapping(%s) not found."}`, r.URL.Path))
	}
}

// TestReconcileXXLJob: after a restart, xxl-job executors, which have no
// HeldRuns, answer through /log and /idleBeat: a run with a log there is
// recorded as sent there; one with no log whose job is idle there was
// never delivered and is sent again there; one with no log whose job is
// busy may be queued, and waits.
func TestReconcileXXLJob(t *testing.T) {
	t.Parallel()
	// SQLite only, as TestReconcile: over PostgreSQL, Reconcile is adoption.
	be := dbtest.SQLite
	ctx := context.Background()
	r := newRestarted(t, be)
	x := &xxlExecutor{logged: map[int64]bool{}, busy: map[int64]bool{}}
	srv := httptest.NewServer(x)
	t.Cleanup(srv.Close)
	g, err := r.st.Groups.Create(ctx, store.Group{AppName: "xxl", Title: "xxl", ExecutorProtocol: carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB}, r.t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.st.Registry.Register(ctx, "xxl", srv.URL, "i", 0, r.t0); err != nil {
		t.Fatal(err)
	}
	job := func(desc string) store.Job {
		j, err := r.st.Jobs.Create(ctx, store.Job{GroupID: g.ID, Description: desc, Handler: "h",
			MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW, ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}, r.t0)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	idle, busy := job("idle"), job("busy")
	x.busy[busy.ID] = true
	started := r.claimed(t, idle, r.t0, srv.URL)
	x.logged[started] = true
	undelivered := r.claimed(t, idle, r.t0.Add(time.Second), srv.URL)
	queued := r.claimed(t, busy, r.t0, srv.URL)

	trig := r.start(t, 500*time.Millisecond)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- trig.Rescuer.Reconcile(ctx, trigger.ReconcileConfig{Interval: time.Millisecond}) }()
	// The queued run waits: Reconcile's rounds move the clock (100 ms a
	// reading); wait until they moved it 5 s, well within the restart
	// grace, then let it start there.
	wait, waited := context.WithTimeout(ctx, 10*time.Second)
	defer waited()
	if !r.clock.AwaitTime(wait, r.clock.Now().Add(5*time.Second)) {
		t.Fatalf("Reconcile's rounds did not move the clock 5 s within 10 s")
	}
	if got, _ := r.st.Runs.Get(ctx, queued); got.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING || got.ExecutorAddress != "" {
		t.Errorf("run %d, which may be queued, was settled or recorded (%s at %q) before its executor could say", queued, got.Status, got.ExecutorAddress)
	}
	x.mu.Lock()
	x.logged[queued], x.busy[busy.ID] = true, false
	x.mu.Unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Reconcile did not finish in 10 s once every run was accounted for")
	}
	trig.Wait()

	x.mu.Lock()
	ran := slices.Clone(x.ran)
	x.mu.Unlock()
	if !slices.Equal(ran, []int64{undelivered}) {
		t.Errorf("runs sent to the xxl-job executor %v, want only %d (no log, its job idle)", ran, undelivered)
	}
	for _, id := range []int64{started, undelivered, queued} {
		got, err := r.st.Runs.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING || got.ExecutorAddress != srv.URL {
			t.Errorf("run %d: %s at %q (%s / %s); want RUNNING at %q", id, got.Status, got.ExecutorAddress, got.Message, got.TriggerMessage, srv.URL)
		}
	}
}
