package schedule

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestMisfireLog: of the misfires one scan records, the first
// misfireLines are logged each on a line, the others counted by strategy
// in one line each when the scan ends; the next scan starts over.
func TestMisfireLog(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := misfireLog{logger: slog.New(slog.NewTextHandler(&buf, nil))}
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	record := func(job int64, tt carillonv1.TriggerType) *store.Run {
		return &store.Run{JobID: job, TriggerType: tt, MissedCount: 2, ScheduledAt: at, MissedUntil: at.Add(time.Minute)}
	}
	for i := range 25 {
		tt := carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE // DO_NOTHING's record
		if i%5 == 4 {
			tt = carillonv1.TriggerType_TRIGGER_TYPE_MISFIRE // FIRE_ONCE_NOW's
		}
		l.add(record(int64(i+1), tt))
	}
	l.done()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != misfireLines+2 {
		t.Fatalf("%d lines, want %d one by one and 2 counts:\n%s", len(lines), misfireLines+2, buf.String())
	}
	for i, line := range lines[:misfireLines] {
		want := "schedule: misfire; skipped (DO_NOTHING)"
		if i%5 == 4 {
			want = "schedule: misfire; fired once now (FIRE_ONCE_NOW)"
		}
		if !strings.Contains(line, want) || !strings.Contains(line, "missed=2") {
			t.Errorf("line %d: %s; want %q, missed=2", i, line, want)
		}
	}
	counts := strings.Join(lines[misfireLines:], "\n")
	// Of the 15 not logged one by one (jobs 11-25), 3 fired once now.
	for _, want := range []string{"jobs=12 strategy=MISFIRE_STRATEGY_DO_NOTHING", "jobs=3 strategy=MISFIRE_STRATEGY_FIRE_ONCE_NOW"} {
		if !strings.Contains(counts, want) {
			t.Errorf("counts:\n%s\nwant %q", counts, want)
		}
	}
	buf.Reset()
	l.add(record(99, carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE))
	l.done()
	if got := strings.Count(buf.String(), "\n"); got != 1 || !strings.Contains(buf.String(), "job=99") {
		t.Errorf("the next scan: %q; want its one misfire on a line of its own", buf.String())
	}
}
