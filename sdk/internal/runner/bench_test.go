package runner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carillonhq/carillon/internal/testsignal"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk/internal/report"
)

// The benchmarks of the executor's hot path, on real files under
// b.TempDir():
//
//	go test -run '^$' -bench 'Accept|Run$|Spool|LogRecord' -benchmem -count 5 ./sdk/

// BenchmarkAccept measures the executor's side of a dispatch: accepting a
// run (its log, its worker) until its handler has run and its log was
// written, for runs of many jobs, as a busy executor sees them. Results go
// nowhere: see BenchmarkRun for them.
func BenchmarkAccept(b *testing.B) {
	var done tally
	d := New(Config{
		PrepareFunc:  prepare,
		Logs:         newTestLogStore(b, b.TempDir(), time.Now),
		NowFunc:      time.Now,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		ReportFunc:   func(report.Result) { done.add(1) },
		IdleTimeout:  IdleTimeoutDefault,
		AbandonAfter: AbandonAfterDefault,
	})
	noop := HandlerFunc(func(context.Context, *Job) error { return nil })
	b.ResetTimer()
	for i := range b.N {
		r := &Run{ID: int64(i + 1), JobID: int64(i%1000 + 1), Name: "noop", Handler: noop,
			Block: carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL, ShardTotal: 1}
		if err := d.Accept(r); err != nil {
			b.Fatal(err)
		}
	}
	done.waitFor(b.N)
	b.StopTimer()
	d.StopAccepting()
	d.Drain(context.Background())
}

// BenchmarkRun measures a whole run on the executor's side: accepted, its
// handler run (logging a line), its log written, its result spooled, sent
// in a batch to an admin that takes it at once, and acknowledged in the
// spool.
func BenchmarkRun(b *testing.B) {
	d, delivered, done := newBenchExecutor(b)
	hello := HandlerFunc(func(_ context.Context, job *Job) error { job.Logf("hello"); return nil })
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		r := &Run{ID: int64(i + 1), JobID: int64(i%1000 + 1), Name: "hello", Handler: hello,
			Block: carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL, ShardTotal: 1}
		if err := d.Accept(r); err != nil {
			b.Fatal(err)
		}
	}
	delivered.waitFor(b.N)
	b.StopTimer()
	done()
}

// newBenchExecutor returns a dispatcher whose results go through a real
// spool and reporter to an admin that takes them at once; delivered
// counts them, and done shuts everything down.
func newBenchExecutor(b *testing.B) (d *Dispatcher, delivered *tally, done func()) {
	b.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	sp, err := report.OpenSpool(b.TempDir(), logger)
	if err != nil {
		b.Fatal(err)
	}
	delivered = new(tally)
	rep := report.NewReporter(sp, func(_ context.Context, batch []report.Result) ([]report.Refusal, error) {
		delivered.add(len(batch))
		return nil, nil
	}, logger)
	stop := make(chan struct{})
	reporting := make(chan struct{})
	go func() { rep.Run(context.Background(), stop); close(reporting) }()
	d = New(Config{
		PrepareFunc:     prepare,
		Logs:            newTestLogStore(b, b.TempDir(), time.Now),
		NowFunc:         time.Now,
		Logger:          logger,
		ReportFunc:      rep.Add,
		ReportBatchFunc: rep.AddAll,
		IdleTimeout:     IdleTimeoutDefault,
		AbandonAfter:    AbandonAfterDefault,
	})
	return d, delivered, func() {
		d.StopAccepting()
		d.Drain(context.Background())
		close(stop)
		<-reporting
		_ = sp.Close()
	}
}

// BenchmarkBurst measures a cron burst on the executor's side: 1,000 runs
// of 1,000 jobs accepted at once (acceptAll, as RunBatch does), with their
// logs and results written as in BenchmarkRun. It reports when the handlers
// started after the first accept (start-p50-ms, start-p99-ms: the
// executor's share of fire lateness) and the time until every result was
// delivered (ns/op).
func BenchmarkBurst(b *testing.B) {
	const n = 1000
	d, delivered, done := newBenchExecutor(b)
	starts := make([]atomic.Int64, n)
	var first atomic.Int64
	hello := HandlerFunc(func(_ context.Context, job *Job) error {
		starts[(job.RunID-1)%n].Store(time.Now().UnixNano() - first.Load())
		job.Logf("hello")
		return nil
	})
	var st startStats
	b.ResetTimer()
	for i := range b.N {
		first.Store(time.Now().UnixNano())
		acceptBurst(b, d, delivered, i, n, hello, time.Time{})
		st.add(starts, 0)
	}
	b.StopTimer()
	st.report(b, false)
	done()
}

// BenchmarkDueBurst measures a burst sent ahead of its instant: n runs of
// n jobs, each with the same due_at some time after they are accepted, as
// executors receive an instant's fires from an admin that sends ahead
// (RunRequest.due_at), spread over one executor or several in one process
// (as in the load tool), whose timers fire on the same instant. It reports
// the handlers' start lateness after the due instant, the median over b.N
// bursts of each burst's p50 and p99.
func BenchmarkDueBurst(b *testing.B) {
	for _, c := range []struct{ runs, executors int }{{1000, 1}, {10_000, 1}, {100_000, 1}, {100_000, 2}} {
		n := c.runs
		b.Run(fmt.Sprintf("runs=%d/executors=%d", n, c.executors), func(b *testing.B) {
			ds := make([]*Dispatcher, c.executors)
			delivered := make([]*tally, c.executors)
			for e := range ds {
				var done func()
				ds[e], delivered[e], done = newBenchExecutor(b)
				defer done()
			}
			starts := make([]atomic.Int64, n)
			hello := HandlerFunc(func(_ context.Context, job *Job) error {
				starts[(job.RunID-1)%int64(n)].Store(time.Now().UnixNano())
				return nil
			})
			var st startStats
			for i := range b.N {
				due := time.Now().Add(50*time.Millisecond + time.Duration(n)*10*time.Microsecond) // after the accepts
				for e, d := range ds {
					acceptRuns(b, d, i, n, e, c.executors, hello, due)
				}
				for e := range ds {
					delivered[e].waitFor((i + 1) * n / c.executors)
				}
				st.add(starts, due.UnixNano())
			}
			b.StopTimer()
			st.report(b, true)
		})
	}
}

// acceptBurst accepts burst i of n runs of n jobs, each with handler and
// due_at due (zero: none), and waits until they were all reported.
func acceptBurst(b *testing.B, d *Dispatcher, delivered *tally, i, n int, handler Handler, due time.Time) {
	b.Helper()
	acceptRuns(b, d, i, n, 0, 1, handler, due)
	delivered.waitFor((i + 1) * n)
}

// acceptRuns accepts the runs first, first+step, ... of burst i of n runs
// of n jobs, each with handler and due_at due (zero: none).
func acceptRuns(b *testing.B, d *Dispatcher, i, n, first, step int, handler Handler, due time.Time) {
	b.Helper()
	var runs []*Run
	for k := first; k < n; k += step {
		runs = append(runs, &Run{ID: int64(i*n + k + 1), JobID: int64(k + 1), Name: "hello", Handler: handler,
			Block: carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL, ShardTotal: 1, DueAt: due})
	}
	for _, err := range d.AcceptAll(runs) {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// tally counts the results reported or delivered; waitFor waits for them
// on the signal each count emits, not by polling.
type tally struct {
	n      atomic.Int64
	signal testsignal.Signal
}

func (t *tally) add(k int) {
	t.n.Add(int64(k))
	t.signal.Emit()
}

// waitFor waits until t counted n.
func (t *tally) waitFor(n int) {
	t.signal.Await(context.Background(), func() bool { return t.n.Load() >= int64(n) })
}

// startStats collects, burst by burst, when handlers started, in ms after
// a reference, and reports the median over the bursts of each burst's
// first, p50 and p99 start.
type startStats struct{ first, p50, p99 []float64 }

// add takes one burst's start times (unix ns) less from.
func (s *startStats) add(starts []atomic.Int64, from int64) {
	ds := make([]float64, len(starts))
	for k := range starts {
		ds[k] = float64(starts[k].Load()-from) / 1e6
	}
	slices.Sort(ds)
	n := len(ds)
	s.first, s.p50, s.p99 = append(s.first, ds[0]), append(s.p50, ds[n/2]), append(s.p99, ds[n*99/100])
}

// report reports the medians, the first start's too when first is set.
func (s *startStats) report(b *testing.B, first bool) {
	b.Helper()
	median := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
	if first {
		b.ReportMetric(median(s.first), "start-first-ms")
	}
	b.ReportMetric(median(s.p50), "start-p50-ms")
	b.ReportMetric(median(s.p99), "start-p99-ms")
}
