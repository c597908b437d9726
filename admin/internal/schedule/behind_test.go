package schedule

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestBehindLog: a scan behind by behindWarn or more is logged at once,
// then at most every behindLogEvery with the worst scan since; the first
// scan that keeps up again says so, once.
func TestBehindLog(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	b := behindLog{logger: slog.New(slog.NewTextHandler(&buf, nil)), threshold: 5 * time.Second}
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	for i, step := range []struct {
		behind time.Duration
		now    time.Time
		want   string // the line logged, "" for none
	}{
		{0, at(0), ""},
		{999 * time.Millisecond, at(1), ""}, // less than behindWarn: a moment's stall
		{2 * time.Second, at(2), "level=WARN msg=\"schedule: the scan is behind: it claims fires after their instants, so they are late, and those more than the misfire threshold late are recorded as misfires; the admin cannot keep up with its jobs\" behind=2s since=2026-11-27T12:00:02Z misfire_threshold=5s"},
		{3 * time.Second, at(3), ""},          // said 1 s ago
		{1500 * time.Millisecond, at(11), ""}, // 9 s ago
		{1200 * time.Millisecond, at(12), "level=WARN msg=\"schedule: the scan is behind: it claims fires after their instants, so they are late, and those more than the misfire threshold late are recorded as misfires; the admin cannot keep up with its jobs\" behind=3s since=2026-11-27T12:00:02Z misfire_threshold=5s"},
		{-time.Second, at(13), "level=INFO msg=\"schedule: the scan caught up: it claims fires ahead of their instants again\" was_behind_for=11s"},
		{0, at(14), ""},
		{4 * time.Second, at(15), "behind=4s since=2026-11-27T12:00:15Z"}, // behind again: said at once
	} {
		buf.Reset()
		b.scanned(step.behind, step.now)
		got := strings.TrimSpace(buf.String())
		if step.want == "" && got != "" || step.want != "" && !strings.Contains(got, step.want) {
			t.Errorf("step %d (behind %s at %s): logged %q, want %q", i, step.behind, step.now.Format(time.TimeOnly), got, step.want)
		}
	}
}
