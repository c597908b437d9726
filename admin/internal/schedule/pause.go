package schedule

import (
	"fmt"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
)

// ResumePlan is what resuming a paused group does to the schedules of its
// jobs and workflows (store.GroupStore.Resume): the instants from the one due
// when the pause began up to the resume are skipped, recorded as one
// record per job or workflow and pause, as a DO_NOTHING misfire is, and
// the schedule goes on from its first instant at or after the resume (no
// catch-up of the paused instants).
func ResumePlan() store.ResumePlan {
	return store.ResumePlan{
		Job: func(j store.Job, pausedAt, now time.Time) (store.Skipped, error) {
			return skipPaused(SpecOf(j), j.NextFireAt, pausedAt, now)
		},
		Workflow: func(w store.Workflow, pausedAt, now time.Time) (store.Skipped, error) {
			return skipPaused(SpecOfWorkflow(w), w.NextFireAt, pausedAt, now)
		},
	}
}

// skipPaused is ResumePlan for one schedule spec whose next instant is
// due: the instants of spec from due up to now, skipped by the pause from
// pausedAt, and the first instant at or after now.
func skipPaused(spec Spec, due, pausedAt, now time.Time) (store.Skipped, error) {
	if !due.Before(now) {
		return store.Skipped{Next: due}, nil
	}
	m, next, err := Late(spec, due, now, MissedCountMax)
	if err != nil {
		return store.Skipped{}, err
	}
	if next.IsZero() {
		// The schedule ended, or waits for a run (FIX_DELAY): from now.
		if next, err = First(spec, now); err != nil {
			return store.Skipped{}, err
		}
	}
	// The count is the record's missed_count, not the message's: a fire
	// dropped at the pause may be the record, and count one more.
	return store.Skipped{
		Count: m.Count, First: m.First, Last: m.Last, Next: next,
		Message: fmt.Sprintf("paused: the group was paused from %s to %s; the scheduled instants in the pause were skipped",
			pausedAt.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339)),
	}, nil
}
