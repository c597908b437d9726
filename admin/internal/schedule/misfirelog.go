package schedule

import (
	"log/slog"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// misfireLines is how many of the misfires one scan records are logged
// each on a line of its own (misfireLog).
const misfireLines = 10

// misfireLog logs the misfires one scan records: the first misfireLines
// each on a line of its own, the others counted in one line at the end
// (done), so that a minute mark of 1,000,000 jobs missed while no admin
// ran (or while the scan fell behind) is a few lines, not a million,
// each of which cost the scan a few µs.
type misfireLog struct {
	logger *slog.Logger
	lines  int
	more   map[carillonv1.MisfireStrategy]int // misfires beyond the lines, by strategy
}

// add logs misfire record r (store.Run.MissedCount > 0), or counts it.
func (l *misfireLog) add(r *store.Run) {
	strategy := misfireStrategy(r)
	if l.lines == misfireLines {
		if l.more == nil {
			l.more = map[carillonv1.MisfireStrategy]int{}
		}
		l.more[strategy]++
		return
	}
	l.lines++
	msg := "schedule: misfire; skipped (DO_NOTHING)"
	if strategy == carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW {
		msg = "schedule: misfire; fired once now (FIRE_ONCE_NOW)"
	}
	// missed is as counted: at most MissedCountMax for a cron job (its
	// run's message says "at least" then).
	l.logger.Warn(msg, "job", r.JobID, "missed", r.MissedCount, "first", r.ScheduledAt, "last", r.MissedUntil)
}

// done logs the count of the misfires not logged one by one.
func (l *misfireLog) done() {
	for strategy, n := range l.more {
		l.logger.Warn("schedule: more misfires recorded by this scan (each run's message says which instants)",
			"jobs", n, "strategy", strategy.String())
	}
	l.lines, l.more = 0, nil
}

// misfireStrategy is the strategy that made misfire record r: a
// MISFIRE run fired now under FIRE_ONCE_NOW, a SKIPPED one under
// DO_NOTHING.
func misfireStrategy(r *store.Run) carillonv1.MisfireStrategy {
	if r.TriggerType == carillonv1.TriggerType_TRIGGER_TYPE_MISFIRE {
		return carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW
	}
	return carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING
}
