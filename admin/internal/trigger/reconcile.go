package trigger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

const (
	// ReconcileIntervalDefault is the default ReconcileConfig.Interval.
	ReconcileIntervalDefault = 2 * time.Second
	// UnknownWaitDefault is the default ReconcileConfig.UnknownWait.
	UnknownWaitDefault = 10 * time.Minute
)

// ReconcileConfig configures Reconcile.
type ReconcileConfig struct {
	// MisfireThreshold is how late a scheduled run may be sent. Defaults
	// to schedule.MisfireThresholdDefault.
	MisfireThreshold time.Duration
	// Interval is the time between two rounds of questions to executors
	// that did not answer. Defaults to ReconcileIntervalDefault.
	Interval time.Duration
	// UnknownWait is how long a run waits for its result when an executor
	// that may hold it cannot say (HeldRuns unimplemented) and the job has
	// no timeout; with a timeout, it waits the timeout plus LostGrace.
	// Then it is settled LOST. Defaults to UnknownWaitDefault.
	UnknownWait time.Duration
}

// Reconcile settles the runs that earlier admin processes claimed but did
// not record as sent (Config.Unsent, store.RunStore.Unsent): an admin
// killed between claiming a fire and recording its dispatch leaves them
// RUNNING with no executor, and it is unknown whether it sent them. It asks
// every executor that may hold them (ExecutorService.HeldRuns), then:
//   - a run an executor holds is recorded as sent there and left to finish;
//   - a run that no executor holds, when every executor answered, is sent
//     now; a scheduled run more than the misfire threshold late goes
//     through its job's misfire strategy instead (DO_NOTHING settles it
//     SKIPPED);
//   - while an executor that may hold a run does not answer and is live,
//     the run waits, and the question is asked again every Interval; once
//     that executor is no longer live, the run is settled LOST;
//   - an executor that cannot answer (HeldRuns unimplemented) is never
//     sent the run again: the run waits for a result until UnknownWait (or
//     its timeout) has passed, then is settled LOST.
//
// No run is sent twice. Reconcile returns when every such run is settled
// or recorded, or when ctx ends.
func (rs *Rescuer) Reconcile(ctx context.Context, cfg ReconcileConfig) error {
	cfg.MisfireThreshold = cmp.Or(cfg.MisfireThreshold, 5*time.Second)
	cfg.Interval = cmp.Or(cfg.Interval, ReconcileIntervalDefault)
	cfg.UnknownWait = cmp.Or(cfg.UnknownWait, UnknownWaitDefault)
	if rs.cfg.Store.Shared() {
		return rs.adopt(ctx, cfg)
	}
	r := &reconciler{rs: rs, cfg: cfg, done: map[int64]time.Time{}, unknownSince: map[int64]time.Time{},
		unsent: func(ctx context.Context) ([]store.Run, error) { return rs.cfg.Store.Runs.Unsent(ctx, rs.cfg.Unsent) }}
	for {
		left, err := r.round(ctx)
		if err != nil && ctx.Err() == nil {
			rs.cfg.Logger.Error("trigger: reconcile the runs an earlier admin process claimed", "err", err)
		}
		if err == nil && left == 0 {
			rs.earlier.Store(nil) // each settled or recorded: none is the monitor's to leave be
			return nil
		}
		if !sleep(ctx, rs.cfg.Clock, cfg.Interval) {
			return nil
		}
	}
}

// reconciler is the state of one Reconcile.
type reconciler struct {
	rs  *Rescuer
	cfg ReconcileConfig
	// done are the runs this Reconcile sent, recorded or settled, and
	// when: not looked at again, so none is sent twice even before its
	// record lands. When adopting, a run sent that is still unsent once
	// the batch that sent it is over (redoAfter) is looked at again: the
	// batch failed without a record (a write refused, say), and the run
	// would otherwise wait for good.
	done map[int64]time.Time
	// unknownSince is when a run was found held, perhaps, by an executor
	// that cannot answer.
	unknownSince map[int64]time.Time
	// unsent reads the runs to settle: those of earlier processes
	// (store.RunStore.Unsent), or of dead admins this one adopted
	// (store.RunStore.Adopted).
	unsent func(ctx context.Context) ([]store.Run, error)
}

// round asks about and settles the unsent runs still open, and returns
// how many are left for a later round.
func (r *reconciler) round(ctx context.Context) (left int, err error) {
	rs := r.rs
	runs, err := r.unsent(ctx)
	if err != nil {
		return 0, err
	}
	if rs.cfg.Store.Shared() { // adoption goes on for good: forget the runs no longer unsent
		open := make(map[int64]bool, len(runs))
		for _, run := range runs {
			open[run.ID] = true
		}
		maps.DeleteFunc(r.done, func(id int64, _ time.Time) bool { return !open[id] })
		maps.DeleteFunc(r.unknownSince, func(id int64, _ time.Time) bool { return !open[id] })
	}
	now := rs.cfg.Clock.Now()
	runs = slices.DeleteFunc(runs, func(run store.Run) bool {
		at, ok := r.done[run.ID]
		if ok && rs.cfg.Store.Shared() && now.Sub(later(at, run.TriggeredAt)) > r.redoAfter() {
			rs.cfg.Logger.Warn("trigger: a run this admin sent for an admin it adopted is still not sent; looking at it again", "run", run.ID)
			return false
		}
		return ok
	})
	if len(runs) == 0 {
		return 0, nil
	}
	byGroup := map[int64][]store.Run{}
	for _, run := range runs {
		byGroup[run.GroupID] = append(byGroup[run.GroupID], run)
	}
	var errs []error
	for groupID, group := range byGroup {
		n, err := r.group(ctx, groupID, group)
		left += n
		errs = append(errs, err)
	}
	return left, errors.Join(errs...)
}

// redoAfter is how long after a run's instant, or after it was sent if
// later, the batch that sent it can still be at work (batchTimeout).
func (r *reconciler) redoAfter() time.Duration { return 2*r.rs.cfg.DispatchTimeout + 5*time.Second }

// group settles the unsent runs of one group, and returns how many wait.
func (r *reconciler) group(ctx context.Context, groupID int64, runs []store.Run) (left int, err error) {
	rs := r.rs
	now := rs.cfg.Clock.Now()
	// A run never routed was never sent: it is sent now, or goes through
	// its misfire strategy, without a question to anyone.
	var unsent []store.Run
	asked := runs[:0:0]
	for _, run := range runs {
		if run.RoutedTo == "" {
			unsent = append(unsent, run)
			r.done[run.ID] = now
		} else {
			asked = append(asked, run)
		}
	}
	runs = asked
	if len(runs) == 0 {
		return 0, r.send(ctx, unsent, now, false)
	}
	src, err := r.candidates(ctx, groupID, runs)
	if err != nil {
		return len(runs), errors.Join(err, r.send(ctx, unsent, now, false))
	}
	answers := r.ask(ctx, groupID, src, runs)
	var live []string
	if !src.manual {
		if live, err = rs.cfg.Store.Registry.Executors(ctx, src.app, rs.router.liveSince(now)); err != nil {
			return len(runs), err
		}
	}
	var held []store.Dispatch
	var lost []store.Result
	var pinned []store.Run
	for _, run := range runs {
		v := r.verdict(run, answers, src.manual, live)
		switch {
		case v.holder != "" && v.state == carillonv1.HeldRunState_HELD_RUN_STATE_CUT_SHORT:
			// It started there, and its process died before its end: no
			// result will come, and it must not run again.
			lost = append(lost, cutShortResult(run.ID, v.holder, now))
			r.done[run.ID] = now
		case v.holder != "":
			held = append(held, store.Dispatch{RunID: run.ID, ExecutorAddress: v.holder, ShardIndex: run.ShardIndex, ShardTotal: run.ShardTotal,
				TimeoutSeconds: run.TimeoutSeconds, TriggerMessage: fmt.Sprintf("sent by an earlier admin process before it stopped; "+
					"executor %s said it holds the run (%s) when this admin started", v.holder, strings.TrimPrefix(v.state.String(), "HELD_RUN_STATE_"))})
			r.done[run.ID] = now
		case len(v.waiting) > 0:
			left++
		case len(v.unsure) > 0:
			since, ok := r.unknownSince[run.ID]
			if !ok {
				since = now
				r.unknownSince[run.ID] = now
				rs.cfg.Logger.Warn("trigger: a run an earlier admin process claimed may be held by executors that cannot say; waiting for its result",
					"run", run.ID, "executors", v.unsure)
			}
			wait := r.cfg.UnknownWait
			if run.TimeoutSeconds > 0 {
				wait = time.Duration(run.TimeoutSeconds)*time.Second + LostGraceDefault
			}
			if now.Sub(since) < wait {
				left++
				continue
			}
			lost = append(lost, store.Result{RunID: run.ID, Status: carillonv1.RunStatus_RUN_STATUS_LOST, FinishedAt: now, ByAdmin: true,
				Message: fmt.Sprintf("lost: an earlier admin process stopped while sending this run, and executors %s, which may hold it, "+
					"could not say so and reported no result within %s", strings.Join(v.unsure, ", "), wait)})
			r.done[run.ID] = now
		case len(v.gone) > 0:
			lost = append(lost, store.Result{RunID: run.ID, Status: carillonv1.RunStatus_RUN_STATUS_LOST, FinishedAt: now, ByAdmin: true,
				Message: fmt.Sprintf("lost: an earlier admin process stopped while sending this run, and executors %s, which may have held it, "+
					"stopped heartbeating", strings.Join(v.gone, ", "))})
			r.done[run.ID] = now
		case run.RoutedTo != store.RouteAnyExecutor:
			// Its executor answered and does not hold it: the earlier
			// admin stopped before its call, or its call did not arrive.
			// It is sent again there only, where a late call of that admin
			// finds it held.
			pinned = append(pinned, run)
			r.done[run.ID] = now
		default:
			unsent = append(unsent, run)
			r.done[run.ID] = now
		}
	}
	if len(held) > 0 {
		err = errors.Join(err, rs.completer.record(ctx, held...))
	}
	if len(lost) > 0 {
		err = errors.Join(err, rs.completer.Settle(ctx, lost))
	}
	return left, errors.Join(err, r.send(ctx, unsent, now, false), r.send(ctx, pinned, now, true))
}

// ask asks the executors that may hold runs whether they do: each run's
// routed executor, or every candidate for a run whose route is unknown
// (store.RouteAnyExecutor). The answers are by executor, each about the
// runs asked of it.
func (r *reconciler) ask(ctx context.Context, groupID int64, src candidateSource, runs []store.Run) []heldAnswer {
	byAddr := map[string][]store.Run{}
	for _, run := range runs {
		if run.RoutedTo != store.RouteAnyExecutor {
			byAddr[run.RoutedTo] = append(byAddr[run.RoutedTo], run)
			continue
		}
		for _, a := range src.addrs {
			byAddr[a] = append(byAddr[a], run)
		}
	}
	answers := make([]heldAnswer, 0, len(byAddr))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for addr, addrRuns := range byAddr {
		wg.Go(func() {
			var a heldAnswer
			if src.xxl {
				a = r.rs.gateway.xxlHeld(ctx, groupID, addr, addrRuns)
			} else {
				ids := make([]int64, len(addrRuns))
				for i, run := range addrRuns {
					ids[i] = run.ID
				}
				a = r.rs.gateway.heldRuns(ctx, groupID, addr, ids)
			}
			a.asked = make(map[int64]bool, len(addrRuns))
			for _, run := range addrRuns {
				a.asked[run.ID] = true
			}
			mu.Lock()
			answers = append(answers, a)
			mu.Unlock()
		})
	}
	wg.Wait()
	return answers
}

// verdict is what the executors' answers say of one run.
type verdict struct {
	holder  string // the executor that holds it, if one said so
	state   carillonv1.HeldRunState
	waiting []string // live executors that did not answer: ask again
	unsure  []string // executors that cannot answer, or MANUAL ones that did not
	gone    []string // executors that did not answer and are no longer live
}

// verdict sorts the executors' answers about run.
func (r *reconciler) verdict(run store.Run, answers []heldAnswer, manual bool, live []string) verdict {
	var v verdict
	for _, a := range answers {
		if !a.asked[run.ID] {
			continue
		}
		state, ok := a.held[run.ID]
		switch {
		case a.err == nil && a.unsure[run.ID]:
			v.waiting = append(v.waiting, a.address)
		case a.err == nil && ok:
			v.holder, v.state = a.address, state
		case a.err == nil:
		case errors.Is(a.err, errCannotAnswer) || manual:
			v.unsure = append(v.unsure, a.address)
		case slices.Contains(live, a.address):
			v.waiting = append(v.waiting, a.address)
		default:
			v.gone = append(v.gone, a.address)
		}
	}
	return v
}

// candidateSource is who may hold a group's unsent runs.
type candidateSource struct {
	app    string
	manual bool
	xxl    bool // xxl-job executors: asked with xxlHeld
	addrs  []string
}

// candidates returns the executors that may hold runs of group groupID:
// for an AUTO group every executor registered since ExecutorTTL before the
// oldest of the runs was claimed, for a MANUAL group its addresses. A
// deleted group has none: its runs are sent, and fail as deleted.
func (r *reconciler) candidates(ctx context.Context, groupID int64, runs []store.Run) (candidateSource, error) {
	rs := r.rs
	g, err := rs.cfg.Store.Groups.Get(ctx, groupID)
	if errors.Is(err, store.ErrNotFound) {
		return candidateSource{}, nil
	}
	if err != nil {
		return candidateSource{}, err
	}
	src := candidateSource{app: g.AppName, manual: g.AddressMode == carillonv1.AddressMode_ADDRESS_MODE_MANUAL,
		xxl: g.ExecutorProtocol == carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB}
	if src.manual {
		src.addrs, err = rs.router.executors(ctx, g)
		return src, err
	}
	oldest := runs[0].TriggeredAt
	for _, run := range runs {
		if run.TriggeredAt.Before(oldest) {
			oldest = run.TriggeredAt
		}
	}
	src.addrs, err = rs.cfg.Store.Registry.Executors(ctx, g.AppName, oldest.Add(-rs.cfg.ExecutorTTL))
	return src, err
}

// send dispatches runs that no executor holds, now; a scheduled run more
// than the misfire threshold late goes through its job's misfire strategy.
// With pin, each goes to the executor it was routed to (Run.RoutedTo).
func (r *reconciler) send(ctx context.Context, runs []store.Run, now time.Time, pin bool) error {
	if len(runs) == 0 {
		return nil
	}
	rs := r.rs
	jobIDs := make([]int64, len(runs))
	for i, run := range runs {
		jobIDs[i] = run.JobID
	}
	jobs, err := rs.cfg.Store.Jobs.Definitions(ctx, jobIDs)
	if err != nil {
		return err
	}
	var skipped []store.Result
	fs := make([]fire, 0, len(runs))
	seq := rs.cfg.Store.Jobs.StopSeq()
	for i := range runs {
		run := &runs[i]
		late := now.Sub(run.TriggeredAt)
		scheduled := run.TriggerType == carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE || run.TriggerType == carillonv1.TriggerType_TRIGGER_TYPE_MISFIRE
		if job, ok := jobs[run.JobID]; ok && scheduled && late > r.cfg.MisfireThreshold &&
			job.MisfireStrategy != carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW {
			skipped = append(skipped, store.Result{RunID: run.ID, Status: carillonv1.RunStatus_RUN_STATUS_SKIPPED, FinishedAt: now,
				Message: fmt.Sprintf("misfire: an earlier admin process stopped before sending this run, and no executor holds it; "+
					"%s late when this admin could send it; skipped by DO_NOTHING", late.Round(time.Millisecond))})
			continue
		}
		// A dead admin's fire claimed ahead of its instant goes at its instant.
		f := fireOf(run, later(now, run.TriggeredAt), seq)
		if pin {
			f.fixed = &fixedRoute{pin: run.RoutedTo}
		}
		fs = append(fs, f)
	}
	if len(fs) > 0 {
		rs.cfg.Logger.Info("trigger: sending runs an earlier admin process claimed and no executor holds", "runs", len(fs))
		rs.dispatcher.start(fs)
	}
	if len(skipped) > 0 {
		return rs.completer.Settle(ctx, skipped)
	}
	return nil
}
