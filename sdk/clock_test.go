package sdk

import (
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
)

func TestMeasureClock(t *testing.T) {
	t.Parallel()
	sent := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name      string
		rt        time.Duration
		admin     *timestamppb.Timestamp
		want      time.Duration
		wantKnown bool
	}{
		{"AdminAgrees", 10 * time.Millisecond, timestamppb.New(sent.Add(5 * time.Millisecond)), 0, true},
		{"AdminAhead", 10 * time.Millisecond, timestamppb.New(sent.Add(85 * time.Millisecond)), 80 * time.Millisecond, true},
		{"AdminBehind", 2 * time.Millisecond, timestamppb.New(sent.Add(-99 * time.Millisecond)), -100 * time.Millisecond, true},
		{"OlderAdmin", 2 * time.Millisecond, nil, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := measureClock(sent, sent.Add(tt.rt), tt.admin)
			if got.measured != tt.wantKnown || got.offset != tt.want || (tt.wantKnown && got.roundTrip != tt.rt) {
				t.Errorf("measureClock: %+v, want offset %v over %v (measured %v)", got, tt.want, tt.rt, tt.wantKnown)
			}
		})
	}
}
