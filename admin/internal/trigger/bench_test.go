package trigger_test

import (
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// BenchmarkFire measures the dispatch of an instant's fires, as the scan
// hands them over: 256 claimed runs of 256 jobs, read (job cache), routed
// (ROUND_ROBIN over two executors), sent in one RunBatch per executor over
// loopback HTTP, and their dispatches recorded (Wait flushes them, since
// no result comes). ns/op is per instant; runs/s is the rate.
//
// The runs are sent on the instant their claim stored (the trigger's
// clock): BenchmarkFireLate sends them late.
//
//	go test -run '^$' -bench Fire -count 5 ./admin/internal/trigger/
func BenchmarkFire(b *testing.B) { benchmarkFire(b, 0) }

// BenchmarkFireLate is BenchmarkFire with every run sent 170 ms after the
// instant its claim stored (an overloaded admin): each dispatch also
// records when it was really sent.
func BenchmarkFireLate(b *testing.B) { benchmarkFire(b, 170*time.Millisecond) }

func benchmarkFire(b *testing.B, late time.Duration) {
	b.Helper()
	const n = 256
	var urls []string
	for range 2 {
		urls = append(urls, testkit.ServeExecutor(b, &acceptor{}))
	}
	bd := setup(b, dbtest.SQLite, carillonv1.AddressMode_ADDRESS_MODE_MANUAL, urls...)
	startLoops(b, bd.st) // checkpoints and folds, as an admin runs them
	jobs := make([]store.Job, n)
	for i := range jobs {
		jobs[i] = bd.job(b, func(j *store.Job) { j.RouteStrategy = carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN })
	}
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		at := bd.clock.Now()     // the instant, now: sent at once
		claimed := at.Add(-late) // when the claim says it was sent
		runs := make([]store.Run, n)
		for k, j := range jobs {
			runs[k] = store.Run{JobID: j.ID, GroupID: j.GroupID, Handler: j.Handler, ShardTotal: 1,
				TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, ScheduledAt: at.Add(time.Duration(i) * time.Millisecond),
				TriggeredAt: claimed, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING}
		}
		runs, err := bd.st.Runs.Insert(b.Context(), runs)
		if err != nil {
			b.Fatal(err)
		}
		es := make([]schedule.Entry, n)
		for k := range runs {
			es[k] = schedule.Entry{RunID: runs[k].ID, JobID: runs[k].JobID, At: at, TriggerType: runs[k].TriggerType,
				Claimed: true, Run: &runs[k], StopSeq: bd.st.Jobs.StopSeq()}
		}
		b.StartTimer()
		bd.trig.Dispatcher.Fire(es)
		bd.trig.Wait()
		b.StopTimer()
		if r, _ := bd.st.Runs.Get(b.Context(), runs[n-1].ID); r.ExecutorAddress == "" || r.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING {
			b.Fatalf("run not dispatched: %s on %q (%s)", r.Status, r.ExecutorAddress, r.Message)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "runs/s")
}
