package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// BenchmarkSettleFixDelay measures settling the fires of 1,000 FIX_DELAY
// jobs in one batch: each sets its job's next fire once nothing of its
// fire is left (rows/s per run settled; compare SettleRuns/batch=1000).
func BenchmarkSettleFixDelay(b *testing.B) {
	const batch = 1000
	for _, be := range benchBackends {
		b.Run(be.Name, func(b *testing.B) {
			skipUnserved(b, be)
			ctx := context.Background()
			s, _ := benchSetupOn(b, be.DB(b), 0, time.Time{})
			grp, err := s.Groups.Create(ctx, store.Group{AppName: "fixdelay", Title: "fixdelay", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, t0)
			if err != nil {
				b.Fatal(err)
			}
			js := make([]store.Job, batch)
			for i := range js {
				js[i] = newJob(grp.ID, time.Time{})
				js[i].ScheduleType, js[i].IntervalSeconds, js[i].Enabled = carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY, 1, true
			}
			if err := s.Jobs.CreateMany(ctx, js, t0); err != nil {
				b.Fatal(err)
			}
			all, err := s.Jobs.List(ctx, store.JobFilter{GroupID: grp.ID, Limit: batch})
			if err != nil {
				b.Fatal(err)
			}
			runs := make([]store.Run, 0, b.N*batch)
			for i := range b.N {
				for _, j := range all {
					r := pendingRun(j, t0.Add(time.Duration(i)*time.Second))
					r.Status = carillonv1.RunStatus_RUN_STATUS_RUNNING
					runs = append(runs, *r)
				}
			}
			stored, err := s.Runs.Insert(ctx, runs)
			if err != nil {
				b.Fatal(err)
			}
			results := make([]store.Result, batch)
			b.ResetTimer()
			for i := range b.N {
				for k := range results {
					results[k] = store.Result{RunID: stored[i*batch+k].ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: t0.Add(time.Duration(i) * time.Second)}
				}
				settled, err := s.Runs.Settle(ctx, followup.Policy{}, results)
				if err != nil {
					b.Fatal(err)
				}
				if len(settled.Runs) != batch {
					b.Fatalf("settled %d runs, want %d", len(settled.Runs), batch)
				}
			}
			reportRows(b, b.N*batch)
		})
	}
}
