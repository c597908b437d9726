package schedule

import (
	"context"
	"fmt"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Workflows are scanned as jobs are, in the same scan: a workflow's next
// instant is a column of its row, found by the same kind of index, and
// claimed by the same compare-and-set, in a transaction that also makes
// the instant's workflow run and stores its root nodes' runs PENDING, due
// on the instant (store.WorkflowStore.ClaimFires). Those runs then go the way of
// retries and child jobs' runs: on the queue, claimed and sent at their
// due time. So one mechanism gives both exactly-once per instant across
// crashes and admins, and misfires are judged by one threshold.

// SpecOfWorkflow is the schedule part of w.
func SpecOfWorkflow(w store.Workflow) Spec {
	return Spec{Type: w.ScheduleType, Cron: w.Cron, IntervalSeconds: w.IntervalSeconds, TimeZone: w.TimeZone}
}

// scanWorkflows claims every workflow instant due within the window,
// queues the root nodes' runs it starts (and kills, through
// Config.KillFunc, the runs of workflow runs a COVER_EARLY instant
// cancelled), and returns the earliest next instant after them of this
// admin's own workflows and of the other admins' (zero if none), as scan
// does for jobs.
func (s *Scheduler) scanWorkflows(ctx context.Context) (next, others time.Time, err error) {
	for range 1000 { // a bound, in case a workflow keeps falling due within the window
		now := s.now()
		ws, err := s.cfg.Store.Workflows.Due(ctx, now.Add(s.window), now.Add(s.takeover()), scanBatch)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		if len(ws) == 0 {
			break
		}
		claims := make([]store.WorkflowClaim, 0, len(ws))
		for _, w := range ws {
			c, err := s.claimWorkflow(w, now)
			if err != nil {
				s.cfg.Logger.Error("schedule: workflow cannot be scheduled; stopping its schedule", "workflow", w.ID, "err", err)
				c = store.WorkflowClaim{WorkflowID: w.ID, Due: w.NextFireAt}
			}
			claims = append(claims, c)
		}
		ch, err := s.cfg.Store.Workflows.ClaimFires(ctx, claims, now)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		s.Enqueue(ch.FollowUps...)
		if len(ch.Kill) > 0 && s.cfg.KillFunc != nil {
			s.cfg.KillFunc(ch.Kill)
		}
		if len(ch.Ended) > 0 && s.cfg.EndedFunc != nil {
			s.cfg.EndedFunc(ch.Ended)
		}
		if len(ws) < scanBatch { // all due claimed; the rest at the next scan, as scan does
			break
		}
	}
	return s.cfg.Store.Workflows.NextFireAt(ctx)
}

// claimWorkflow decides what workflow w's due instant makes, as claim
// does for a job: the workflow run of an instant at most the misfire
// threshold late; for a later one, one workflow run standing for the
// missed instants (MISFIRE under FIRE_ONCE_NOW, SKIPPED under
// DO_NOTHING), and the runs of the instants after them that are not late.
func (s *Scheduler) claimWorkflow(w store.Workflow, now time.Time) (store.WorkflowClaim, error) {
	spec := SpecOfWorkflow(w)
	due := w.NextFireAt
	c := store.WorkflowClaim{WorkflowID: w.ID, Due: due}
	if now.Sub(due) <= s.cfg.MisfireThreshold {
		var err error
		c.Next, err = Next(spec, due)
		c.Fires = []store.WorkflowFire{{At: due, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE}}
		return c, err
	}
	missed, next, err := Late(spec, due, now.Add(-s.cfg.MisfireThreshold), MissedCountMax)
	if err != nil {
		return c, err
	}
	count := fmt.Sprint(missed.Count)
	if !missed.Exact {
		count = "at least " + count
	}
	if w.MisfireStrategy == carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW {
		c.Fires = append(c.Fires, store.WorkflowFire{At: missed.First, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MISFIRE})
		s.cfg.Logger.Warn("schedule: workflow misfire; run once now (FIRE_ONCE_NOW)", "workflow", w.ID, "missed", count)
	} else {
		c.Fires = append(c.Fires, store.WorkflowFire{At: missed.First, Skipped: fmt.Sprintf(
			"misfire: %s scheduled instants from %s through %s fell due while no admin was running or the scan was behind, and were found more than %s late; skipped by DO_NOTHING",
			count, missed.First.UTC().Format(time.RFC3339), missed.Last.UTC().Format(time.RFC3339), s.cfg.MisfireThreshold)})
		s.cfg.Logger.Warn("schedule: workflow misfire; skipped (DO_NOTHING)", "workflow", w.ID, "missed", count)
	}
	for !next.IsZero() && !next.After(now) {
		c.Fires = append(c.Fires, store.WorkflowFire{At: next, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE})
		if next, err = Next(spec, next); err != nil {
			return c, err
		}
	}
	c.Next = next
	if next.IsZero() {
		c.Next, err = First(spec, now)
	}
	return c, err
}
