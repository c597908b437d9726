package trigger_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/service"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// BenchmarkBurstMemory measures the memory a burst of fires on one instant
// holds while its runs wait for it: burstRuns jobs due on one instant are
// claimed as the scan claims them (store.FireStore.Claim, 256 jobs a
// transaction), handed to Fire, routed ROUND_ROBIN over two executors on
// loopback that take due_at, sent ahead of the instant (SendLead) and held
// for their results, as the load tool's burst (BENCHMARKS.md). A burst
// before the measured ones fills what stays between bursts: the job
// cache, the route table, the connections.
//
// B/run is the live heap the burst adds (after a GC), per run, at the
// larger of two moments: the runs routed and waiting to be sent ahead
// (routed-B/run), and the runs sent and waiting for their instant
// (sent-B/run). claimed-B/run is what the scan's entries hold before
// they are handed to Fire: what a burst claimed ahead holds in the
// scheduler's queue (schedule.ClaimedEntry). cache-B/job is what the job
// cache keeps per job.
//
// With BURST_PROFILE set to a directory, it writes there the heap profiles
// (every allocation sampled) of both moments, routed.pprof and sent.pprof.
//
//	go test -run '^$' -bench BurstMemory -benchtime 1x ./admin/internal/trigger/
func BenchmarkBurstMemory(b *testing.B) {
	const n = burstRuns
	if os.Getenv("BURST_PROFILE") != "" {
		runtime.MemProfileRate = 1
	}
	ctx := context.Background()
	var got atomic.Int64 // runs the executors received
	var urls []string
	for range 2 {
		urls = append(urls, testkit.ServeExecutor(b, &countingExecutor{got: &got}))
	}
	bd := setup(b, dbtest.SQLite, carillonv1.AddressMode_ADDRESS_MODE_AUTO)
	startLoops(b, bd.st) // checkpoints and folds, as an admin runs them
	instant := bd.clock.Now().Truncate(time.Minute).Add(time.Minute)
	jobs := make([]store.Job, n)
	for i := range jobs {
		jobs[i] = store.Job{
			GroupID: bd.group.ID, Description: fmt.Sprintf("burst %d", i+1), Handler: "noop", Enabled: true,
			ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "0 * * * * ?",
			MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING,
			RouteStrategy:   carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN,
			BlockStrategy:   carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL,
			NextFireAt:      instant,
		}
	}
	if err := bd.st.Jobs.CreateMany(ctx, jobs, bd.clock.Now()); err != nil {
		b.Fatal(err)
	}

	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i + 1) // the IDs of a fresh database's jobs
	}
	before := liveHeap()
	if defs, err := bd.st.Jobs.Definitions(ctx, ids); err != nil || len(defs) != n {
		b.Fatalf("job definitions: %d of %d, %v", len(defs), n, err)
	}
	cache := liveHeap() - before

	burst := func(at time.Time) (claimed, routed, sent uint64) {
		for _, u := range urls {
			bd.register(b, u, true) // live at every burst: the clock moves a minute each
		}
		got.Store(0)
		base := liveHeap()
		pending := bd.clock.Pending()
		es := scanBurst(b, bd.st, at)
		claimed = liveHeap() - base
		bd.trig.Dispatcher.Fire(es)
		es = nil //nolint:ineffassign,wastedassign // Fire keeps none of es: the entries are garbage from here
		runtime.KeepAlive(es)
		batches := (n + 255) / 256
		awaitClock(b, bd, pending+batches) // routed, waiting to send ahead
		routed = liveHeap() - base
		profileHeap(b, "routed")
		bd.clock.Set(at.Add(-trigger.SendLead(trigger.SendAheadDefault, n)))
		for got.Load() < n { // the executors' servers, outside the benchmark's goroutines, count the calls
			time.Sleep(time.Millisecond)
		}
		awaitClock(b, bd, batches+1) // sent, waiting for the instant; a flush of the held dispatches armed
		sent = liveHeap() - base
		profileHeap(b, "sent")
		bd.clock.Set(at)
		bd.trig.Wait()
		return claimed, routed, sent
	}
	burst(instant) // the warm-up
	var claimed, routed, sent uint64
	b.ResetTimer()
	for i := range b.N {
		c, r, s := burst(instant.Add(time.Duration(i+1) * time.Minute))
		claimed, routed, sent = max(claimed, c), max(routed, r), max(sent, s)
	}
	b.StopTimer()
	if r, err := bd.st.Runs.Get(ctx, int64(n)*int64(b.N+1)); err != nil || r.ExecutorAddress == "" {
		b.Fatalf("the last run: on %q (%s), %v; want its dispatch recorded", r.ExecutorAddress, r.Message, err)
	}
	b.ReportMetric(float64(cache)/n, "cache-B/job")
	b.ReportMetric(float64(claimed)/n, "claimed-B/run")
	b.ReportMetric(float64(routed)/n, "routed-B/run")
	b.ReportMetric(float64(sent)/n, "sent-B/run")
	b.ReportMetric(float64(max(routed, sent))/n, "B/run")
}

// burstRuns is how many fires BenchmarkBurstMemory's bursts have.
const burstRuns = 20_000

// scanBurst claims the fires of the jobs due at at, as the scan does
// (schedule.Scheduler: DueJobs and ClaimFires, 256 jobs at a time), and
// returns their entries.
func scanBurst(b *testing.B, st *store.Store, at time.Time) []schedule.Entry {
	b.Helper()
	ctx := context.Background()
	var es []schedule.Entry
	for {
		due, err := st.Fires.DueJobs(ctx, at, at, 256)
		if err != nil {
			b.Fatal(err)
		}
		if len(due) == 0 {
			return es
		}
		seq := st.Jobs.StopSeq()
		claims := make([]store.Claim, len(due))
		for i, j := range due {
			claims[i] = store.Claim{JobID: j.ID, Due: j.NextFireAt, Next: j.NextFireAt.Add(time.Minute), Runs: []store.Run{{
				JobID: j.ID, GroupID: j.GroupID, Handler: j.Handler, Param: j.Param, ShardTotal: 1,
				TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, ScheduledAt: j.NextFireAt, TriggeredAt: j.NextFireAt,
				Status: carillonv1.RunStatus_RUN_STATUS_RUNNING,
			}}}
		}
		runs, err := st.Fires.Claim(ctx, claims)
		if err != nil {
			b.Fatal(err)
		}
		for i := range runs {
			r := &runs[i]
			es = append(es, schedule.ClaimedEntry(r, seq))
		}
	}
}

// awaitClock waits until n functions wait on the bundle's clock.
func awaitClock(b *testing.B, bd *bundle, n int) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if !bd.clock.AwaitPending(ctx, n) {
		b.Fatalf("%d functions wait on the clock after a minute, want %d", bd.clock.Pending(), n)
	}
}

// liveHeap returns the bytes of the live heap, after two GCs: the first
// moves what sync.Pools hold (connect's compressors, HTTP buffers) to
// their victim caches, the second drops it.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// countingExecutor accepts every run and counts them in got, keeping
// nothing else: its memory is not the admin's.
type countingExecutor struct {
	carillonv1connect.UnimplementedExecutorServiceHandler
	got *atomic.Int64
}

func (e *countingExecutor) Run(context.Context, *carillonv1.RunRequest) (*carillonv1.RunResponse, error) {
	e.got.Add(1)
	return &carillonv1.RunResponse{}, nil
}

func (e *countingExecutor) RunBatch(_ context.Context, req *carillonv1.RunBatchRequest) (*carillonv1.RunBatchResponse, error) {
	e.got.Add(int64(len(req.Runs)))
	res := &carillonv1.RunBatchResponse{Outcomes: make([]*carillonv1.RunOutcome, len(req.Runs))}
	for i := range res.Outcomes {
		res.Outcomes[i] = &carillonv1.RunOutcome{}
	}
	return res, nil
}

// profileHeap writes the heap profile to name.pprof in the directory
// BURST_PROFILE names, if set.
func profileHeap(b *testing.B, name string) {
	b.Helper()
	dir := os.Getenv("BURST_PROFILE")
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, name+".pprof"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// startLoops runs st's loops (store.Store.Loops) until the end of tb.
func startLoops(tb testing.TB, st *store.Store) {
	tb.Helper()
	g := service.NewGroup(st.Loops()...)
	if err := g.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(g.Stop)
}
