package trigger_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// runOnly is an executor written to the first contract: it serves Run, and
// RunBatch answers unimplemented.
type runOnly struct {
	carillonv1connect.UnimplementedExecutorServiceHandler
	mu  sync.Mutex
	got []*carillonv1.RunRequest
}

func (e *runOnly) Run(_ context.Context, req *carillonv1.RunRequest) (*carillonv1.RunResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, req)
	return &carillonv1.RunResponse{}, nil
}

func (e *runOnly) received() []*carillonv1.RunRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*carillonv1.RunRequest(nil), e.got...)
}

// TestExecutorWithoutRunBatch: several fires of one instant for an
// executor that does not serve RunBatch are each sent with Run; the
// admin remembers it, so the next instant's fires go straight to Run.
func TestExecutorWithoutRunBatch(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		exec := &runOnly{}
		path, handler := carillonv1connect.NewExecutorServiceHandler(exec)
		var batchCalls atomic.Int32
		url := testkit.Serve(t, path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/RunBatch") {
				batchCalls.Add(1)
			}
			handler.ServeHTTP(w, r)
		}))
		b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_MANUAL, url)
		var jobs []store.Job
		for range 3 {
			jobs = append(jobs, b.job(t, nil))
		}
		var all []int64
		for instant := range 2 {
			var es []schedule.Entry
			at := b.clock.Now() // one instant, now: one call for its fires
			for _, j := range jobs {
				runs, err := b.st.Runs.Insert(ctx, []store.Run{{JobID: j.ID, GroupID: b.group.ID, ShardTotal: 1,
					ScheduledAt: b.clock.Now().Add(time.Duration(instant) * time.Second),
					TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Status: carillonv1.RunStatus_RUN_STATUS_PENDING}})
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, runs[0].ID)
				es = append(es, schedule.Entry{RunID: runs[0].ID, JobID: j.ID, At: at, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE})
			}
			b.trig.Dispatcher.Fire(es)
			b.trig.Wait()
		}
		got := map[int64]bool{}
		for _, req := range exec.received() {
			got[req.RunId] = true
			if req.DatabaseId != b.st.DatabaseID() || req.DatabaseId == "" {
				t.Errorf("run %d sent with database_id %q, want %q", req.RunId, req.DatabaseId, b.st.DatabaseID())
			}
		}
		for _, id := range all {
			r, err := b.st.Runs.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if !got[id] || r.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING || r.ExecutorAddress != url {
				t.Errorf("run %d: received %v, %s on %q (%s); want received with Run, RUNNING on %s",
					id, got[id], r.Status, r.ExecutorAddress, r.Message, url)
			}
		}
		if n := batchCalls.Load(); n != 1 {
			t.Errorf("%d RunBatch calls for two instants of 3 fires, want 1: the second instant's go straight to Run", n)
		}
	})
}
