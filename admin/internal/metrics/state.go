package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// State reads the admin's state when the metrics are scraped. Each nil
// field leaves its metric out.
type State struct {
	// ExecutorsOnlineFunc returns how many executors are online per
	// group's app name: carillon_executors_online{app}.
	ExecutorsOnlineFunc func(ctx context.Context) (map[string]int, error)
	// ScanLagFunc returns how long ago the scheduler's last successful
	// scan finished: carillon_scan_lag_seconds.
	ScanLagFunc func() time.Duration
	// WriteQueueFunc returns how many write transactions wait for the
	// database's writer connection: carillon_store_write_queue.
	WriteQueueFunc func() int64
	// FireWritesFunc returns the items waiting in each lane of the fire
	// path's coalesced writes (claim, record, result):
	// carillon_fire_write_queue{lane}.
	FireWritesFunc func() map[string]int
	// DatabaseBytesFunc returns the database's size on disk:
	// carillon_database_bytes.
	DatabaseBytesFunc func() (int64, error)
}

// stateTimeout bounds the reads of one scrape.
const stateTimeout = 5 * time.Second

// Sample registers the collector of st's metrics, read at each scrape. Call
// it once, when the admin's parts exist.
func (m *Metrics) Sample(st State) {
	if m == nil {
		return
	}
	m.reg.MustRegister(&stateCollector{st: st})
}

var (
	executorsOnlineDesc = prometheus.NewDesc(Namespace+"_executors_online",
		"Executors registered and live (a heartbeat within the executor TTL), per AUTO group's app name.", []string{"app"}, nil)
	scanLagDesc = prometheus.NewDesc(Namespace+"_scan_lag_seconds",
		"Seconds since the scheduler's last successful scan finished (a scan runs at least every few seconds; a growing value is a stuck scheduler).", nil, nil)
	writeQueueDesc = prometheus.NewDesc(Namespace+"_store_write_queue",
		"Write transactions waiting for the database's one writer connection.", nil, nil)
	fireWritesDesc = prometheus.NewDesc(Namespace+"_fire_write_queue",
		"Runs waiting in the fire path's coalesced writes, by lane: route (before calls), claim, route-ahead (routes of fires sent ahead), record (dispatches), result (settling).", []string{"lane"}, nil)
	databaseBytesDesc = prometheus.NewDesc(Namespace+"_database_bytes",
		"Bytes the SQLite database takes on disk: its file and its write-ahead log.", nil, nil)
)

// stateCollector is a prometheus.Collector of State's metrics.
type stateCollector struct{ st State }

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []struct {
		set  bool
		desc *prometheus.Desc
	}{
		{c.st.ExecutorsOnlineFunc != nil, executorsOnlineDesc}, {c.st.ScanLagFunc != nil, scanLagDesc},
		{c.st.WriteQueueFunc != nil, writeQueueDesc}, {c.st.FireWritesFunc != nil, fireWritesDesc},
		{c.st.DatabaseBytesFunc != nil, databaseBytesDesc},
	} {
		if d.set {
			ch <- d.desc
		}
	}
}

// Collect implements prometheus.Collector. A read that fails makes its
// metric an invalid one, which the scrape reports as an error.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	if f := c.st.ExecutorsOnlineFunc; f != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
		online, err := f(ctx)
		cancel()
		if err != nil {
			ch <- prometheus.NewInvalidMetric(executorsOnlineDesc, err)
		}
		for app, n := range online {
			ch <- prometheus.MustNewConstMetric(executorsOnlineDesc, prometheus.GaugeValue, float64(n), app)
		}
	}
	if f := c.st.ScanLagFunc; f != nil {
		ch <- prometheus.MustNewConstMetric(scanLagDesc, prometheus.GaugeValue, f().Seconds())
	}
	if f := c.st.WriteQueueFunc; f != nil {
		ch <- prometheus.MustNewConstMetric(writeQueueDesc, prometheus.GaugeValue, float64(f()))
	}
	if f := c.st.FireWritesFunc; f != nil {
		for lane, n := range f() {
			ch <- prometheus.MustNewConstMetric(fireWritesDesc, prometheus.GaugeValue, float64(n), lane)
		}
	}
	if f := c.st.DatabaseBytesFunc; f != nil {
		n, err := f()
		if err != nil {
			ch <- prometheus.NewInvalidMetric(databaseBytesDesc, err)
		} else {
			ch <- prometheus.MustNewConstMetric(databaseBytesDesc, prometheus.GaugeValue, float64(n))
		}
	}
}
