package runlog

import (
	"testing"
	"time"
)

// TestAppendLogTime: the cached log time is time.Format's, across seconds,
// milliseconds and zones.
func TestAppendLogTime(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 11, 23, 23, 59, 58, 0, time.UTC)
	zones := []*time.Location{time.UTC, time.FixedZone("plus", 5*3600+1800), time.Local}
	for i := range 3000 {
		tm := base.Add(time.Duration(i) * 997 * time.Microsecond).In(zones[i%len(zones)])
		if got, want := string(appendLogTime(nil, tm)), tm.Format(logTimeLayout); got != want {
			t.Fatalf("%v: got %q, want %q", tm, got, want)
		}
	}
}
