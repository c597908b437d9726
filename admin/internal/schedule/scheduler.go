// Package schedule decides when jobs fire. A scan reads the jobs due within
// a short look-ahead window from the store, claims each fire (advancing the
// job's next fire and storing its run, RUNNING, in one transaction) and
// puts the run on an in-memory queue, which hands it to the dispatcher at
// its own instant. Fires more than the misfire threshold late (missed
// while no admin ran) go through the job's misfire strategy instead, and
// are recorded as one run per job and outage. The scan runs when the
// earliest next fire enters the window, and at least every scan interval.
package schedule

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/carillonhq/carillon/admin/internal/calendar"
	"github.com/carillonhq/carillon/admin/internal/metrics"
	"github.com/carillonhq/carillon/admin/internal/service"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

const (
	// LookaheadDefault is how far ahead the scan claims fires: long
	// enough to claim a burst of thousands of fires of one instant before
	// it (BENCHMARKS.md measures how long), short enough that few claimed runs
	// are waiting when an admin dies (they end FAILED, see the README).
	// Not a whole number of seconds: jobs firing every second have their
	// next fire claimed half-way between two instants, not on the instant,
	// where the claim's work would compete with sending the fires.
	LookaheadDefault = 1500 * time.Millisecond
	// ScanIntervalDefault is the longest time between scans.
	ScanIntervalDefault = time.Second
	// scanGapShare is the shortest time between scans, as a share of the
	// look-ahead (250 ms of the default 1.5 s): fires spread over the
	// second are claimed in batches of at least this much time, still a
	// look-ahead less this ahead of their instants. Each scan costs a few
	// statements whatever it claims (the due jobs, the next fires, the
	// burst count, the claim's transaction), and every admin sharing a
	// database scans its own buckets: at 50 ms, three admins over
	// PostgreSQL made three times the scans of one for the same fires.
	scanGapShare = 6
	// behindGap is the shortest time between scans when the next fire is
	// due already (the scan is behind): a backlog's batches are large
	// whatever the gap.
	behindGap = 50 * time.Millisecond
	// MisfireThresholdDefault is how late a fire may be before it is a misfire.
	MisfireThresholdDefault = 5 * time.Second
	// MissedCountMax is how many missed instants of a cron job one misfire
	// counts one by one (one cron Next each): beyond it, the record's missed_count is
	// MissedCountMax and its message says "at least". FIX_RATE instants are
	// always counted exactly.
	MissedCountMax = 1000
	// scanBatch is the most jobs one scan query and claim transaction take:
	// a claim transaction holds SQLite's one writer for a few milliseconds
	// at most, so fires falling due meanwhile are not held up.
	scanBatch = 256
	// scanBatchAhead is the most jobs one pass takes while the scan
	// claims a burst ahead of the look-ahead (a window longer than the
	// look-ahead: claimLead). The claims share the writer with the
	// results of the burst before, written in parts of up to 1,024
	// (package trigger), and the writer goes to each waiting write in
	// turn: at 256 a claim, a million-job minute mark's claims got a
	// fifth of the writer while the previous mark's results settled
	// (9,000 claims a second against 28,000 results), and ended after
	// their instant (BENCHMARKS.md, issue 36). It takes them only while
	// the fires it claims are more than scanAheadFar ahead: a claim
	// holding the writer for tens of milliseconds then makes none late,
	// where nearer its instant it would delay the routes of the fires
	// handed over before it (a 100,000-job mark, claimed 10 s ahead, was
	// sent later).
	scanBatchAhead = 1024
	// scanAheadFar is how far ahead of their instants the fires of a
	// pass must be for the next to take scanBatchAhead jobs.
	scanAheadFar = 10 * time.Second
	// scanPasses bounds the passes (of scanBatch or scanBatchAhead jobs)
	// of one scan, in case a job keeps falling due within the window: a
	// burst of more than that many passes' fires is claimed by several
	// scans, each with the window of the first (scanOnce).
	scanPasses = 1000
	// claimCostDefault is what one claimed fire is taken to cost the
	// writer until the scans measured it (claimLead).
	claimCostDefault = 50 * time.Microsecond
	// claimLeadMax bounds how far ahead of a burst the scan claims it,
	// however large the burst: long enough for 1,000,000 fires on one
	// instant at 25 µs a claim (twice 25 s, the measure of claimLead), and
	// less than a minute, so that the claims of a minute mark start a few
	// seconds after the previous mark's instant, not on it, where they
	// would take the CPU from the executors starting that mark's runs.
	claimLeadMax = 55 * time.Second
	// claimLeadMin is the least claim time that makes the scan claim a
	// burst earlier than the look-ahead.
	claimLeadMin = 100 * time.Millisecond
)

// claimLead is how long before an instant on which n fires (and those
// due before it) are due the scan must start claiming them: the
// look-ahead, plus twice what n claims cost at perClaim each (the writer
// is shared with results and routes), plus how much earlier than the
// look-ahead the fire loop hands n fires over, at handOver each
// (Config.FireAheadPerFire), at most claimLeadMax. The claims of a burst
// must end before its hand-over begins: claims still running then are
// handed over in parts, late, and slow the routes and sends of the first
// part (a 100,000-fire mark, claimed 6 s ahead at 25 µs a claim and handed
// over 2.9 s ahead, was sent up to 6 s late on the 2-core machine). A
// burst of 1,000,000 fires on a minute mark takes tens of seconds to
// claim. The time added is whole seconds, so that the claims of jobs
// firing every second stay half-way between two instants (see
// LookaheadDefault), not on an instant, where they would take the CPU
// from the executors starting that instant's burst; and none is added
// for less than claimLeadMin.
func claimLead(lookahead, perClaim, handOver time.Duration, n int) time.Duration {
	extra := time.Duration(n) * (2*perClaim + handOver)
	if extra < claimLeadMin {
		return lookahead
	}
	extra = (extra + time.Second - 1).Truncate(time.Second)
	return lookahead + min(extra, claimExtraMax(lookahead))
}

// claimExtraMax is the most claimLead adds to lookahead: claimLeadMax
// less the look-ahead, in whole seconds (none if the look-ahead is longer).
func claimExtraMax(lookahead time.Duration) time.Duration {
	return max(claimLeadMax-lookahead, 0).Truncate(time.Second)
}

// burstAfter is how long after the window a scan claimed in the fires
// that size the next claim lead start (lead). The jobs due before are
// those that fire every second or so, whose next fires a scan leaves
// there whatever it claimed: the scans claim them as they come. Counted,
// 20,000 FIX_RATE 1 s jobs made a "burst" of 20,000 fires whose lead
// kept the window at 4.5 s, claims that grew with the claim's cost as
// the admin fell behind, and fires claimed seconds ahead, which the scan
// does not shed, that an admin unable to send them held until long after
// their instants (BENCHMARKS.md, issue 36).
const burstAfter = time.Second

// burstCount is how many of the jobs due within claimLeadMax the scan
// counts to size the coming burst (claimLead): enough to make the lead
// its longest at perClaim a claim and handOver a fire, since more would
// change nothing. The count reads the due index entry by entry, each far
// cheaper than the claim it sizes, so it costs the most before the
// largest bursts.
func burstCount(lookahead, perClaim, handOver time.Duration) int {
	perFire := max(2*perClaim+handOver, time.Nanosecond)
	return int((claimExtraMax(lookahead) + perFire - 1) / perFire)
}

// Dispatcher takes the fires whose instant has come (or comes within
// Config.FireAhead: then it must send each at its At), each as its
// TriggerType: the trigger. Fire must not block, and must not keep es: the
// scheduler calls it from its timing loop and reuses the slice.
type Dispatcher interface {
	Fire(es []Entry)
}

// DispatchFunc is a function that serves as a Dispatcher.
type DispatchFunc func(es []Entry)

// Fire calls f(es).
func (f DispatchFunc) Fire(es []Entry) { f(es) }

// Config configures a Scheduler.
type Config struct {
	// Store holds the jobs and runs. Required.
	Store *store.Store
	// Lookahead is how far ahead fires are claimed. Defaults to LookaheadDefault.
	Lookahead time.Duration
	// ScanInterval is the longest time between scans. Defaults to ScanIntervalDefault.
	ScanInterval time.Duration
	// MisfireThreshold is how late a fire may be. Defaults to MisfireThresholdDefault.
	MisfireThreshold time.Duration
	// FireAhead hands fires to the Dispatcher this long before their instant, so
	// that the dispatcher can prepare them (claim their runs) and send them
	// on the instant. Zero hands them over on the instant.
	FireAhead time.Duration
	// FireAheadPerFire hands the fires of an instant over earlier by this
	// much for each fire due on it: a burst takes longer to prepare and
	// send (trigger.SendLead).
	FireAheadPerFire time.Duration
	// FireGather hands over, with the earliest instant due, every instant
	// whose own hand-over comes less than FireGather after: one hand-over,
	// not one a millisecond, for an every-second load spread over the
	// second (the Dispatcher gathers them too: trigger.GatherInstants).
	// Zero hands each instant over on its own.
	FireGather time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Metrics counts the fires scans take and the misfires. Defaults to
	// nil: nothing is counted.
	Metrics *metrics.Metrics
	// KillFunc kills the running runs of the workflow runs that a
	// COVER_EARLY workflow's instant cancelled (as KillRun does), without
	// blocking. Nil leaves them to end as they do.
	KillFunc func(runs []store.Run)
	// Overloaded, if set, says whether the dispatcher is overloaded (its
	// sends run late), and why: while it is, the scan sheds the fires it
	// claims (shed.go). Nil never sheds.
	Overloaded func() (why string, ok bool)
	// EndedFunc hands on the workflow runs that the schedule's writes
	// ended (store.WorkflowChange.Ended: discarded, covered, or failed at
	// once), without blocking. Nil drops them.
	EndedFunc func(ended []store.WorkflowRun)
}

// Scheduler reads due fires ahead and fires them on time.
type Scheduler struct {
	cfg   Config
	queue *Queue
	wake  chan struct{}

	// window is how far ahead the next scan claims: the look-ahead, or
	// longer before a burst (claimLead). perClaim is what a claimed fire
	// took the scan lately (a moving average over its batches, from the
	// read of the jobs to the entries queued). Both are the scan loop's
	// own.
	window   time.Duration
	perClaim time.Duration
	// passes bounds the passes of one scan (scanPasses; a test's fewer),
	// and cut says the last scan ran them all with full batches: more
	// was due within its window. The scan loop's own.
	passes int
	cut    bool
	// batchAhead is the most jobs a pass takes while the scan claims a
	// burst ahead (scanBatchAhead; a test's fewer).
	batchAhead int
	// now is the scan's clock: time.Now, which a test replaces with one
	// that moves on at each reading, as a real scan's does while it works.
	now func() time.Time
	// takeoverDelay is store.TakeoverDelay, or a test's (takeover).
	takeoverDelay time.Duration

	health health    // for Ready (health.go)
	behind behindLog // the scan loop's own
	// shedding is why the current pass of the scan sheds its fires ("":
	// it does not; shed.go), and shed logs them. The scan loop's own.
	shedding string
	shed     shedLog
}

// New returns a Scheduler; Run starts it.
func New(cfg Config) *Scheduler {
	cfg.Lookahead = cmp.Or(cfg.Lookahead, LookaheadDefault)
	cfg.ScanInterval = cmp.Or(cfg.ScanInterval, ScanIntervalDefault)
	cfg.MisfireThreshold = cmp.Or(cfg.MisfireThreshold, MisfireThresholdDefault)
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	return &Scheduler{cfg: cfg, queue: NewQueue(), wake: make(chan struct{}, 1), window: cfg.Lookahead, perClaim: claimCostDefault, passes: scanPasses, batchAhead: scanBatchAhead, now: time.Now,
		takeoverDelay: store.TakeoverDelay, behind: behindLog{logger: cfg.Logger, threshold: cfg.MisfireThreshold}, shed: shedLog{logger: cfg.Logger}}
}

// Wake asks for a scan now, e.g. after a job was started or changed so its
// first fire may be sooner than the next regular scan.
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Enqueue queues pending runs created outside the scan (retries, child
// jobs' runs) to fire at their DueAt.
func (s *Scheduler) Enqueue(runs ...store.Run) {
	entries := make([]Entry, len(runs))
	for i, r := range runs {
		entries[i] = Entry{RunID: r.ID, JobID: r.JobID, At: r.DueAt, TriggerType: r.TriggerType}
	}
	s.queue.Push(entries...)
}

// Run recovers the pending runs a previous admin left, then scans and hands
// due fires to d until ctx ends: it runs the fire loop (FireLoop) and the
// scan loop (ScanLoop). Fires run on their own loop, so a slow scan never
// delays a due fire.
func (s *Scheduler) Run(ctx context.Context, d Dispatcher) error {
	loops := service.NewGroup(s.FireLoop(d), s.ScanLoop())
	if err := loops.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	loops.Stop()
	return nil
}

// scans scans until ctx ends: when the earliest next fire enters the
// window, when woken (Wake), and at least every scan interval.
func (s *Scheduler) scans(ctx context.Context) error {
	defer s.health.stop()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case <-s.wake:
		case <-s.cfg.Store.PartitionChanged(): // an admin joined or died: claim what this one owns now
		}
		timer.Reset(s.scanOnce(ctx))
	}
}

// scanOnce runs one scan of the scan loop, sets the window of the next
// and returns how long to wait for it: until the earliest next fire
// enters the window (the look-ahead, or earlier for a burst), or the
// other admins' earliest comes within the takeover's. A scan cut short
// by its bound on passes (a burst of over scanPasses × scanBatch fires)
// leaves the next its window: a window sized for the fires still
// unclaimed alone (lead) would claim the rest of a large burst after the
// fire loop hands it over, which it does by the count of all of it (a
// million-fire minute mark's last quarter was claimed 10 s before its
// instant, 15 s after its hand-over).
func (s *Scheduler) scanOnce(ctx context.Context) (wait time.Duration) {
	window := s.window
	next, others, err := s.scan(ctx)
	if ctx.Err() == nil {
		s.health.scan(time.Now(), err)
	}
	if err != nil && ctx.Err() == nil {
		s.cfg.Logger.Error("schedule: scan", "err", err)
	}
	wait = s.cfg.ScanInterval
	s.window = s.cfg.Lookahead
	if !next.IsZero() {
		// While the dispatcher is overloaded, the next scan claims no
		// further ahead than the look-ahead, within which it sheds
		// (shed.go): a longer lead is for a burst the admin can send.
		// Under a load it could not send, the lead grew with the load
		// and the claim's cost, and the fires claimed seconds ahead,
		// never shed, waited in the dispatcher until long after their
		// instants.
		if !s.overloaded() {
			s.window = s.lead(ctx, window)
			if s.cut {
				s.window = max(s.window, window)
			}
		}
		wait = min(wait, max(time.Until(next)-s.window, s.gap(next)))
	}
	if !others.IsZero() {
		wait = min(wait, max(time.Until(others)-s.takeover(), s.gap(others)))
	}
	return wait
}

// handOver gives d every fire the scans claimed that is still
// queued, once the scheduler stops: the dispatcher sends each on its
// instant (within the look-ahead), so a graceful stop leaves no claimed
// fire unsent. Queued pending runs (retries, child runs) stay pending in
// the store for the next start.
func (s *Scheduler) handOver(d Dispatcher) {
	rest, _ := s.queue.PopDue(nil, time.Now().Add(100*365*24*time.Hour))
	claimed := slices.DeleteFunc(rest, func(e Entry) bool { return !e.Claimed })
	if len(claimed) > 0 {
		s.cfg.Logger.Info("schedule: stopping; sending the fires already claimed", "fires", len(claimed))
		d.Fire(claimed)
	}
}

// recover puts the pending runs of a previous admin process back on the
// queue: retries and child runs, which fire late or not, and the scheduled
// fires older versions read ahead as pending runs, which go through their
// job's misfire strategy when more than the misfire threshold late.
func (s *Scheduler) recover(ctx context.Context) error {
	pending, err := s.cfg.Store.Runs.Pending(ctx)
	if err != nil {
		return fmt.Errorf("schedule: recover: %w", err)
	}
	now := time.Now()
	firedOnce := map[int64]bool{} // FIRE_ONCE_NOW jobs that already have their one late fire
	// Latest first, so the one late fire FIRE_ONCE_NOW keeps is the newest.
	for i := len(pending) - 1; i >= 0; i-- {
		r := pending[i]
		// A run waiting for a concurrency slot was due and is not late:
		// its claim waits for a slot again.
		scheduled := r.TriggerType == carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE && !r.WaitsForSlot()
		if !scheduled || now.Sub(r.DueAt) <= s.cfg.MisfireThreshold {
			s.queue.Push(Entry{RunID: r.ID, JobID: r.JobID, At: r.DueAt, TriggerType: r.TriggerType})
			continue
		}
		job, err := s.cfg.Store.Jobs.Get(ctx, r.JobID)
		if err == nil && job.MisfireStrategy == carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW && !firedOnce[r.JobID] {
			firedOnce[r.JobID] = true
			s.queue.Push(Entry{RunID: r.ID, JobID: r.JobID, At: now, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MISFIRE})
			s.cfg.Metrics.Misfire(carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW)
			continue
		}
		msg := fmt.Sprintf("misfire: the admin was down at the scheduled instant %s (%s late); skipped by DO_NOTHING",
			r.ScheduledAt.UTC().Format(time.RFC3339Nano), now.Sub(r.ScheduledAt).Round(time.Millisecond))
		if err := s.cfg.Store.Fires.Skip(ctx, r.ID, msg, now); err != nil {
			return fmt.Errorf("schedule: recover: %w", err)
		}
		s.cfg.Metrics.Misfire(carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING)
	}
	return nil
}

// overloaded reports whether the dispatcher says it is overloaded
// (Config.Overloaded).
func (s *Scheduler) overloaded() bool {
	if s.cfg.Overloaded == nil {
		return false
	}
	_, ok := s.cfg.Overloaded()
	return ok
}

// lead is how far ahead the next scan claims, after a scan that claimed
// within claimed: claimLead of the jobs due within claimLeadMax but more
// than burstAfter beyond what the scan claimed (at most burstCount of
// them), so that a burst is seen coming even behind jobs that fire every
// second.
func (s *Scheduler) lead(ctx context.Context, claimed time.Duration) time.Duration {
	now := time.Now()
	n, err := s.cfg.Store.Fires.CountDue(ctx, now.Add(max(claimed, s.cfg.Lookahead)+burstAfter), now.Add(claimLeadMax),
		burstCount(s.cfg.Lookahead, s.perClaim, s.cfg.FireAheadPerFire))
	if err != nil {
		s.cfg.Logger.Warn("schedule: count the jobs due; claiming with the look-ahead", "err", err)
		return s.cfg.Lookahead
	}
	return claimLead(s.cfg.Lookahead, s.perClaim, s.cfg.FireAheadPerFire, n)
}

// gap is the shortest time before the scan that claims next
// (scanGapShare), or behindGap when next is due already: a scan that
// falls behind claims what fell due meanwhile at once.
func (s *Scheduler) gap(next time.Time) time.Duration {
	if !time.Now().Before(next) {
		return behindGap
	}
	return s.cfg.Lookahead / scanGapShare
}

// takeover is how far ahead the scan claims the fires of the jobs and
// workflows that other admins sharing the database own (store.Partition):
// store.TakeoverDelay after their owner, scanning the same look-ahead,
// should have; negative when the look-ahead is shorter than that delay.
func (s *Scheduler) takeover() time.Duration { return s.cfg.Lookahead - s.takeoverDelay }

// scan claims every fire due within the window (of the other admins'
// jobs, within the takeover's), queues its run, and returns the earliest
// next fire after them of this admin's own jobs and workflows (next) and
// of the other admins' (others); zero if none.
func (s *Scheduler) scan(ctx context.Context) (next, others time.Time, err error) {
	misfires := misfireLog{logger: s.cfg.Logger}
	defer misfires.done()
	// behind is how long after its instant the scan claims its earliest
	// fire (behind.go).
	var behind time.Duration
	shed, why := 0, "" // misfires recorded while shedding, and the latest reason
	far := false       // the last pass's fires were far ahead: the next takes more (scanBatchAhead)
	s.cut = false
	for pass := range s.passes { // a bound, in case a job keeps falling due within the window
		now := s.now()
		s.shedding = ""
		if s.cfg.Overloaded != nil {
			if over, ok := s.cfg.Overloaded(); ok {
				s.shedding = cmp.Or(over, "the dispatcher was overloaded")
				why = s.shedding
			}
		}
		// Shedding, the scan claims no further than the look-ahead,
		// within which it sheds (shed.go): a burst's longer window, or a
		// scan that goes on while a load keeps its batches full, would
		// claim fires that it then hands over to be sent late.
		window := s.window
		if s.shedding != "" {
			window = min(window, s.cfg.Lookahead)
		}
		batch := scanBatch
		if far {
			batch = s.batchAhead
		}
		jobs, err := s.cfg.Store.Fires.DueJobs(ctx, now.Add(window), now.Add(s.takeover()), batch)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		if len(jobs) == 0 {
			break
		}
		// The earliest comes first; a fire due before the scans started
		// (while no admin ran) counts from their start.
		behind = max(behind, now.Sub(later(jobs[0].NextFireAt, s.behind.started)))
		seq := s.cfg.Store.Jobs.StopSeq()                 // before the claim: see Entry.StopSeq
		cals, err := JobCalendars(ctx, s.cfg.Store, jobs) // no read unless a job names calendars
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		claims := make([]store.Claim, 0, len(jobs))
		for _, j := range jobs {
			c, err := s.claim(j, cals[j.ID], now)
			if err != nil {
				s.cfg.Logger.Error("schedule: job cannot be scheduled; stopping its schedule", "job", j.ID, "err", err)
				c = store.Claim{JobID: j.ID, Due: j.NextFireAt} // Next zero: nothing scheduled
			}
			claims = append(claims, c)
		}
		runs, err := s.cfg.Store.Fires.Claim(ctx, claims)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		s.cfg.Metrics.FiresScheduled(len(runs))
		entries := make([]Entry, 0, len(runs))
		for i := range runs {
			r := &runs[i]
			if r.MissedCount > 0 { // the record of a misfire
				s.cfg.Metrics.Misfire(misfireStrategy(r))
				if s.shedding != "" { // counted, not logged one by one: most are shed (shed.go)
					shed++
				} else {
					misfires.add(r)
				}
			}
			if r.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING {
				// The record of a misfire skipped by DO_NOTHING, or a
				// capped job's fire that waits for a slot (or was
				// discarded): settling a run of its job hands it on.
				continue
			}
			entries = append(entries, ClaimedEntry(r, seq))
		}
		s.queue.Push(entries...)
		if len(claims) >= scanBatch/4 { // a batch large enough to measure
			// The whole batch, from the read of its jobs to its entries
			// queued: what the scan takes per fire, not the claim's
			// write alone (a third less).
			s.perClaim = (7*s.perClaim + s.now().Sub(now)/time.Duration(len(claims))) / 8
		}
		// The jobs come earliest first: the next pass's are due no
		// earlier than this one's last.
		far = window > s.cfg.Lookahead && jobs[len(jobs)-1].NextFireAt.Sub(now) > scanAheadFar
		if len(jobs) < batch {
			// All that was due is claimed. Fires that entered the window
			// meanwhile wait for the next scan (gap at most), so that
			// jobs spread over the second are claimed in batches, not a
			// few at a time by a scan that never ends.
			break
		}
		s.cut = pass == s.passes-1
	}
	s.cfg.Metrics.ScanBehind(behind)
	s.behind.scanned(behind, time.Now())
	s.shed.scanned(shed, why, time.Now())
	n, err := s.cfg.Store.Fires.Next(ctx)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	wnext, wothers := n.Workflows, n.WorkflowsOthers
	if now := s.now(); within(wnext, now.Add(s.window)) || within(wothers, now.Add(s.takeover())) {
		// Read with the jobs' next fires: most scans find no workflow
		// due, and skip the round trip of its claim.
		if wnext, wothers, err = s.scanWorkflows(ctx); err != nil {
			return n.Jobs, n.JobsOthers, err
		}
	}
	return earliest(n.Jobs, wnext), earliest(n.JobsOthers, wothers), nil
}

// within reports whether t is an instant (not zero) at or before bound.
func within(t, bound time.Time) bool { return !t.IsZero() && !t.After(bound) }

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// earliest is the earlier of a and b, where zero is none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// claim decides what happens to job j's due fire. A fire at most the
// misfire threshold late is claimed as it is. A later one means the job
// missed instants while no admin ran: they are recorded as one run (see
// misfire), and the instants after them that are at most the threshold
// late fire at once, all in the one claim. An instant that the job's
// calendars exclude (cals; nil for none) neither fires nor misfires.
// While the dispatcher is overloaded (s.shedding), the fires of a job
// whose strategy is DO_NOTHING are claimed as misfire records (shed.go).
func (s *Scheduler) claim(j store.Job, cals *calendar.Set, now time.Time) (store.Claim, error) {
	spec := SpecOf(j)
	spec.Calendars = cals
	due := j.NextFireAt
	c := store.Claim{JobID: j.ID, Due: due, Capped: j.Capped}
	if cals.Excluded(due) {
		// Computed before its calendars changed, or a FIX_DELAY fire
		// (the run's finish plus the delay) on an excluded instant: the
		// next included instant instead, and no run.
		var err error
		c.Next, err = Included(spec, due)
		return c, err
	}
	if now.Sub(due) <= s.cfg.MisfireThreshold {
		var err error
		c.Next, err = Next(spec, due)
		if !s.sheds(j, due, now) {
			c.Runs = []store.Run{fireRun(j, due, due)}
			return c, err
		}
		if err != nil {
			return c, err
		}
		var shed store.Run
		shed, c.Next, err = s.shedFrom(j, spec, due, c.Next, now)
		c.Runs = []store.Run{shed}
		if c.Next.IsZero() && err == nil {
			// FIX_DELAY waits for a run that will not run: from now.
			c.Next, err = First(spec, now)
		}
		return c, err
	}
	missed, next, err := Late(spec, due, now.Add(-s.cfg.MisfireThreshold), MissedCountMax)
	if err != nil {
		return c, err
	}
	c.Runs = append(c.Runs, s.misfire(j, missed, now))
	for !next.IsZero() && !next.After(now) {
		if s.sheds(j, next, now) {
			c.Runs = append(c.Runs, shedRun(j, next, now, s.shedding))
		} else {
			c.Runs = append(c.Runs, fireRun(j, next, now))
		}
		if next, err = Next(spec, next); err != nil {
			return c, err
		}
	}
	c.Next = next
	if next.IsZero() {
		// The schedule ended, or waits for a run (FIX_DELAY): from now.
		c.Next, err = First(spec, now)
	}
	return c, err
}

// fireRun is the run of job j's fire of instant at, claimed for dispatch
// at once: RUNNING, triggered at send, when it will be sent.
func fireRun(j store.Job, at, send time.Time) store.Run {
	return store.Run{
		JobID: j.ID, GroupID: j.GroupID, Handler: j.Handler, Param: j.Param, ShardTotal: 1,
		TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, ScheduledAt: at, TriggeredAt: send,
		Status: carillonv1.RunStatus_RUN_STATUS_RUNNING,
	}
}

// misfire is the one run that records the instants job j missed: under
// FIRE_ONCE_NOW the MISFIRE run fired now for them, under DO_NOTHING a
// SKIPPED run. Its scheduled instant is the first missed one.
func (s *Scheduler) misfire(j store.Job, m Missed, now time.Time) store.Run {
	r := fireRun(j, m.First, now)
	r.MissedCount, r.MissedUntil = m.Count, m.Last
	if j.MisfireStrategy == carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW {
		r.TriggerType = carillonv1.TriggerType_TRIGGER_TYPE_MISFIRE
		return r // logged by the scan (misfireLog)
	}
	count := fmt.Sprint(m.Count)
	if !m.Exact {
		count = "at least " + count
	}
	what := fmt.Sprintf("%s scheduled instants from %s through %s fell due while no admin was running or the scan was behind, and were found more than %s late",
		count, m.First.UTC().Format(time.RFC3339), m.Last.UTC().Format(time.RFC3339), s.cfg.MisfireThreshold)
	if m.Count == 1 {
		what = fmt.Sprintf("the scheduled instant %s fell due while no admin was running or the scan was behind, and was found more than %s late",
			m.First.UTC().Format(time.RFC3339), s.cfg.MisfireThreshold)
	}
	r.Status, r.TriggeredAt, r.FinishedAt = carillonv1.RunStatus_RUN_STATUS_SKIPPED, time.Time{}, now
	r.Message = "misfire: " + what + "; skipped by DO_NOTHING"
	return r // logged by the scan (misfireLog)
}

// fireLoop hands queued runs to d at their instants.
func (s *Scheduler) fireLoop(ctx context.Context, d Dispatcher) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var due []Entry
	for {
		due = due[:0]
		wait := time.Hour
		for {
			at, n := s.queue.Earliest()
			if at.IsZero() {
				wait = time.Hour
				break
			}
			wait = time.Until(at) - s.cfg.FireAhead - time.Duration(n)*s.cfg.FireAheadPerFire
			if wait > 0 && (len(due) == 0 || wait >= s.cfg.FireGather) {
				break
			}
			due, _ = s.queue.PopDue(due, at)
		}
		if len(due) > 0 {
			d.Fire(due)
			// The entries point at their runs: kept until the next
			// hand-over, they would hold a burst's runs long after
			// their dispatch.
			clear(due)
			if cap(due) > keptEntries {
				due = nil
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-s.queue.Changed():
		}
	}
}

// SpecOf returns the schedule of job j.
func SpecOf(j store.Job) Spec {
	return Spec{Type: j.ScheduleType, Cron: j.Cron, IntervalSeconds: j.IntervalSeconds, TimeZone: j.TimeZone}
}
