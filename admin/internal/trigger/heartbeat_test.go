package trigger_test

import (
	"cmp"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	"github.com/carillonhq/carillon/internal/clock"
	"github.com/carillonhq/carillon/internal/testkit"
)

// TestClockOffsetWarning: the admin warns once when an executor's clock is
// more than 50 ms off, says so again only after it was back within 50 ms
// (which it logs), and keeps each executor's apart.
func TestClockOffsetWarning(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		st := be.Open(t)
		var logs testkit.LogBuffer
		trig, err := trigger.New(trigger.Config{Store: st, Clock: clock.NewFake(time.Now()), Queue: nopQueue{},
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
		if err != nil {
			t.Fatal(err)
		}
		const warn, back = "clock is off", "back within"
		for i, step := range []struct {
			address string
			offset  time.Duration // zero: not measured
			want    string        // in the log, or "" for nothing
			rtt     time.Duration // the round trip; zero: 1 ms
		}{
			{"http://a:1", 0, "", 0},
			{"http://a:1", 10 * time.Millisecond, "", 0},
			{"http://a:1", 80 * time.Millisecond, warn, 0},
			{"http://a:1", 90 * time.Millisecond, "", 0},
			{"http://b:1", -70 * time.Millisecond, warn, 0},
			{"http://a:1", 5 * time.Millisecond, back, 0},
			{"http://a:1", -60 * time.Millisecond, warn, 0},
			{"http://b:1", -50 * time.Millisecond, back, 0},
			// A busy executor's slow round trip says nothing of its clock;
			// the offset counts by what it surely is.
			{"http://c:1", 375 * time.Millisecond, "", 760 * time.Millisecond},
			{"http://c:1", 90 * time.Millisecond, "", 90 * time.Millisecond},
			{"http://c:1", 90 * time.Millisecond, warn, 70 * time.Millisecond},
		} {
			trig.Rescuer.Heard(trigger.Heartbeat{Address: step.address, ClockMeasured: step.offset != 0,
				ClockOffset: step.offset, ClockRoundTrip: cmp.Or(step.rtt, time.Millisecond)})
			got := logs.Take()
			switch {
			case step.want == "" && got != "":
				t.Errorf("step %d (%s, %v): logged %q, want nothing", i, step.address, step.offset, got)
			case step.want != "" && (!strings.Contains(got, step.want) || !strings.Contains(got, step.address) || strings.Count(got, "\n") != 1):
				t.Errorf("step %d (%s, %v): logged %q, want one line saying %q", i, step.address, step.offset, got, step.want)
			}
		}
	})
}
