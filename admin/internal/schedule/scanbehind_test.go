package schedule_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/metrics"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/internal/testkit"
)

// scanBehind reads carillon_scan_behind_seconds from m.
func scanBehind(t *testing.T, m *metrics.Metrics) float64 {
	t.Helper()
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "carillon_scan_behind_seconds" {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("no carillon_scan_behind_seconds")
	return 0
}

// TestScanBehind runs on a fake clock (synctest): a scan that claims a
// fire after its instant sets carillon_scan_behind_seconds to how late,
// and says in the log that the scan is behind; the next scans, claiming
// ahead again, set it to 0 and say the scan caught up. A fire due before
// the scans started counts from their start: an outage is not the scan's
// lag.
func TestScanBehind(t *testing.T) {
	db := dbtest.SQLite.DB(t)
	synctest.Test(t, func(t *testing.T) {
		st, g := setup(t, db)
		defer st.Close()
		ctx := context.Background()
		// Due 10 s before the scans start: found late by the first scan.
		if _, err := st.Jobs.Create(ctx, fixRate(g, 60, time.Now().Add(-10*time.Second)), time.Now()); err != nil {
			t.Fatal(err)
		}
		m := metrics.New()
		var log testkit.LogBuffer
		var sched *schedule.Scheduler
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		sched = schedule.New(schedule.Config{Store: st, Metrics: m, Logger: slog.New(slog.NewTextHandler(&log, nil))})
		done := make(chan struct{})
		go func() { defer close(done); _ = sched.Run(ctx, schedule.DispatchFunc(func([]schedule.Entry) {})) }()
		defer func() { cancel(); <-done }()

		time.Sleep(100 * time.Millisecond)
		if got := scanBehind(t, m); got != 0 {
			t.Errorf("after the first scan, which found a fire due before the scans started: behind %v s, want 0", got)
		}
		// A job due 3 s ago, after the scans started, found by the next
		// scan (woken): 3 s behind.
		time.Sleep(5 * time.Second)
		if _, err := st.Jobs.Create(ctx, fixRate(g, 60, time.Now().Add(-3*time.Second)), time.Now()); err != nil {
			t.Fatal(err)
		}
		sched.Wake()
		time.Sleep(100 * time.Millisecond)
		if got := scanBehind(t, m); got != 3 {
			t.Errorf("a scan that claimed a fire 3 s after its instant: behind %v s, want 3", got)
		}
		if !strings.Contains(log.String(), `msg="schedule: the scan is behind`) || !strings.Contains(log.String(), "behind=3s") {
			t.Errorf("log:\n%s\nwant the scan said to be 3s behind", log.String())
		}
		time.Sleep(2 * time.Second) // the next scans claim nothing late
		if got := scanBehind(t, m); got != 0 {
			t.Errorf("after a scan that claimed nothing late: behind %v s, want 0", got)
		}
		if !strings.Contains(log.String(), `msg="schedule: the scan caught up`) {
			t.Errorf("log:\n%s\nwant the scan said to have caught up", log.String())
		}
	})
}
