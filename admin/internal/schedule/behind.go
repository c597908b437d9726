package schedule

import (
	"log/slog"
	"time"
)

// A scan claims each fire a look-ahead before its instant. One that
// claims a fire after its instant is behind: the admin cannot keep up
// with its jobs (too many for its cores or its database), its fires are
// late, and those found more than the misfire threshold late are recorded
// as misfires. That must not go unseen: the gauge
// carillon_scan_behind_seconds says how far behind each scan was, and
// behindLog says it in the log.

// behindWarn is how late a scan may claim a fire before the log says the
// scan is behind: less is a moment's stall (a GC, a slow write).
const behindWarn = time.Second

// behindLogEvery is how often the log says it again while the scan stays
// behind.
const behindLogEvery = 10 * time.Second

// behindLog logs when the scan falls behind (by behindWarn or more), every
// behindLogEvery while it stays behind, with the worst of the scans since
// the last line, and once when it has caught up.
type behindLog struct {
	logger    *slog.Logger
	threshold time.Duration // the misfire threshold, for the line
	// started is when the scans started (ScanLoop): fires due before
	// then fell due while no admin ran, and count from then.
	started time.Time

	since  time.Time     // when the scan fell behind; zero while it keeps up
	logged time.Time     // the last line saying it is behind
	worst  time.Duration // the worst scan since that line
}

// scanned notes a scan that finished at now, having claimed its earliest
// fire behind after its instant (negative or zero: ahead of it).
func (b *behindLog) scanned(behind time.Duration, now time.Time) {
	if behind < behindWarn {
		if !b.since.IsZero() {
			b.logger.Info("schedule: the scan caught up: it claims fires ahead of their instants again",
				"was_behind_for", now.Sub(b.since).Round(time.Millisecond))
			b.since, b.logged, b.worst = time.Time{}, time.Time{}, 0
		}
		return
	}
	if b.since.IsZero() {
		b.since = now
	}
	b.worst = max(b.worst, behind)
	if !b.logged.IsZero() && now.Sub(b.logged) < behindLogEvery {
		return
	}
	b.logger.Warn("schedule: the scan is behind: it claims fires after their instants, so they are late, and those more "+
		"than the misfire threshold late are recorded as misfires; the admin cannot keep up with its jobs",
		"behind", b.worst.Round(time.Millisecond), "since", b.since.UTC().Format(time.RFC3339), "misfire_threshold", b.threshold)
	b.logged, b.worst = now, 0
}
