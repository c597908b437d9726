package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// latenessBuckets are the buckets of the lateness histograms, in seconds:
// a fire is sent within a millisecond or two of its instant when all is
// well, so the small end is fine-grained.
var latenessBuckets = []float64{.0005, .001, .002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// fire is the instruments of the fire path.
type fire struct {
	scheduled    prometheus.Counter
	claimed      prometheus.Counter
	dispatches   *prometheus.CounterVec
	lateness     prometheus.Histogram
	startLate    prometheus.Histogram
	finished     *prometheus.CounterVec
	misfires     *prometheus.CounterVec
	retries      prometheus.Counter
	alarms       *prometheus.CounterVec
	storeWrite   prometheus.Histogram
	runDurations prometheus.Histogram
	scanBehind   prometheus.Gauge
}

func newFire(reg *prometheus.Registry) fire {
	f := fire{
		scheduled: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "fires_scheduled_total",
			Help: "Fires the scheduler's scan took from the jobs' schedules (misfire records included)."}),
		claimed: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "fires_claimed_total",
			Help: "Runs claimed for dispatch: the scan's fires, and pending runs (retries, child jobs' runs, manual runs) when due."}),
		dispatches: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "dispatches_total",
			Help: "Runs dispatched to executors, by outcome (ok, a Connect code of the call, or unroutable / not_sent when no call was made) and route strategy."},
			[]string{"code", "route"}),
		lateness: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "fire_lateness_seconds",
			Help:    "How late scheduled runs were sent to their executor: the call's start minus the instant the run was due.",
			Buckets: latenessBuckets}),
		startLate: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "run_start_lateness_seconds",
			Help:    "How late runs started on their executor: the handler's start, as the executor reported it, minus the instant the run was due (a retry's: the end of its delay). Runs of executors that do not report their start are not counted.",
			Buckets: latenessBuckets}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "runs_finished_total",
			Help: "Runs settled, by final status."}, []string{"status"}),
		misfires: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "misfires_total",
			Help: "Misfires (scheduled instants found more than the misfire threshold late), by the job's misfire strategy."},
			[]string{"strategy"}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "retries_total",
			Help: "Retry runs created for failed runs."}),
		alarms: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "alarms_total",
			Help: "Alarm deliveries, by channel (webhook, email) and outcome (sent, failed)."}, []string{"channel", "outcome"}),
		storeWrite: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "store_write_seconds",
			Help:    "How long each write transaction held the database's one writer connection.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1}}),
		runDurations: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "run_duration_seconds",
			Help:    "How long runs took on their executor, from the handler's start to its end, as the executor reported them. Runs of executors that do not report their start are not counted.",
			Buckets: prometheus.ExponentialBucketsRange(0.001, 3600, 16)}),
		scanBehind: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "scan_behind_seconds",
			Help: "How long after its instant the scheduler's last scan claimed its earliest fire; 0 when it claimed every fire ahead of its instant, as it should. Above 0 the admin cannot keep up with its jobs: its fires are late, and those more than the misfire threshold late are recorded as misfires."}),
	}
	reg.MustRegister(f.scheduled, f.claimed, f.dispatches, f.lateness, f.startLate, f.finished, f.misfires,
		f.retries, f.alarms, f.storeWrite, f.runDurations, f.scanBehind)
	// Every label value known in advance starts at 0, so that rate() sees
	// the first increase and dashboards show the series before it happens.
	for _, s := range []carillonv1.RunStatus{carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, carillonv1.RunStatus_RUN_STATUS_FAILED,
		carillonv1.RunStatus_RUN_STATUS_TIMED_OUT, carillonv1.RunStatus_RUN_STATUS_KILLED, carillonv1.RunStatus_RUN_STATUS_SKIPPED,
		carillonv1.RunStatus_RUN_STATUS_LOST} {
		f.finished.WithLabelValues(statusLabel(s))
	}
	for _, s := range []carillonv1.MisfireStrategy{carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING,
		carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW} {
		f.misfires.WithLabelValues(misfireLabel(s))
	}
	return f
}

// FiresScheduled counts n fires the scan took from the jobs' schedules.
func (m *Metrics) FiresScheduled(n int) {
	if m == nil || n == 0 {
		return
	}
	m.scheduled.Add(float64(n))
}

// ScanBehind sets how long after its instant the last scan claimed its
// earliest fire (0 when behind is not positive: it claimed ahead).
func (m *Metrics) ScanBehind(behind time.Duration) {
	if m == nil {
		return
	}
	m.scanBehind.Set(max(behind, 0).Seconds())
}

// FiresClaimed counts n runs claimed for dispatch.
func (m *Metrics) FiresClaimed(n int) {
	if m == nil || n == 0 {
		return
	}
	m.claimed.Add(float64(n))
}

// Dispatch outcomes that are not a Connect code.
const (
	// CodeOK is a run the executor accepted.
	CodeOK = "ok"
	// CodeUnroutable is a run no executor could be picked for (no
	// executor online, the job deleted, a probe that found none idle).
	CodeUnroutable = "unroutable"
	// CodeNotSent is a run the admin claimed but could not send (it was
	// overloaded, or could not read the job).
	CodeNotSent = "not_sent"
)

// Dispatched counts n runs of a job routed with strategy route whose
// dispatch ended with code: CodeOK, a Connect code's name
// ("unavailable"), CodeUnroutable or CodeNotSent.
func (m *Metrics) Dispatched(route carillonv1.RouteStrategy, code string, n int) {
	if m == nil || n == 0 {
		return
	}
	m.dispatches.WithLabelValues(code, routeLabel(route)).Add(float64(n))
}

// Sent observes the lateness of one scheduled run: sent at sent, due at due.
func (m *Metrics) Sent(due, sent time.Time) {
	if m == nil {
		return
	}
	m.lateness.Observe(max(sent.Sub(due), 0).Seconds())
}

// Finished counts a settled run of final status s.
func (m *Metrics) Finished(s carillonv1.RunStatus) {
	if m == nil {
		return
	}
	m.finished.WithLabelValues(statusLabel(s)).Inc()
}

// Executed observes a run as its executor reported it: due at due (its
// scheduled instant, or a retry's end of delay), started at started,
// finished at finished. A zero started (a run killed before it started, an
// executor that predates RunResult.started_at) is not observed.
func (m *Metrics) Executed(due, started, finished time.Time) {
	if m == nil || started.IsZero() {
		return
	}
	if !due.IsZero() {
		m.startLate.Observe(max(started.Sub(due), 0).Seconds())
	}
	if !finished.IsZero() {
		m.runDurations.Observe(max(finished.Sub(started), 0).Seconds())
	}
}

// Misfire counts a misfire handled by strategy s.
func (m *Metrics) Misfire(s carillonv1.MisfireStrategy) {
	if m == nil {
		return
	}
	m.misfires.WithLabelValues(misfireLabel(s)).Inc()
}

// Retries counts n retry runs created.
func (m *Metrics) Retries(n int) {
	if m == nil || n == 0 {
		return
	}
	m.retries.Add(float64(n))
}

// Alarm counts one alarm delivery on channel ("webhook", "email"): sent,
// or failed.
func (m *Metrics) Alarm(channel string, sent bool) {
	if m == nil {
		return
	}
	outcome := "sent"
	if !sent {
		outcome = "failed"
	}
	m.alarms.WithLabelValues(channel, outcome).Inc()
}

// StoreWrite observes a write transaction that held the writer connection
// for held.
func (m *Metrics) StoreWrite(held time.Duration) {
	if m == nil {
		return
	}
	m.storeWrite.Observe(held.Seconds())
}

func statusLabel(s carillonv1.RunStatus) string { return label(s.String(), "RUN_STATUS_") }

func routeLabel(r carillonv1.RouteStrategy) string {
	if r == carillonv1.RouteStrategy_ROUTE_STRATEGY_UNSPECIFIED {
		return "unknown" // runs refused before their job was read
	}
	return label(r.String(), "ROUTE_STRATEGY_")
}

func misfireLabel(s carillonv1.MisfireStrategy) string {
	if s == carillonv1.MisfireStrategy_MISFIRE_STRATEGY_UNSPECIFIED {
		s = carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING
	}
	return label(s.String(), "MISFIRE_STRATEGY_")
}
