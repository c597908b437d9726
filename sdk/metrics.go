package sdk

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// executorMetrics are the instruments of [Config].Metrics. Their methods do
// nothing on a nil *executorMetrics (no Config.Metrics).
type executorMetrics struct {
	started        *prometheus.CounterVec
	finished       *prometheus.CounterVec
	duration       *prometheus.HistogramVec
	reportFailures prometheus.Counter
	// serving is what the gauges read: the dispatcher and spool of the
	// Serve under way, nil between Serves.
	serving atomic.Pointer[servingState]
}

// servingState is what the gauges of a serving executor read.
type servingState struct {
	d  *dispatcher
	sp *spool
}

// newExecutorMetrics registers the executor's metrics on reg.
func newExecutorMetrics(reg prometheus.Registerer) (*executorMetrics, error) {
	const ns, sub = "carillon", "executor"
	m := &executorMetrics{
		started: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "runs_started_total",
			Help: "Runs whose handler started, by handler name (\"script\" for script runs)."}, []string{"handler"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "runs_finished_total",
			Help: "Runs ended, by handler name and final status (succeeded, failed, timed_out, killed; runs killed before they started included)."}, []string{"handler", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "run_duration_seconds",
			Help:    "How long handlers ran, from their start to the run's end, by handler name.",
			Buckets: prometheus.ExponentialBucketsRange(0.001, 3600, 16)}, []string{"handler"}),
		reportFailures: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "report_failures_total",
			Help: "ReportResults calls that no admin answered (the results are retried)."}),
	}
	queued := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "runs_queued",
		Help: "Runs accepted and waiting behind their job's running run."}, func() float64 {
		if s := m.serving.Load(); s != nil {
			return float64(s.d.queued())
		}
		return 0
	})
	unreported := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "results_unreported",
		Help: "Results spooled and not yet acknowledged by an admin."}, func() float64 {
		if s := m.serving.Load(); s != nil {
			return float64(s.sp.unacked())
		}
		return 0
	})
	for _, c := range []prometheus.Collector{m.started, m.finished, m.duration, m.reportFailures, queued, unreported} {
		if err := reg.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if errors.As(err, &already) {
				return nil, fmt.Errorf("%w: Metrics: another executor's metrics are registered there: give each executor its own registerer (prometheus.WrapRegistererWith a label)", ErrInvalidConfig)
			}
			return nil, fmt.Errorf("%w: Metrics: %v", ErrInvalidConfig, err)
		}
	}
	return m, nil
}

// runStarted counts r's start.
func (m *executorMetrics) runStarted(r *run) {
	if m == nil {
		return
	}
	m.started.WithLabelValues(r.metricName()).Inc()
}

// runEnded counts r's end with status at end; a run that started observes
// its duration too.
func (m *executorMetrics) runEnded(r *run, status carillonv1.RunStatus, end time.Time) {
	if m == nil {
		return
	}
	name := r.metricName()
	m.finished.WithLabelValues(name, strings.ToLower(statusName(status))).Inc()
	if !r.started.IsZero() {
		m.duration.WithLabelValues(name).Observe(max(end.Sub(r.started), 0).Seconds())
	}
}

// reportFailed counts a ReportResults call no admin answered.
func (m *executorMetrics) reportFailed() {
	if m == nil {
		return
	}
	m.reportFailures.Inc()
}

// metricName is r's handler label: its registered name, or "script".
func (r *run) metricName() string {
	if r.script {
		return "script"
	}
	return r.name
}
