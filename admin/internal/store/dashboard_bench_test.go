package store

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// BenchmarkDashboard measures the reads of one GetDashboard (jobs,
// executors, and run counts of each of the last 7 days in the local zone)
// on a database of CARILLON_BENCH_RUNS settled runs over the last 30 days,
// generated with recursive INSERTs (about a minute per million runs here),
// or kept at CARILLON_BENCH_DB if set. It is skipped without
// CARILLON_BENCH_RUNS:
//
//	CARILLON_BENCH_RUNS=5000000 CARILLON_BENCH_DB=/tmp/runs5m.db go test -run '^$' -bench Dashboard -benchtime 3x ./admin/internal/store/
//
// "counters" is RunStore.Count as it is (run_counts, migrations 0005 and 0007),
// "counters-member" the same for a MEMBER of one group; "scan" counts over
// the runs table, as RunStore.Count did before.
func BenchmarkDashboard(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("CARILLON_BENCH_RUNS"))
	if n <= 0 {
		b.Skip("set CARILLON_BENCH_RUNS to the runs to generate, e.g. 5000000")
	}
	ctx := context.Background()
	path := os.Getenv("CARILLON_BENCH_DB")
	if path == "" {
		path = filepath.Join(b.TempDir(), "carillon.db")
	}
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var have int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&have); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	if have < n {
		start := time.Now()
		from := now.AddDate(0, 0, -30).UnixMilli()
		step := max((now.UnixMilli()-from)/int64(n), 1)
		const chunk = 500_000
		for k := have; k < n; k += chunk {
			_, err := s.w.ExecContext(ctx, `
				WITH RECURSIVE i(k) AS (SELECT $1 UNION ALL SELECT k + 1 FROM i WHERE k + 1 < $2)
				INSERT INTO runs (job_id, group_id, handler, trigger_type, scheduled_at, triggered_at, status, finished_at, due_at)
				SELECT 1 + k % 1000, 1, 'h', 1, $3 + k * $4, $3 + k * $4, CASE WHEN k % 10 = 0 THEN $5 ELSE $6 END, $3 + k * $4, $3 + k * $4
				FROM i`, k, min(k+chunk, n), from, step,
				carillonv1.RunStatus_RUN_STATUS_FAILED, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED)
			if err != nil {
				b.Fatal(err)
			}
		}
		if _, err := s.foldRunCounts(ctx, 1<<62, 0, true); err != nil {
			b.Fatal(err)
		}
		b.Logf("generated %d runs in %s", n-have, time.Since(start).Round(time.Second))
	}
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.Local)
	dashboard := func(count func(ctx context.Context, from, to time.Time) (map[carillonv1.RunStatus]int64, error)) {
		ctx := WithAPIReads(ctx)
		if _, _, err := s.Jobs.Count(ctx, AllGroups); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Registry.Count(ctx, now.Add(-time.Minute), AllGroups); err != nil {
			b.Fatal(err)
		}
		var total int64
		for d := -6; d <= 0; d++ {
			counts, err := count(ctx, today.AddDate(0, 0, d), today.AddDate(0, 0, d+1))
			if err != nil {
				b.Fatal(err)
			}
			for _, c := range counts {
				total += c
			}
		}
		if total == 0 {
			b.Fatal("no runs counted")
		}
	}
	b.Run("counters", func(b *testing.B) {
		for b.Loop() {
			dashboard(func(ctx context.Context, from, to time.Time) (map[carillonv1.RunStatus]int64, error) {
				return s.Runs.Count(ctx, from, to, AllGroups)
			})
		}
	})
	b.Run("counters-member", func(b *testing.B) { // a MEMBER of group 1 (migration 0007)
		for b.Loop() {
			dashboard(func(ctx context.Context, from, to time.Time) (map[carillonv1.RunStatus]int64, error) {
				return s.Runs.Count(ctx, from, to, Groups{IDs: []int64{1}})
			})
		}
	})
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			dashboard(func(ctx context.Context, from, to time.Time) (map[carillonv1.RunStatus]int64, error) {
				counts := map[carillonv1.RunStatus]int64{}
				return counts, countRuns(ctx, s.reader(ctx), s.d, counts, from.UnixMilli(), to.UnixMilli(), AllGroups)
			})
		}
	})
}
