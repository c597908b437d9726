package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/client"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// seedHistory stores, straight into the database at path (the admin is
// not running yet), n settled runs of group's jobs spread evenly over the
// 30 days before now (one in ten FAILED), with one recursive INSERT, so
// that the admin serves and scans over a large runs table.
func seedHistory(ctx context.Context, path string, n int, group int64, jobs int) error {
	st, err := store.Open(ctx, path) // creates and migrates the database
	if err != nil {
		return err
	}
	_ = st.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)")
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	now := time.Now()
	from := now.AddDate(0, 0, -30).UnixMilli()
	step := max((now.UnixMilli()-from)/int64(n), 1)
	_, err = db.ExecContext(ctx, `
		WITH RECURSIVE i(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM i WHERE k + 1 < ?)
		INSERT INTO runs (job_id, group_id, handler, trigger_type, scheduled_at, triggered_at, status, finished_at, due_at,
		                  executor_address, trigger_message, message)
		SELECT 1 + k % ?, ?, ?, 1, ? + k * ?, ? + k * ?, CASE WHEN k % 10 = 0 THEN ? ELSE ? END, ? + k * ? + 5, ? + k * ?,
		       'http://127.0.0.1:9999', 'loadtest history', ''
		FROM i`,
		n, max(jobs, 1), group, handlerName, from, step, from, step,
		carillonv1.RunStatus_RUN_STATUS_FAILED, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, from, step, from, step)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	return nil
}

// readers runs n clients that call ListRuns (a page of 100, newest first)
// and GetDashboard (the last 7 days) in turn, back to back, each as its own
// HTTP client, until stop is called; then it returns what they measured.
type readers struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	calls  map[string][]float64 // ms, by method
	errs   map[string]int       // by method and code
	start  time.Time
}

func startReaders(ctx context.Context, n int, baseURL, token string) *readers {
	ctx, cancel := context.WithCancel(ctx)
	r := &readers{cancel: cancel, calls: map[string][]float64{}, errs: map[string]int{}, start: time.Now()}
	for i := range n {
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}, Timeout: time.Minute}
		c := client.New(hc, baseURL, client.WithToken(token))
		runs, report := c.Runs, c.Reports
		r.wg.Go(func() {
			for k := i; ctx.Err() == nil; k++ {
				t := time.Now()
				var err error
				method := "ListRuns"
				if k%2 == 0 {
					_, err = runs.ListRuns(ctx, &carillonv1.ListRunsRequest{PageSize: 100})
				} else {
					method = "GetDashboard"
					_, err = report.GetDashboard(ctx, &carillonv1.GetDashboardRequest{})
				}
				if ctx.Err() != nil {
					return
				}
				r.record(method, time.Since(t), err)
				if err != nil {
					time.Sleep(100 * time.Millisecond) // back off, as a client told resource_exhausted should
				}
			}
		})
	}
	return r
}

func (r *readers) record(method string, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs[method+" "+connect.CodeOf(err).String()]++
		return
	}
	r.calls[method] = append(r.calls[method], float64(d.Microseconds())/1000)
}

// stop stops the clients and returns their figures.
func (r *readers) stop() *readerInfo {
	r.cancel()
	r.wg.Wait()
	secs := time.Since(r.start).Seconds()
	info := &readerInfo{Methods: map[string]readerMethod{}, Errors: r.errs}
	for m, ms := range r.calls {
		sort.Float64s(ms)
		info.Methods[m] = readerMethod{Calls: len(ms), PerSecond: float64(len(ms)) / secs, Latency: quantiles(ms)}
	}
	return info
}

// readerInfo is what the --readers clients measured.
type readerInfo struct {
	Clients int                     `json:"clients"`
	Methods map[string]readerMethod `json:"methods"`
	Errors  map[string]int          `json:"errors,omitempty"`
}

type readerMethod struct {
	Calls     int          `json:"calls"`
	PerSecond float64      `json:"per_s"`
	Latency   latenessInfo `json:"latency_ms"`
}
