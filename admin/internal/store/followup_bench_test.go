package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// followUpBatch is how many runs the follow-up benchmarks settle a call.
const followUpBatch = 1000

// BenchmarkSettleFixDelay measures settling the fires of 1,000 FIX_DELAY
// jobs in one batch: each sets its job's next fire once nothing of its
// fire is left (rows/s per run settled; compare SettleRuns/batch=1000).
func BenchmarkSettleFixDelay(b *testing.B) {
	benchmarkFollowUps(b, func(j *store.Job, _ []int64) {
		j.ScheduleType, j.IntervalSeconds = carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY, 1
	})
}

// BenchmarkSettleParents measures settling runs of 1,000 jobs that each
// have a child job in one batch: each success stores its child's run.
func BenchmarkSettleParents(b *testing.B) {
	benchmarkFollowUps(b, func(j *store.Job, children []int64) { j.ChildJobIDs = children })
}

// benchmarkFollowUps settles, a call, the running runs of followUpBatch
// jobs made by edit (given a child job of its own for each, made first).
func benchmarkFollowUps(b *testing.B, edit func(j *store.Job, children []int64)) {
	b.Helper()
	for _, be := range benchBackends {
		b.Run(be.Name, func(b *testing.B) {
			skipUnserved(b, be)
			ctx := context.Background()
			s, _ := benchSetupOn(b, be.DB(b), 0, time.Time{})
			grp, err := s.Groups.Create(ctx, store.Group{AppName: "followups", Title: "followups", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, t0)
			if err != nil {
				b.Fatal(err)
			}
			js := make([]store.Job, 0, followUpBatch)
			for range followUpBatch {
				child, err := s.Jobs.Create(ctx, newJob(grp.ID, time.Time{}), t0)
				if err != nil {
					b.Fatal(err)
				}
				j := newJob(grp.ID, time.Time{})
				j.Enabled = true
				edit(&j, []int64{child.ID})
				if j, err = s.Jobs.Create(ctx, j, t0); err != nil {
					b.Fatal(err)
				}
				js = append(js, j)
			}
			runs := make([]store.Run, 0, b.N*followUpBatch)
			for i := range b.N {
				for _, j := range js {
					r := pendingRun(j, t0.Add(time.Duration(i)*time.Second))
					r.Status = carillonv1.RunStatus_RUN_STATUS_RUNNING
					runs = append(runs, *r)
				}
			}
			stored, err := s.Runs.Insert(ctx, runs)
			if err != nil {
				b.Fatal(err)
			}
			results := make([]store.Result, followUpBatch)
			b.ResetTimer()
			for i := range b.N {
				for k := range results {
					results[k] = store.Result{RunID: stored[i*followUpBatch+k].ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED,
						FinishedAt: t0.Add(time.Duration(i) * time.Second)}
				}
				settled, err := s.Runs.Settle(ctx, followup.Policy{}, results)
				if err != nil {
					b.Fatal(err)
				}
				if len(settled.Runs) != followUpBatch {
					b.Fatalf("settled %d runs, want %d", len(settled.Runs), followUpBatch)
				}
			}
			reportRows(b, b.N*followUpBatch)
		})
	}
}
