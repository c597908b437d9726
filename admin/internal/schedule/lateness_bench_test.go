package schedule_test

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/service"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

var (
	latenessWindow = flag.Duration("lateness.window", 10*time.Second, "BenchmarkSchedulerLateness: measured window per run")
	latenessWarmup = flag.Duration("lateness.warmup", 3*time.Second, "BenchmarkSchedulerLateness: unmeasured start per run")
)

// BenchmarkSchedulerLateness runs the scheduler alone (real SQLite store,
// read-ahead scan, claims, timer queue) into a dispatcher that only records
// time.Now() minus Entry.At for each entry of the batch it is handed, with n jobs firing every second: "cron", all on
// the same whole second ("*/1 * * * * ?", a burst of n each second), and
// "spread", FIX_RATE 1 s with first fires spread over the second. Each
// iteration is one run of -lateness.warmup plus -lateness.window; it
// reports the lateness of the fires whose instant is in the window, the
// fire rate, and the fires missed (expected in the window but never handed
// to the dispatcher) or duplicated. Run it alone, once:
//
//	go test -run '^$' -bench SchedulerLateness -benchtime 1x ./admin/internal/schedule/
func BenchmarkSchedulerLateness(b *testing.B) {
	for _, n := range []int{1000, 10_000} {
		for _, kind := range []string{"cron", "spread"} {
			b.Run(fmt.Sprintf("fires=%d/%s", n, kind), func(b *testing.B) {
				var all latenessResult
				for range b.N {
					r := runLateness(b, n, kind == "spread")
					all.late = append(all.late, r.late...)
					all.fires += r.fires
					all.missed += r.missed
					all.duplicated += r.duplicated
				}
				slices.Sort(all.late)
				ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
				b.ReportMetric(ms(quantile(all.late, 0.50)), "p50-ms")
				b.ReportMetric(ms(quantile(all.late, 0.99)), "p99-ms")
				b.ReportMetric(ms(quantile(all.late, 1)), "max-ms")
				b.ReportMetric(float64(all.fires)/(latenessWindow.Seconds()*float64(b.N)), "fires/s")
				b.ReportMetric(float64(all.missed), "missed")
				b.ReportMetric(float64(all.duplicated), "duplicated")
			})
		}
	}
}

type latenessResult struct {
	late               []time.Duration
	fires              int
	missed, duplicated int
}

type fireKey struct {
	job int64
	at  int64 // unix milliseconds
}

func runLateness(b *testing.B, n int, spread bool) latenessResult {
	b.Helper()
	b.StopTimer()
	ctx := context.Background()
	st := dbtest.SQLite.Open(b)
	defer st.Close()
	loops := service.NewGroup(st.Loops()...) // checkpoints and folds, as an admin runs them
	if err := loops.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer loops.Stop()
	now := time.Now()
	g, err := st.Groups.Create(ctx, store.Group{AppName: "bench", Title: "bench", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, now)
	if err != nil {
		b.Fatal(err)
	}
	first := now.Truncate(time.Second).Add(2 * time.Second)
	jobs := make([]store.Job, n)
	for i := range jobs {
		j := store.Job{GroupID: g.ID, Description: "bench", Handler: "noop", Enabled: true, NextFireAt: first,
			ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "*/1 * * * * ?"}
		if spread {
			j.ScheduleType, j.Cron, j.IntervalSeconds = carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, "", 1
			j.NextFireAt = first.Add(time.Duration(i) * time.Second / time.Duration(n)).Truncate(time.Millisecond)
		}
		jobs[i] = j
	}
	if err := st.Jobs.CreateMany(ctx, jobs, now); err != nil {
		b.Fatal(err)
	}

	windowStart := first.Add(*latenessWarmup)
	windowEnd := windowStart.Add(*latenessWindow)
	// Only the fire loop calls the dispatcher; Run returning orders these writes
	// before the reads below.
	seen := make(map[fireKey]int, n*int(latenessWindow.Seconds()+latenessWarmup.Seconds()+8))
	var late []time.Duration
	fire := func(es []schedule.Entry) {
		now := time.Now()
		for _, e := range es {
			if e.At.Before(windowStart) || !e.At.Before(windowEnd) {
				continue
			}
			k := fireKey{e.JobID, e.At.UnixMilli()}
			seen[k]++
			if seen[k] == 1 {
				late = append(late, now.Sub(e.At))
			}
		}
	}
	s := schedule.New(schedule.Config{Store: st, Logger: slog.New(slog.DiscardHandler)})
	runCtx, cancel := context.WithDeadline(ctx, windowEnd.Add(time.Second))
	defer cancel()
	b.StartTimer()
	if err := s.Run(runCtx, schedule.DispatchFunc(fire)); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()

	r := latenessResult{late: late}
	for _, c := range seen {
		r.fires += c
		r.duplicated += c - 1
	}
	expected := 0
	for _, j := range jobs {
		for at := j.NextFireAt; at.Before(windowEnd); at = at.Add(time.Second) {
			if !at.Before(windowStart) {
				expected++
			}
		}
	}
	r.missed = expected - len(seen)
	return r
}

// quantile returns the q-quantile of sorted ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(q*float64(len(ds))+0.5) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}
