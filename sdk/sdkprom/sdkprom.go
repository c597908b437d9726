// Package sdkprom exports the metrics of a Carillon executor (package
// [github.com/carillonhq/carillon/sdk]) to Prometheus. An executor that
// does not import it links no Prometheus code.
//
//	ex, err := sdk.New(cfg)
//	...
//	if err := sdkprom.Register(prometheus.DefaultRegisterer, ex); err != nil {
//		...
//	}
//
// The metrics, for you to serve with the rest of your program's:
//
//   - carillon_executor_runs_started_total{handler}
//   - carillon_executor_runs_finished_total{handler,status}, status in
//     lower case (succeeded, failed, timed_out, killed, skipped)
//   - carillon_executor_run_duration_seconds{handler}
//   - carillon_executor_runs_queued
//   - carillon_executor_results_unreported
//   - carillon_executor_report_failures_total
//
// Handler labels are the names you registered ("script" for script runs).
package sdkprom

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/carillonhq/carillon/sdk"
)

// Register registers the metrics of ex on reg and has ex report to them
// ([sdk.Executor.Observe]): call it before ex serves. Two executors in one
// process need a registerer each (prometheus.WrapRegistererWith a label):
// Register refuses a second executor's metrics on one registerer with an
// error wrapping [sdk.ErrInvalidConfig].
func Register(reg prometheus.Registerer, ex *sdk.Executor) error {
	const ns, sub = "carillon", "executor"
	m := &metrics{
		started: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "runs_started_total",
			Help: "Runs whose handler started, by handler name (\"script\" for script runs)."}, []string{"handler"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "runs_finished_total",
			Help: "Runs ended, by handler name and final status (succeeded, failed, timed_out, killed; runs killed before they started included)."}, []string{"handler", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "run_duration_seconds",
			Help:    "How long handlers ran, from their start to the run's end, by handler name.",
			Buckets: prometheus.ExponentialBucketsRange(0.001, 3600, 16)}, []string{"handler"}),
	}
	reportFailures := prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "report_failures_total",
		Help: "ReportResults calls that no admin answered (the results are retried)."}, func() float64 {
		return float64(ex.Stats().ReportFailures)
	})
	queued := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "runs_queued",
		Help: "Runs accepted and waiting behind their job's running run."}, func() float64 {
		return float64(ex.Stats().RunsQueued)
	})
	unreported := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "results_unreported",
		Help: "Results spooled and not yet acknowledged by an admin."}, func() float64 {
		return float64(ex.Stats().ResultsUnreported)
	})
	for _, c := range []prometheus.Collector{m.started, m.finished, m.duration, reportFailures, queued, unreported} {
		if err := reg.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if errors.As(err, &already) {
				return fmt.Errorf("%w: sdkprom: another executor's metrics are registered there: give each executor its own registerer (prometheus.WrapRegistererWith a label)", sdk.ErrInvalidConfig)
			}
			return fmt.Errorf("%w: sdkprom: %v", sdk.ErrInvalidConfig, err)
		}
	}
	ex.Observe(m)
	return nil
}

// metrics counts an executor's runs: the [sdk.Observer] Register adds.
type metrics struct {
	started  *prometheus.CounterVec
	finished *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// RunStarted counts the run's start.
func (m *metrics) RunStarted(ctx context.Context, run sdk.RunInfo) (context.Context, string) {
	m.started.WithLabelValues(run.Handler).Inc()
	return ctx, ""
}

// RunEnded counts the run's end with its status; a run that started
// observes its duration too.
func (m *metrics) RunEnded(_ context.Context, run sdk.RunInfo, end sdk.RunEnd) {
	m.finished.WithLabelValues(run.Handler, strings.ToLower(end.Status)).Inc()
	if !end.Started.IsZero() {
		m.duration.WithLabelValues(run.Handler).Observe(max(end.Ended.Sub(end.Started), 0).Seconds())
	}
}
