package schedule

import (
	"log/slog"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// An admin given more fires than its cores or its database can send
// falls behind, and each fire it claims waits behind the others for its
// send. While the dispatcher says so (Config.Overloaded: its latest
// sends ran late, or a fire it holds waits late), the scan sheds: it
// claims no further ahead than its look-ahead, and the fires of jobs
// whose misfire strategy is DO_NOTHING, due within it, as misfire
// records, SKIPPED, each job's instants of the next few seconds as one
// (shedSpan), which cost the claim alone, instead of handing them
// over to be sent more than the misfire threshold late or skipped there
// at the cost of a settle. So an overloaded admin sends what it can on
// time and records the rest, and its backlog stays bounded. FIRE_ONCE_NOW
// jobs still fire: late is what they ask for.

// shedLogEvery is how often the log says that the scan shed fires, while
// it does.
const shedLogEvery = 10 * time.Second

// shedRun is the record of job j's fire of instant due, claimed at now
// while the dispatcher was overloaded (why): SKIPPED, its one missed
// instant.
func shedRun(j store.Job, due, now time.Time, why string) store.Run {
	r := fireRun(j, due, now)
	r.MissedCount, r.MissedUntil = 1, due
	r.Status, r.TriggeredAt, r.FinishedAt = carillonv1.RunStatus_RUN_STATUS_SKIPPED, time.Time{}, now
	r.Message = "misfire: " + why + "; not sent, skipped by DO_NOTHING"
	return r
}

// shedSpan is how far past the look-ahead one shed record reaches: while
// the dispatcher is overloaded, the instants of a job due until then are
// recorded as one misfire (missedCount, missedUntil), not one record
// each. A shed claim costs the writer about what a fire's claim does
// (25–50 µs): shedding 30,000 FIX_RATE 1 s jobs one instant at a time
// took most of the admin, and the few fires it still sent waited behind
// those claims.
const shedSpan = 2 * time.Second

// shedFrom returns the record of job j's instants shed from due, whose
// next instant is next (zero: none), through those due up to shedSpan
// past the look-ahead (at most MissedCountMax), and the job's next fire
// after them.
func (s *Scheduler) shedFrom(j store.Job, spec Spec, due, next, now time.Time) (store.Run, time.Time, error) {
	r := shedRun(j, due, now, s.shedding)
	until := now.Add(s.cfg.Lookahead + shedSpan)
	for !next.IsZero() && !next.After(until) && r.MissedCount < MissedCountMax {
		r.MissedCount, r.MissedUntil = r.MissedCount+1, next
		var err error
		if next, err = Next(spec, next); err != nil {
			return r, next, err
		}
	}
	return r, next, nil
}

// sheds reports whether the scan sheds job j's fire due at due, claimed
// at now (shedding is the dispatcher's reason, "" when it is not
// overloaded). A fire due more than a look-ahead after now is not: a
// burst is claimed tens of seconds before its instant (claimLead), when
// how late the dispatcher's sends are now says little of how late they
// will be then, and the dispatcher skips it then if it is overdue.
func (s *Scheduler) sheds(j store.Job, due, now time.Time) bool {
	return s.shedding != "" && j.MisfireStrategy != carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW &&
		due.Sub(now) <= s.cfg.Lookahead
}

// shedLog says in the log, at most every shedLogEvery, how many fires
// the scans shed since its last line, and, a line later, that they
// stopped.
type shedLog struct {
	logger *slog.Logger
	count  int
	why    string    // the latest reason
	logged time.Time // the last line; zero while the scans do not shed
}

// scanned notes that a scan at now shed n fires (n > 0: for the reason why).
func (l *shedLog) scanned(n int, why string, now time.Time) {
	if n > 0 {
		l.count, l.why = l.count+n, why
	}
	if !l.logged.IsZero() && now.Sub(l.logged) < shedLogEvery {
		return
	}
	switch {
	case l.count > 0:
		l.logger.Warn("schedule: the admin is overloaded: the scan records the fires it claims as misfires (SKIPPED) instead of "+
			"sending them; it has more jobs than its cores or its database can send", "fires", l.count, "why", l.why)
		l.count, l.logged = 0, now
	case !l.logged.IsZero():
		l.logger.Info("schedule: the dispatcher keeps up again: the scan no longer sheds fires")
		l.logged = time.Time{}
	}
}
