package alarm_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/alarm"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// BenchmarkSendDueNowhere measures what a failed run's alarm that goes
// nowhere (its job has no channel) costs the admin: a burst of 1,000
// such alarms a loop, as a group whose executors are all gone makes.
func BenchmarkSendDueNowhere(b *testing.B) {
	ctx := context.Background()
	st := dbtest.SQLite.Open(b)
	j := failedRun(b, st, func(*store.Job) {})
	s := alarm.NewSender(alarm.SenderConfig{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Channels: []alarm.Channel{{Name: "webhook", Alarm: &alarm.Webhook{}}}})
	const burst = 1000
	at := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	for b.Loop() {
		b.StopTimer()
		runs := make([]store.Run, burst)
		for i := range runs {
			at = at.Add(time.Second)
			runs[i] = store.Run{JobID: j.JobID, GroupID: j.GroupID, Handler: "h", ShardTotal: 1, ScheduledAt: at, TriggeredAt: at, FinishedAt: at,
				TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Status: carillonv1.RunStatus_RUN_STATUS_FAILED,
				AlarmStatus: carillonv1.AlarmStatus_ALARM_STATUS_PENDING}
		}
		if _, err := st.Runs.Insert(ctx, runs); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := s.SendDue(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*burst), "µs/alarm")
}
