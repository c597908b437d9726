package trigger

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// An admin given more fires than its cores or its database can send
// falls behind: its claimed fires wait for a dispatch slot, a write or
// the CPU, and each one waiting makes the next later. A scheduled fire
// that the dispatcher reaches more than the misfire threshold after its
// instant is a misfire, as one the scan finds that late is: under
// DO_NOTHING it is not sent but settled SKIPPED, the record of its one
// missed instant, which costs one row of a settle instead of a route, a
// call and a result. So an overloaded admin sends what it can at most
// the threshold late and records the rest, rather than sending
// everything later and later (BENCHMARKS.md, item 2 of issue 36). A job
// whose strategy is FIRE_ONCE_NOW has its late fire sent: that is the
// one fire it asks for.
//
// Skipping the fires reached too late keeps what is sent within the
// threshold, but each still waits its turn for a dispatch slot and the
// writer before it is skipped, and costs a settle. So the scheduler sheds
// at the door too: while the dispatcher's latest sends were more than
// half the threshold late (Overloaded), the scan claims the fires of
// DO_NOTHING jobs due within its look-ahead as misfire records, at the
// cost of the claim alone (schedule/shed.go), until the sends are timely
// again.

// lateSendValid is how long a late send says that the dispatcher is
// overloaded. While the scan sheds, the sends stop once the fires it
// claimed before are sent, and no timely send comes to say that the
// backlog is gone: a second without a late send says so.
const lateSendValid = time.Second

// overdueLogEvery is how often the log says that fires were recorded as
// misfires for the admin's overload, while they are.
const overdueLogEvery = 10 * time.Second

// lateness is how long after its instant fire f is reached at now, and
// whether f is a scheduled fire, the only kind that can be overdue.
func lateness(f *fire, now time.Time) (time.Duration, bool) {
	return now.Sub(f.at), f.triggerType == carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE && !f.at.IsZero()
}

// overdue reports whether scheduled fire f reached the dispatcher at now
// more than the misfire threshold after its instant.
func (d *Dispatcher) overdue(f *fire, now time.Time) bool {
	late, scheduled := lateness(f, now)
	return scheduled && late > d.cfg.MisfireThreshold
}

// skips reports whether an overdue fire of job is skipped: its misfire
// strategy is not FIRE_ONCE_NOW (job nil: unknown, sent).
func skips(job *store.JobDefinition) bool {
	return job != nil && job.MisfireStrategy != carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW
}

// misfired is the result that settles overdue fire f, reached at now,
// SKIPPED: the record of its missed instant. It counts it.
func (d *Dispatcher) misfired(f *fire, now time.Time) store.Result {
	d.cfg.Metrics.Misfire(carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING)
	d.overdueLog.add(now)
	return store.Result{RunID: f.id, Status: carillonv1.RunStatus_RUN_STATUS_SKIPPED, FinishedAt: now,
		Message: fmt.Sprintf("misfire: the admin was overloaded and reached this fire %s after its instant, more than the "+
			"misfire threshold (%s); not sent, skipped by DO_NOTHING", now.Sub(f.at).Round(time.Millisecond), d.cfg.MisfireThreshold)}
}

// Overloaded says whether the dispatcher's latest sends, in the last
// second, were more than half the misfire threshold late, or the oldest
// fire it holds unsent (backlog.go) is that far past its instant, and if
// so, why, for the records of the fires the scheduler sheds
// (schedule.Config.Overloaded).
func (d *Dispatcher) Overloaded() (why string, ok bool) {
	now, limit := d.cfg.Clock.Now(), d.cfg.MisfireThreshold/2
	if late, ok := d.sendLate.over(limit, lateSendValid, now); ok {
		return fmt.Sprintf("the admin was overloaded when this fire was claimed (its latest sends were %s late, more than half "+
			"the misfire threshold, %s)", late.Round(time.Millisecond), d.cfg.MisfireThreshold), true
	}
	if at, ok := d.backlog.oldest(); ok && now.Sub(at) > limit {
		return fmt.Sprintf("the admin was overloaded when this fire was claimed (a fire it claimed before was still waiting "+
			"to be sent %s after its instant, more than half the misfire threshold, %s)", now.Sub(at).Round(backlogStep),
			d.cfg.MisfireThreshold), true
	}
	return "", false
}

// sendLate is how late after their instants the dispatcher's latest
// scheduled fires were reached for their calls.
type sendLate struct {
	mu   sync.Mutex
	late time.Duration
	at   time.Time // when it was seen
}

// observe notes that fires were reached late after their instant, at now.
func (s *sendLate) observe(late time.Duration, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.late, s.at = late, now
}

// over returns how late the latest sends were, and whether that was more
// than limit, seen less than valid before now: a dispatcher idle since
// it was overloaded is not any more.
func (s *sendLate) over(limit, valid time.Duration, now time.Time) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.late, s.late > limit && now.Sub(s.at) < valid
}

// overdueLog says in the log, at most every overdueLogEvery, how many
// fires were recorded as misfires for the admin's overload since its last
// line.
type overdueLog struct {
	logger    *slog.Logger
	threshold time.Duration

	mu     sync.Mutex
	count  int
	logged time.Time
}

// add counts one overdue fire, reached at now, and logs the count when
// the last line is overdueLogEvery old.
func (l *overdueLog) add(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count++
	if !l.logged.IsZero() && now.Sub(l.logged) < overdueLogEvery {
		return
	}
	l.logger.Warn("trigger: the admin is overloaded: fires it reached more than the misfire threshold after their instants "+
		"were recorded as misfires (SKIPPED) instead of sent; it has more jobs than its cores or its database can send",
		"fires", l.count, "misfire_threshold", l.threshold)
	l.count, l.logged = 0, now
}
