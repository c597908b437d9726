package admin_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	_ "modernc.org/sqlite"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/internal/admintest"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
)

// BenchmarkConsoleFirstPage measures, in headless Chromium, the time from
// opening the console's jobs page, and its runs page, to their first rows
// shown, on a database of 10,000 jobs and CARILLON_BENCH_RUNS runs (kept at
// CARILLON_BENCH_DB if set). Skipped without CARILLON_BENCH_RUNS:
//
//	CARILLON_BENCH_RUNS=5000000 CARILLON_BENCH_DB=/tmp/console5m.db go test -run '^$' -bench ConsoleFirstPage -benchtime 10x ./admin/
func BenchmarkConsoleFirstPage(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("CARILLON_BENCH_RUNS"))
	if n <= 0 {
		b.Skip("set CARILLON_BENCH_RUNS to the runs to generate, e.g. 5000000")
	}
	path := os.Getenv("CARILLON_BENCH_DB")
	if path == "" {
		path = filepath.Join(b.TempDir(), "carillon.db")
	}
	_ = dbtest.Open(b, path).Close() // the schema
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		b.Fatal(err)
	}
	var jobs, runs int
	if err := db.QueryRow(`SELECT count(*) FROM jobs`).Scan(&jobs); err != nil {
		b.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM runs`).Scan(&runs); err != nil {
		b.Fatal(err)
	}
	now := time.Now().UnixMilli()
	for _, q := range []struct {
		skip bool
		sql  string
		args []any
	}{
		{jobs > 0, `INSERT INTO groups (app_name, title, address_mode, created_at, updated_at) VALUES ('bench', 'Bench', 1, ?, ?)`, []any{now, now}},
		{jobs > 0, `WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM i WHERE k < 10000)
			INSERT INTO jobs (group_id, description, handler, schedule_type, misfire_strategy, route_strategy, block_strategy, created_at, updated_at)
			SELECT 1, 'job ' || k, 'h' || (k % 50), 1, 1, 1, 1, ?, ? FROM i`, []any{now, now}},
		{runs >= n, `WITH RECURSIVE i(k) AS (SELECT ? UNION ALL SELECT k + 1 FROM i WHERE k + 1 < ?)
			INSERT INTO runs (job_id, group_id, handler, trigger_type, scheduled_at, triggered_at, status, finished_at, due_at)
			SELECT 1 + k % 10000, 1, 'h', 1, ? + k, ? + k, CASE WHEN k % 10 = 0 THEN 3 ELSE 2 END, ? + k, ? + k FROM i`,
			[]any{runs, n, now - int64(n), now - int64(n), now - int64(n), now - int64(n)}},
	} {
		if q.skip {
			continue
		}
		if _, err := db.Exec(q.sql, q.args...); err != nil {
			b.Fatal(err)
		}
	}
	db.Close()

	url := admintest.Start(b, admin.Config{DBPath: path, Token: token, AdminPassword: adminPassword, RetentionDays: -1}).URL
	br := newBrowser(b, url)
	br.signIn(b, "admin", adminPassword)
	for _, page := range []struct{ name, hash string }{{"jobs", "#/jobs"}, {"runs", "#/runs"}} {
		b.Run(page.name, func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				br.run(b, "open "+page.name,
					chromedp.Navigate("about:blank"),
					chromedp.Navigate(url+"/"+page.hash),
					chromedp.WaitVisible(`main tbody tr`))
				total += time.Since(start)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-page")
		})
	}
}
