package metrics_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	dto "github.com/prometheus/client_model/go"

	"github.com/carillonhq/carillon/admin/internal/metrics"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// scrape fetches m's handler's page and parses it.
func scrape(t *testing.T, m *metrics.Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", res.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse the scrape: %v", err)
	}
	return fams
}

// value returns the value of fams' sample of name with the labels of want
// (name=value pairs), or fails.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("no metric %s", name)
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(want); i += 2 {
			found := false
			for _, l := range m.Label {
				found = found || (l.GetName() == want[i] && l.GetValue() == want[i+1])
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("no sample of %s with labels %v", name, want)
	return 0
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	due := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	m.FiresScheduled(3)
	m.FiresClaimed(4)
	m.Dispatched(carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN, metrics.CodeOK, 2)
	m.Dispatched(carillonv1.RouteStrategy_ROUTE_STRATEGY_UNSPECIFIED, "unavailable", 1)
	m.Sent(due, due.Add(3*time.Millisecond))
	m.Finished(carillonv1.RunStatus_RUN_STATUS_FAILED)
	m.Executed(due, due.Add(10*time.Millisecond), due.Add(time.Second))
	m.Executed(due, time.Time{}, due.Add(time.Second)) // an old executor: not observed
	m.Misfire(carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW)
	m.Retries(1)
	m.Alarm("webhook", false)
	m.StoreWrite(time.Millisecond)
	m.ScanBehind(2500 * time.Millisecond)
	m.WorkflowRunEnded(carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_FAILED)
	m.WorkflowRunEnded(carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_FAILED)
	m.NodeClaimed(due, due.Add(20*time.Millisecond))
	m.Sample(metrics.State{
		ExecutorsOnlineFunc: func(context.Context) (map[string]int, error) { return map[string]int{"app": 2}, nil },
		ScanLagFunc:         func() time.Duration { return 1500 * time.Millisecond },
		WriteQueueFunc:      func() int64 { return 1 },
		FireWritesFunc:      func() map[string]int { return map[string]int{"claim": 0, "record": 5} },
		DatabaseBytesFunc:   func() (int64, error) { return 4096, nil },
	})
	fams := scrape(t, m)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"carillon_fires_scheduled_total", nil, 3},
		{"carillon_fires_claimed_total", nil, 4},
		{"carillon_dispatches_total", []string{"code", "ok", "route", "round_robin"}, 2},
		{"carillon_dispatches_total", []string{"code", "unavailable", "route", "unknown"}, 1},
		{"carillon_fire_lateness_seconds", nil, 1},
		{"carillon_run_start_lateness_seconds", nil, 1},
		{"carillon_run_duration_seconds", nil, 1},
		{"carillon_runs_finished_total", []string{"status", "failed"}, 1},
		{"carillon_runs_finished_total", []string{"status", "succeeded"}, 0},
		{"carillon_misfires_total", []string{"strategy", "fire_once_now"}, 1},
		{"carillon_misfires_total", []string{"strategy", "do_nothing"}, 0},
		{"carillon_retries_total", nil, 1},
		{"carillon_alarms_total", []string{"channel", "webhook", "outcome", "failed"}, 1},
		{"carillon_store_write_seconds", nil, 1},
		{"carillon_workflow_runs_total", []string{"status", "failed"}, 2},
		{"carillon_workflow_runs_total", []string{"status", "succeeded"}, 0},
		{"carillon_workflow_node_wait_seconds", nil, 1},
		{"carillon_executors_online", []string{"app", "app"}, 2},
		{"carillon_scan_lag_seconds", nil, 1.5},
		{"carillon_scan_behind_seconds", nil, 2.5},
		{"carillon_store_write_queue", nil, 1},
		{"carillon_fire_write_queue", []string{"lane", "record"}, 5},
		{"carillon_database_bytes", nil, 4096},
		{"carillon_build_info", nil, 1},
	} {
		if got := value(t, fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("no %s: the Go and process collectors are missing", name)
		}
	}
}

func TestStateErrorFailsTheScrapeLoudly(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	m.Sample(metrics.State{DatabaseBytesFunc: func() (int64, error) { return 0, errors.New("stat: gone") }})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusInternalServerError {
		t.Errorf("a scrape whose state read failed answered %s, want 500", res.Status)
	}
}

func TestNilMetricsCountNothing(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	m.FiresScheduled(1)
	m.FiresClaimed(1)
	m.Dispatched(0, metrics.CodeOK, 1)
	m.Sent(time.Now(), time.Now())
	m.Finished(carillonv1.RunStatus_RUN_STATUS_SUCCEEDED)
	m.Executed(time.Now(), time.Now(), time.Now())
	m.Misfire(0)
	m.Retries(1)
	m.Alarm("email", true)
	m.StoreWrite(time.Second)
	m.Sample(metrics.State{})
	if m.Interceptor() == nil {
		t.Error("a nil *Metrics returned a nil interceptor")
	}
}

func TestBuildInfoLabels(t *testing.T) {
	t.Parallel()
	fams := scrape(t, metrics.New())
	f := fams["carillon_build_info"]
	var names []string
	for _, l := range f.GetMetric()[0].GetLabel() {
		if l.GetValue() == "" {
			t.Errorf("carillon_build_info label %s is empty", l.GetName())
		}
		names = append(names, l.GetName())
	}
	if got := strings.Join(names, ","); got != "goversion,revision,version" {
		t.Errorf("carillon_build_info labels = %s, want goversion,revision,version", got)
	}
}
