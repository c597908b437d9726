package admin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// scrape is one parsed scrape of /metrics, and its text.
type scrape struct {
	fams map[string]*dto.MetricFamily
	text []byte
}

// scrapeMetrics fetches and parses url, a /metrics page.
func scrapeMetrics(t *testing.T, url string) scrape {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	text, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, res.Status, text)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("parse the scrape: %v", err)
	}
	return scrape{fams: fams, text: text}
}

// value returns the value of the sample of name whose labels include the
// name=value pairs of labels: a counter's or gauge's value, a histogram's
// sample count; 0 when there is no such sample.
func (s scrape) value(name string, labels ...string) float64 {
	sum := 0.0
	for _, m := range s.fams[name].GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			found = found || (l.GetName() == labels[i] && l.GetValue() == labels[i+1])
		}
		if !found {
			return false
		}
	}
	return true
}

// boundedLabels are the only label names a carillon_ metric may have.
var boundedLabels = map[string]bool{"code": true, "route": true, "status": true, "strategy": true, "channel": true,
	"outcome": true, "procedure": true, "app": true, "lane": true, "version": true, "revision": true, "goversion": true}

// TestMetrics drives a real admin and a real SDK executor and reads what
// /metrics, on its own listener, says: a misfire seeded before the start
// (FIRE_ONCE_NOW), a cron job's fires, a failing job's run and its retry,
// the alarm that follows, API calls counted by procedure and code, and
// the state gauges. The scrape parses with expfmt, passes promtool check
// metrics when promtool is installed, and has bounded labels only.
func TestMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var hooks atomic.Int64
	webhook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hooks.Add(1)
	}))
	defer webhook.Close()

	// The misfire: a FIRE_ONCE_NOW job whose fire is a minute overdue
	// when the admin starts.
	db := dbtest.SQLite.DB(t)
	st := dbtest.Open(t, db)
	g, err := st.Groups.Create(ctx, store.Group{AppName: "metrics", Title: "Metrics"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Jobs.Create(ctx, store.Job{GroupID: g.ID, Description: "overdue", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE,
		IntervalSeconds: 3600, Handler: "ok", Enabled: true, NextFireAt: time.Now().Add(-time.Minute),
		MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW,
		RouteStrategy:   carillonv1.RouteStrategy_ROUTE_STRATEGY_FIRST}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	a := startAdminWith(t, admin.Config{DBPath: db, MetricsListen: "127.0.0.1:0", AlarmWebhook: webhook.URL}, http.DefaultClient)
	if a.Metrics == "" {
		t.Fatal("no metrics address with MetricsListen set")
	}
	// The API port does not serve them.
	if res, err := http.Get(a.URL + "/metrics"); err == nil {
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if bytes.Contains(body, []byte("carillon_fires_claimed_total")) {
			t.Error("the API port serves the metrics")
		}
	}
	c := newClients(a.URL, http.DefaultClient)
	// The admin's first scan finds the misfire; it runs beside the API,
	// so wait for it (on a busy machine it may come after the first scrape).
	var before scrape
	eventually(t, a.URL, 10*time.Second, func() error {
		before = scrapeMetrics(t, a.Metrics)
		if got := before.value("carillon_misfires_total", "strategy", "fire_once_now"); got != 1 {
			return fmt.Errorf("misfires{fire_once_now} = %v after starting on one overdue FIRE_ONCE_NOW job, want 1", got)
		}
		// Its fire, claimed with the misfire, finds no executor: once that
		// is counted, the executor started below cannot take it and add it
		// to the counts after this scrape (a busy machine routed it late).
		if got := before.value("carillon_dispatches_total", "code", "unroutable", "route", "first"); got != 1 {
			return fmt.Errorf("dispatches{unroutable,first} = %v, want 1: the overdue job's fire, with no executor yet", got)
		}
		return nil
	})
	if got := before.value("carillon_misfires_total", "strategy", "do_nothing"); got != 0 {
		t.Errorf("misfires{do_nothing} = %v, want 0", got)
	}

	addr := startExecutor(t, a.URL, "metrics")
	eventually(t, a.URL, 10*time.Second, func() error {
		if got := scrapeMetrics(t, a.Metrics).value("carillon_executors_online", "app", "metrics"); got != 1 {
			return fmt.Errorf("executors_online{app=metrics} = %v, want 1", got)
		}
		return nil
	})

	createJob(t, c, &carillonv1.Job{GroupId: g.ID, Description: "every second", Handler: "ok", Enabled: true,
		Schedule:      &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "* * * * * ?"},
		RouteStrategy: carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN})
	failing := createJob(t, c, &carillonv1.Job{GroupId: g.ID, Description: "fails once, retried once", Handler: "fail",
		Param: "on purpose", RetryCount: 1, RetryDelaySeconds: 1,
		Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}})
	if _, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: failing.Id}); err != nil {
		t.Fatal(err)
	}
	// A call refused for want of a credential is counted under its code.
	_, err = carillonv1connect.NewJobServiceClient(http.DefaultClient, a.URL).ListJobs(ctx, &carillonv1.ListJobsRequest{})
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("ListJobs without a credential: %v, want unauthenticated", err)
	}

	// Wait for three of the cron job's runs, both runs of the failing job,
	// and the failing job's alarm.
	var after scrape
	eventually(t, a.URL, 20*time.Second, func() error {
		after = scrapeMetrics(t, a.Metrics)
		delta := func(name string, labels ...string) float64 {
			return after.value(name, labels...) - before.value(name, labels...)
		}
		switch {
		case delta("carillon_runs_finished_total", "status", "succeeded") < 3:
			return fmt.Errorf("runs_finished{succeeded} rose by %v, want 3", delta("carillon_runs_finished_total", "status", "succeeded"))
		case delta("carillon_runs_finished_total", "status", "failed") < 2:
			return fmt.Errorf("runs_finished{failed} rose by %v, want 2 (the failing run and its retry)", delta("carillon_runs_finished_total", "status", "failed"))
		case hooks.Load() == 0 || after.value("carillon_alarms_total", "channel", "webhook", "outcome", "sent") < float64(hooks.Load()):
			return fmt.Errorf("alarms{webhook,sent} = %v, webhook received %d", after.value("carillon_alarms_total", "channel", "webhook", "outcome", "sent"), hooks.Load())
		}
		return nil
	})
	delta := func(name string, labels ...string) float64 {
		return after.value(name, labels...) - before.value(name, labels...)
	}
	succeeded := delta("carillon_runs_finished_total", "status", "succeeded")
	for _, c := range []struct {
		what     string
		got, min float64
		max      float64 // 0: no upper bound
	}{
		{"fires_scheduled rose by the cron job's fires", delta("carillon_fires_scheduled_total"), 3, 0},
		{"fires_claimed rose by every run dispatched (cron, manual, retry)", delta("carillon_fires_claimed_total"), succeeded + 2, 0},
		{"dispatches{ok,round_robin}: the cron job's", delta("carillon_dispatches_total", "code", "ok", "route", "round_robin"), 3, 0},
		{"dispatches{ok,first}: the failing job's run and its retry", delta("carillon_dispatches_total", "code", "ok", "route", "first"), 2, 2},
		{"fire_lateness observations: the scheduled fires", delta("carillon_fire_lateness_seconds"), 3, 0},
		{"run_start_lateness observations: runs the executor started", delta("carillon_run_start_lateness_seconds"), succeeded + 2, 0},
		{"run_duration observations", delta("carillon_run_duration_seconds"), succeeded + 2, 0},
		{"retries: the failing job's one retry", delta("carillon_retries_total"), 1, 1},
		{"alarms{webhook,failed}", after.value("carillon_alarms_total", "channel", "webhook", "outcome", "failed"), 0, 0},
		{"api_requests{CreateJob,ok}", delta("carillon_api_requests_total", "procedure", carillonv1connect.JobServiceCreateJobProcedure, "code", "ok"), 2, 2},
		{"api_requests{ListJobs,unauthenticated}", delta("carillon_api_requests_total", "procedure", carillonv1connect.JobServiceListJobsProcedure, "code", "unauthenticated"), 1, 1},
		{"api_requests{ReportResults,ok}: the executor's results", delta("carillon_api_requests_total", "procedure", carillonv1connect.RegistryServiceReportResultsProcedure, "code", "ok"), 1, 0},
		{"store_write_seconds observations", delta("carillon_store_write_seconds"), 1, 0},
		{"build_info", after.value("carillon_build_info"), 1, 1},
		{"executors_online{app=metrics}", after.value("carillon_executors_online", "app", "metrics"), 1, 1},
	} {
		if c.got < c.min || (c.max > 0 && c.got > c.max) || (c.max == 0 && c.min == 0 && c.got != 0) {
			t.Errorf("%s: %v, want %v..%v", c.what, c.got, c.min, c.max)
		}
	}
	if lag := after.value("carillon_scan_lag_seconds"); lag < 0 || lag > 5 {
		t.Errorf("scan_lag_seconds = %v, want a scan within the last 5 s", lag)
	}
	if size := after.value("carillon_database_bytes"); size < 4096 {
		t.Errorf("database_bytes = %v, want the database's size", size)
	}
	for _, name := range []string{"carillon_store_write_queue", "go_goroutines", "process_resident_memory_bytes"} {
		if _, ok := after.fams[name]; !ok {
			t.Errorf("no %s in the scrape", name)
		}
	}
	if lanes := len(after.fams["carillon_fire_write_queue"].GetMetric()); lanes != 5 {
		t.Errorf("fire_write_queue has %d lanes, want 5 (route, claim, route-ahead, record, result)", lanes)
	}

	// Bounded labels: known names only, and never an address or an id.
	for name, f := range after.fams {
		if !strings.HasPrefix(name, "carillon_") {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if !boundedLabels[l.GetName()] {
					t.Errorf("%s has label %s=%q: not one of the bounded labels", name, l.GetName(), l.GetValue())
				}
				if strings.Contains(l.GetValue(), "127.0.0.1") || strings.Contains(l.GetValue(), addr) {
					t.Errorf("%s has an address in label %s=%q", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
	promtoolCheck(t, after.text)
}

// promtoolCheck runs "promtool check metrics" (Debian's prometheus
// package) on a scrape's text. Without promtool the check is skipped with
// a message, unless CARILLON_PROMTOOL_TESTS=1 (set by .ci/run, which
// installs it): then it fails.
func promtoolCheck(t *testing.T, text []byte) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CARILLON_PROMTOOL_TESTS") == "1" {
			t.Fatalf("promtool: %v (CARILLON_PROMTOOL_TESTS=1 needs it: apt-get install prometheus)", err)
		}
		t.Logf("promtool not installed: 'promtool check metrics' skipped (apt-get install prometheus; CARILLON_PROMTOOL_TESTS=1 makes this fatal)")
		return
	}
	cmd := exec.CommandContext(context.Background(), path, "check", "metrics") //nolint:gosec // promtool from PATH, as the test intends
	cmd.Stdin = bytes.NewReader(text)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		t.Errorf("promtool check metrics found problems in the scrape:\n%s", out)
	case err != nil:
		t.Fatalf("promtool: %v", err)
	}
}
