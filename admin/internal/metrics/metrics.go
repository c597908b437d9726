// Package metrics counts what the admin does, for Prometheus: the fire
// path (fires scheduled, claimed and dispatched, their lateness, runs
// finished, misfires, retries), alarms, API calls, and state sampled when
// scraped (executors online, the scan's lag, the database's writer and
// size). It is the only package of the admin that knows Prometheus; the
// others call the methods of a *Metrics, which do nothing on a nil one.
//
// Labels stay bounded: a status, a code, a strategy, a channel, a
// procedure, a group's app name; never a job id, a run id or an address.
package metrics

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/carillonhq/carillon/admin/internal/version"
)

// Namespace prefixes every Carillon metric.
const Namespace = "carillon"

// Metrics holds the admin's instruments on a registry of their own, with
// the Go runtime's and the process's collectors. Its methods are safe for
// concurrent use, and do nothing on a nil *Metrics.
type Metrics struct {
	reg *prometheus.Registry
	fire
	workflows
	api *prometheus.CounterVec
}

// New returns Metrics registered on a new registry, with
// carillon_build_info set from the running binary.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.fire = newFire(m.reg)
	m.workflows = newWorkflows(m.reg)
	m.api = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "api_requests_total",
		Help: "Connect, gRPC and gRPC-Web calls the admin served, by procedure and Connect code (ok for success).",
	}, []string{"procedure", "code"})
	info := version.Get()
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "build_info",
		Help: "Always 1; the labels name the running build: module version, VCS revision and Go version.",
	}, []string{"version", "revision", "goversion"})
	build.WithLabelValues(info.Version, info.Revision, info.GoVersion).Set(1)
	m.reg.MustRegister(m.api, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format (or
// OpenMetrics, when the scraper asks for it). It has no access control:
// serve it on an address only the scraper reaches.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{EnableOpenMetrics: true, MaxRequestsInFlight: 4})
}

// Gatherer returns the registry, for tests and for embedding the admin's
// metrics in another registry's output.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// label returns an enum's value name as a label: lower case, without the
// enum's prefix ("RUN_STATUS_SUCCEEDED" -> "succeeded").
func label(name, prefix string) string {
	return strings.ToLower(strings.TrimPrefix(name, prefix))
}
