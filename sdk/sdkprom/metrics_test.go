package sdkprom_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk"
	"github.com/carillonhq/carillon/sdk/sdkprom"
	"github.com/carillonhq/carillon/sdk/sdktest"
)

// gathered returns the value of reg's sample of name whose labels include
// the name=value pairs of labels (a histogram's sample count), 0 if none.
func gathered(t *testing.T, reg prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				if !hasLabel(m, labels[i], labels[i+1]) {
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
	}
	return 0
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// TestMetrics: an executor with sdkprom's metrics counts runs started and
// finished by handler and status, their durations, the runs queued behind
// a running one, the results no admin took yet and the failed reports;
// results carry the handler's start.
func TestMetrics(t *testing.T) {
	t.Parallel()
	admin := sdktest.NewAdmin(t, "tok")
	admin.SetDown(true)
	reg := prometheus.NewRegistry()
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	ex := sdktest.Start(t, sdk.Config{AdminURLs: []string{admin.URL}, AccessToken: "tok"}, func(ex *sdk.Executor) {
		if err := sdkprom.Register(reg, ex); err != nil {
			t.Fatal(err)
		}
		ex.HandleFunc("hello", func(context.Context, *sdk.Job) error { return nil })
		ex.HandleFunc("fail", func(context.Context, *sdk.Job) error { return errors.New("asked to fail") })
		ex.HandleFunc("wait", func(ctx context.Context, job *sdk.Job) error {
			started <- struct{}{}
			<-release
			return nil
		})
	})
	ctx := t.Context()
	run := func(id int64, handler, param string) {
		t.Helper()
		if _, err := ex.Client.Run(ctx, &carillonv1.RunRequest{RunId: id, JobId: id, Handler: handler, Param: param, ShardTotal: 1}); err != nil {
			t.Fatalf("Run(%d): %v", id, err)
		}
	}
	run(1, "hello", "")
	run(2, "fail", "fail")
	ex.Log(t, 1)
	ex.Log(t, 2)
	// Two runs of one job: the second waits behind the first.
	if _, err := ex.Client.Run(ctx, &carillonv1.RunRequest{RunId: 3, JobId: 30, Handler: "wait", ShardTotal: 1}); err != nil {
		t.Fatal(err)
	}
	<-started
	if _, err := ex.Client.Run(ctx, &carillonv1.RunRequest{RunId: 4, JobId: 30, Handler: "wait", ShardTotal: 1}); err != nil {
		t.Fatal(err)
	}
	if got := gathered(t, reg, "carillon_executor_runs_queued"); got != 1 {
		t.Errorf("runs_queued = %v with run 4 behind run 3, want 1", got)
	}
	admin.WaitFor(t, "a refused report", func() bool { _, n := admin.Refused(); return n > 0 })
	waitUntil(t, "report failures counted", func() error {
		if got := gathered(t, reg, "carillon_executor_report_failures_total"); got < 1 {
			return fmt.Errorf("report_failures_total = %v, want at least 1", got)
		}
		if got := gathered(t, reg, "carillon_executor_results_unreported"); got != 2 {
			return fmt.Errorf("results_unreported = %v with the admin down, want 2", got)
		}
		return nil
	})
	close(release)
	ex.Log(t, 4)
	admin.SetDown(false)
	for _, id := range []int64{1, 2, 3, 4} {
		res := admin.Result(t, id)
		if res.GetStartedAt() == nil || res.GetStartedAt().AsTime().After(res.GetFinishedAt().AsTime()) {
			t.Errorf("run %d: started_at %v, finished_at %v: want a start at or before the end", id, res.GetStartedAt(), res.GetFinishedAt())
		}
	}
	waitUntil(t, "every result acknowledged", func() error {
		if got := gathered(t, reg, "carillon_executor_results_unreported"); got != 0 {
			return fmt.Errorf("results_unreported = %v, want 0", got)
		}
		return nil
	})
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"carillon_executor_runs_started_total", []string{"handler", "hello"}, 1},
		{"carillon_executor_runs_started_total", []string{"handler", "wait"}, 2},
		{"carillon_executor_runs_finished_total", []string{"handler", "hello", "status", "succeeded"}, 1},
		{"carillon_executor_runs_finished_total", []string{"handler", "fail", "status", "failed"}, 1},
		{"carillon_executor_runs_finished_total", []string{"handler", "wait", "status", "succeeded"}, 2},
		{"carillon_executor_run_duration_seconds", []string{"handler", "wait"}, 2},
		{"carillon_executor_runs_queued", nil, 0},
	} {
		if got := gathered(t, reg, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}

	// A second executor on the same registerer is refused, naming the field.
	other, err := sdk.New(sdk.Config{AdminURLs: []string{admin.URL}, AppName: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if err := sdkprom.Register(reg, other); !errors.Is(err, sdk.ErrInvalidConfig) {
		t.Errorf("New with a registerer that has an executor's metrics: %v, want ErrInvalidConfig", err)
	}
}

// waitUntil polls cond until it returns nil, failing with its last error
// after sdktest.WaitLimit.
func waitUntil(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(sdktest.WaitLimit)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: after %v: %v", what, sdktest.WaitLimit, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
