package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// The store benchmarks measure the writes and reads of the fire path on a
// real database file: ns/op is per call, rows/s per row written or read.
// Run them with:
//
//	go test -run '^$' -bench . -benchtime 2s ./admin/internal/store/
//
// The writes of the fire path (ClaimFires, RouteRuns, SettleRuns) run
// over each backend, as sub-benchmarks named sqlite and postgres; the
// postgres ones run where CARILLON_TEST_POSTGRES names a server.

// benchSetup opens a store on a new SQLite file with one group and n
// enabled FIX_RATE 1 s jobs whose next fire is first, and runs its loops
// (checkpoints, folds) as an admin does.
func benchSetup(b *testing.B, n int, first time.Time) (*store.Store, []store.Job) {
	b.Helper()
	return benchSetupOn(b, filepath.Join(b.TempDir(), "carillon.db"), n, first)
}

// benchBackends are the backends the writes of the fire path are measured
// over, as sub-benchmarks named after them (skipUnserved).
var benchBackends = []dbtest.Backend{dbtest.SQLite, dbtest.Postgres}

// skipUnserved skips b over PostgreSQL where pgtest.EnvURL names no server.
func skipUnserved(b *testing.B, be dbtest.Backend) {
	b.Helper()
	if be.Name == dbtest.Postgres.Name && os.Getenv(pgtest.EnvURL) == "" {
		b.Skip("no PostgreSQL server: set " + pgtest.EnvURL)
	}
}

// benchSetupOn is benchSetup on db, a SQLite file or a PostgreSQL URL.
func benchSetupOn(b *testing.B, db string, n int, first time.Time) (*store.Store, []store.Job) {
	b.Helper()
	ctx := context.Background()
	s := dbtest.Open(b, db)
	start(b, s.Loops()...)
	g, err := s.Groups.Create(ctx, store.Group{AppName: "bench", Title: "bench", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, t0)
	if err != nil {
		b.Fatal(err)
	}
	jobs := make([]store.Job, n)
	for i := range jobs {
		jobs[i] = newJob(g.ID, first)
	}
	if err := s.Jobs.CreateMany(ctx, jobs, t0); err != nil {
		b.Fatal(err)
	}
	for i := range jobs {
		jobs[i].ID = int64(i + 1) // JobStore.CreateMany returns no IDs; a new table numbers rows from 1
	}
	return s, jobs
}

// pendingRuns stores n pending SCHEDULE runs of job j, one per millisecond
// from t0, in the given status, and returns their IDs.
func pendingRuns(b *testing.B, s *store.Store, j store.Job, n int, status carillonv1.RunStatus) []int64 {
	b.Helper()
	ids := make([]int64, 0, n)
	for start := 0; start < n; start += 10_000 {
		runs := make([]store.Run, min(10_000, n-start))
		for i := range runs {
			r := pendingRun(j, t0.Add(time.Duration(start+i)*time.Millisecond))
			r.Status = status
			runs[i] = *r
		}
		stored, err := s.Runs.Insert(context.Background(), runs)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range stored {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

func reportRows(b *testing.B, rows int) {
	b.Helper()
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkClaimFires measures the scan's claim transaction: advance each
// of batch jobs by one fire and insert its pending run.
func BenchmarkClaimFires(b *testing.B) {
	for _, batch := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			for _, be := range benchBackends {
				b.Run(be.Name, func(b *testing.B) {
					skipUnserved(b, be)
					s, jobs := benchSetupOn(b, be.DB(b), batch, t0)
					claims := make([]store.Claim, batch)
					b.ResetTimer()
					for i := range b.N {
						due := t0.Add(time.Duration(i) * time.Second)
						for k, j := range jobs {
							claims[k] = store.Claim{JobID: j.ID, Due: due, Next: due.Add(time.Second), Runs: []store.Run{*pendingRun(j, due)}}
						}
						runs, err := s.Fires.Claim(context.Background(), claims)
						if err != nil {
							b.Fatal(err)
						}
						if len(runs) != batch {
							b.Fatalf("claimed %d fires, want %d", len(runs), batch)
						}
					}
					reportRows(b, b.N*batch)
				})
			}
		})
	}
}

// BenchmarkClaimRuns measures claiming batch pending runs in one
// transaction, the batched dispatch path.
func BenchmarkClaimRuns(b *testing.B) {
	for _, batch := range []int{1, 256} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			for _, be := range benchBackends {
				b.Run(be.Name, func(b *testing.B) {
					skipUnserved(b, be)
					s, jobs := benchSetupOn(b, be.DB(b), 1, time.Time{})
					ids := pendingRuns(b, s, jobs[0], b.N*batch, carillonv1.RunStatus_RUN_STATUS_PENDING)
					claims := make([]store.RunClaim, batch)
					b.ResetTimer()
					for i := range b.N {
						for k := range claims {
							claims[k] = store.RunClaim{RunID: ids[i*batch+k], TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE}
						}
						runs, err := s.Fires.ClaimRuns(context.Background(), claims, t0)
						if err != nil {
							b.Fatal(err)
						}
						if len(runs) != batch {
							b.Fatalf("claimed %d runs, want %d", len(runs), batch)
						}
					}
					reportRows(b, b.N*batch)
				})
			}
		})
	}
}

// BenchmarkRecordDispatches measures recording how batch running runs were
// dispatched, in one transaction.
func BenchmarkRecordDispatches(b *testing.B) {
	for _, batch := range []int{1, 256} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			for _, be := range benchBackends {
				b.Run(be.Name, func(b *testing.B) {
					skipUnserved(b, be)
					s, jobs := benchSetupOn(b, be.DB(b), 1, time.Time{})
					ids := pendingRuns(b, s, jobs[0], b.N*batch, carillonv1.RunStatus_RUN_STATUS_RUNNING)
					ds := make([]store.Dispatch, batch)
					b.ResetTimer()
					for i := range b.N {
						for k := range ds {
							ds[k] = store.Dispatch{RunID: ids[i*batch+k], ExecutorAddress: "http://127.0.0.1:9999", ShardTotal: 1,
								TriggerMessage: "executors from group bench (AUTO); round robin; shard 0 of 1; dispatch to http://127.0.0.1:9999 took 1.2ms"}
						}
						if _, err := s.Runs.RecordDispatches(context.Background(), followup.Policy{}, ds); err != nil {
							b.Fatal(err)
						}
					}
					reportRows(b, b.N*batch)
				})
			}
		})
	}
}

// BenchmarkRouteRuns measures recording where runs are about to be sent,
// before their calls (fencing, issue 29): one write per batch of a fire.
func BenchmarkRouteRuns(b *testing.B) {
	for _, batch := range []int{1, 256} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			for _, be := range benchBackends {
				b.Run(be.Name, func(b *testing.B) {
					skipUnserved(b, be)
					s, jobs := benchSetupOn(b, be.DB(b), 1, time.Time{})
					ids := pendingRuns(b, s, jobs[0], b.N*batch, carillonv1.RunStatus_RUN_STATUS_RUNNING)
					routes := make([]store.Route, batch)
					b.ResetTimer()
					for i := range b.N {
						for k := range routes {
							routes[k] = store.Route{RunID: ids[i*batch+k], Address: "http://127.0.0.1:9999"}
						}
						routed, err := s.Runs.Route(context.Background(), routes)
						if err != nil {
							b.Fatal(err)
						}
						if len(routed) != batch {
							b.Fatalf("routed %d runs, want %d", len(routed), batch)
						}
					}
					reportRows(b, b.N*batch)
				})
			}
		})
	}
}

// BenchmarkSettleRuns measures recording batch results (SUCCEEDED, no
// retries or children) in one transaction, as ReportResults does.
func BenchmarkSettleRuns(b *testing.B) {
	for _, batch := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			for _, be := range benchBackends {
				b.Run(be.Name, func(b *testing.B) {
					skipUnserved(b, be)
					s, jobs := benchSetupOn(b, be.DB(b), 1, time.Time{})
					ids := pendingRuns(b, s, jobs[0], b.N*batch, carillonv1.RunStatus_RUN_STATUS_RUNNING)
					results := make([]store.Result, batch)
					b.ResetTimer()
					for i := range b.N {
						for k := range results {
							results[k] = store.Result{RunID: ids[i*batch+k], Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: t0}
						}
						settled, err := s.Runs.Settle(context.Background(), followup.Policy{}, results)
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
		})
	}
}

// BenchmarkDueJobsIdle measures the scan's query when nothing is due: jobs
// enabled jobs whose next fires are spread over the day after the next hour.
func BenchmarkDueJobsIdle(b *testing.B) {
	for _, n := range []int{100_000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			s, _ := benchSetup(b, 0, time.Time{})
			g, err := s.Groups.List(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			jobs := make([]store.Job, n)
			for i := range jobs {
				jobs[i] = newJob(g[0].ID, t0.Add(time.Hour+time.Duration(i)*24*time.Hour/time.Duration(n)))
			}
			if err := s.Jobs.CreateMany(context.Background(), jobs, t0); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				due, err := s.Fires.DueJobs(context.Background(), t0.Add(5*time.Second), t0.Add(5*time.Second), 1000)
				if err != nil {
					b.Fatal(err)
				}
				if len(due) != 0 {
					b.Fatalf("%d jobs due, want 0", len(due))
				}
			}
		})
	}
}

// BenchmarkNext measures the read that ends each scan: the earliest next
// fire of 100,000 jobs, and of the workflows (none), in one query (Next)
// or two (the jobs' NextFireAt and the workflows').
func BenchmarkNext(b *testing.B) {
	ctx := context.Background()
	s, _ := benchSetup(b, 100_000, t0)
	b.Run("one", func(b *testing.B) {
		for range b.N {
			if n, err := s.Fires.Next(ctx); err != nil || !n.Jobs.Equal(t0) {
				b.Fatalf("Next = %+v, %v; want the jobs' at t0", n, err)
			}
		}
	})
	b.Run("two", func(b *testing.B) {
		for range b.N {
			if next, _, err := s.Fires.NextFireAt(ctx); err != nil || !next.Equal(t0) {
				b.Fatalf("NextFireAt = %v, %v; want t0", next, err)
			}
			if _, _, err := s.Workflows.NextFireAt(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDueJobs measures the scan's query reading 1,000 due jobs (the
// columns the scan uses) out of 100,000.
func BenchmarkDueJobs(b *testing.B) {
	s, _ := benchSetup(b, 100_000, t0)
	b.ResetTimer()
	for range b.N {
		due, err := s.Fires.DueJobs(context.Background(), t0.Add(5*time.Second), t0.Add(5*time.Second), 1000)
		if err != nil {
			b.Fatal(err)
		}
		if len(due) != 1000 {
			b.Fatalf("%d jobs due, want 1000", len(due))
		}
	}
	reportRows(b, b.N*1000)
}

// BenchmarkJobDefinitions measures the dispatch's job lookup: 256 jobs by
// ID, of 10,000, read from the database ("read": a job changed since the
// last lookup) or from the job cache ("cached").
func BenchmarkJobDefinitions(b *testing.B) {
	s, jobs := benchSetup(b, 10_000, t0)
	ids := make([]int64, 256)
	for i := range ids {
		ids[i] = jobs[i*37].ID
	}
	for _, cached := range []bool{false, true} {
		name := map[bool]string{false: "read", true: "cached"}[cached]
		b.Run(name, func(b *testing.B) {
			for range b.N {
				if !cached {
					b.StopTimer()
					s.JobsChanged()
					b.StartTimer()
				}
				got, err := s.Jobs.Definitions(context.Background(), ids)
				if err != nil {
					b.Fatal(err)
				}
				if len(got) != len(ids) {
					b.Fatalf("%d jobs, want %d", len(got), len(ids))
				}
			}
			reportRows(b, b.N*len(ids))
		})
	}
}
