package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// A paused group (GroupStore.Pause) fires nothing: the scan's statements leave
// its jobs and workflows out (DueJobs, CountDue, NextFireAt, the claim's
// advance, and their workflow twins), and the claim of pending runs
// (ClaimRuns) leaves its runs pending. Each is one subquery on the
// partial index groups_paused in a statement the scan makes anyway, not a
// query per fire. GroupStore.Resume records what the pause skipped and moves
// each schedule past it.
const (
	pausedGroups       = `(SELECT id FROM groups WHERE paused_at IS NOT NULL)`
	jobsNotPaused      = ` AND jobs.group_id NOT IN ` + pausedGroups
	workflowsNotPaused = ` AND workflows.group_id NOT IN ` + pausedGroups
	runsNotPaused      = ` AND runs.group_id NOT IN ` + pausedGroups
)

// Pause pauses group id at now and returns it: from then on none of
// its jobs and workflows is claimed by a scan and none of its pending runs
// is claimed, and the fires of its jobs claimed before (within the
// scan's look-ahead) are dropped by this process's dispatcher at their
// instant (JobStore.StoppedSince). Pausing a paused group changes nothing.
func (s GroupStore) Pause(ctx context.Context, id int64, now time.Time) (Group, error) {
	var jobs []int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := dbsqlc.New(tx).PauseGroup(ctx, dbsqlc.PauseGroupParams{PausedAt: now.UnixMilli(), UpdatedAt: now.UnixMilli(), ID: id})
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return err
			}
			return groupFound(ctx, tx, id)
		}
		// On PostgreSQL, waits for the scans claiming the group's jobs now
		// (they lock them): a scan after the pause leaves them out.
		jobs, err = s.groupJobIDs(ctx, tx, id)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return Group{}, err
		}
		return Group{}, fmt.Errorf("store: pause group %d: %w", id, err)
	}
	for _, j := range jobs {
		s.stops.mark(j)
	}
	return s.Get(ctx, id)
}

// groupFound returns ErrNotFound unless group id exists.
func groupFound(ctx context.Context, tx *sql.Tx, id int64) error {
	_, err := dbsqlc.New(tx).GroupFound(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: group %d", ErrNotFound, id)
	}
	return err
}

// groupJobIDs returns the IDs of group id's enabled jobs, locked on
// PostgreSQL.
func (s *db) groupJobIDs(ctx context.Context, tx *sql.Tx, id int64) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM jobs WHERE group_id = $1 AND enabled = 1 ORDER BY id`+s.d.forUpdate(), id) //nolint:gosec // a constant SQL fragment
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var j int64
		if err := rows.Scan(&j); err != nil {
			return nil, err
		}
		ids = append(ids, j)
	}
	return ids, rows.Err()
}

// Skipped is what a pause did to one job's or workflow's schedule: the
// instants it skipped and where the schedule goes on.
type Skipped struct {
	// Count instants were skipped, First the earliest and Last the latest;
	// none when Count is 0.
	Count       int64
	First, Last time.Time
	// Message says so, naming the pause; the record's message.
	Message string
	// Next becomes the next instant: the first after the resume; zero
	// when nothing is scheduled.
	Next time.Time
}

// ResumePlan decides, for GroupStore.Resume, what the pause from pausedAt to now
// skipped of one job's or workflow's schedule, whose next instant (at or
// before now) fell in it. Both are pure computations.
type ResumePlan struct {
	Job      func(j Job, pausedAt, now time.Time) (Skipped, error)
	Workflow func(w Workflow, pausedAt, now time.Time) (Skipped, error)
}

// Resume ends group id's pause at now, in one transaction: each of
// its enabled jobs and workflows whose next instant fell in the pause
// moves to the next instant plan says (the first after now), and its
// skipped instants are recorded as one SKIPPED run (a job's) or workflow
// run (a workflow's) per pause. A fire of the job claimed before the
// pause and dropped since (settled SKIPPED, its instant in the pause) is
// that record, counting the rest. It returns the group and the group's
// pending runs already due, which waited while it was paused and are to
// be queued again. Resuming a group not paused changes nothing.
func (s GroupStore) Resume(ctx context.Context, id int64, now time.Time, plan ResumePlan) (Group, []Run, error) {
	var due []Run
	err := s.write(ctx, func(tx *sql.Tx) error {
		var paused sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT paused_at FROM groups WHERE id = $1`+s.d.forUpdate(), id).Scan(&paused)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: group %d", ErrNotFound, id)
		}
		if err != nil || !paused.Valid {
			return err
		}
		pausedAt := fromMillis(paused)
		if err := dbsqlc.New(tx).ResumeGroup(ctx, dbsqlc.ResumeGroupParams{UpdatedAt: now.UnixMilli(), ID: id}); err != nil {
			return err
		}
		if err := resumeJobs(ctx, tx, id, pausedAt, now, plan.Job); err != nil {
			return err
		}
		if err := resumeWorkflows(ctx, tx, id, pausedAt, now, plan.Workflow); err != nil {
			return err
		}
		rows, err := dbsqlc.New(tx).DuePendingRunsOfGroup(ctx, dbsqlc.DuePendingRunsOfGroupParams{GroupID: id, Now: now.UnixMilli()})
		if err != nil {
			return err
		}
		due, err = runsOf(rows)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return Group{}, nil, err
		}
		return Group{}, nil, fmt.Errorf("store: resume group %d: %w", id, err)
	}
	g, err := s.Get(ctx, id)
	return g, due, err
}

// resumeJobs moves the schedule of group id's enabled jobs due by now past
// the pause, and records what it skipped of each (GroupStore.Resume).
func resumeJobs(ctx context.Context, tx *sql.Tx, id int64, pausedAt, now time.Time,
	plan func(Job, time.Time, time.Time) (Skipped, error)) error {
	jobs, err := collectJobs(tx.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs
		WHERE group_id = $1 AND enabled = 1 AND next_fire_at IS NOT NULL AND next_fire_at <= $2`, id, now.UnixMilli()))
	if err != nil {
		return err
	}
	for _, j := range jobs {
		sk, err := plan(*j, pausedAt, now)
		if err != nil {
			return fmt.Errorf("job %d: %w", j.ID, err)
		}
		if err := dbsqlc.New(tx).MoveJobPastPause(ctx, dbsqlc.MoveJobPastPauseParams{NextFireAt: millis(sk.Next), ID: j.ID}); err != nil {
			return err
		}
		if err := recordPausedJob(ctx, tx, *j, pausedAt, now, sk); err != nil {
			return err
		}
	}
	return nil
}

// recordPausedJob records the instants of job j that a pause from
// pausedAt skipped: in the SKIPPED run of its earliest fire dropped at the
// pause, if there is one, or in a new SKIPPED run. Fires of the job
// claimed before the pause (the scan's look-ahead may hold two or more of
// an every-second job) are all dropped at their instants: the earliest is
// the record and counts the others, which it replaces, so that a pause
// leaves one record per job.
func recordPausedJob(ctx context.Context, tx *sql.Tx, j Job, pausedAt, now time.Time, sk Skipped) error {
	dropped, lastDropped, others, err := droppedFires(ctx, tx, j.ID, pausedAt, now)
	if err != nil {
		return err
	}
	q := dbsqlc.New(tx)
	if len(dropped) > 0 {
		until := sk.Last
		if len(dropped) > 1 && lastDropped > until.UnixMilli() {
			until = time.UnixMilli(lastDropped)
		}
		if err := q.RecordPausedFires(ctx, dbsqlc.RecordPausedFiresParams{Missed: sk.Count + others, Until: millis(until),
			Message: sk.Message, ID: dropped[0]}); err != nil {
			return err
		}
		for _, id := range dropped[1:] {
			if err := q.DeleteDroppedFire(ctx, id); err != nil {
				return err
			}
		}
		return nil
	}
	if sk.Count == 0 {
		return nil
	}
	// A one-off run at the same instant holds its key (job, instant):
	// rare enough to go unrecorded rather than fail the resume.
	if taken, err := q.FiresAtInstant(ctx, dbsqlc.FiresAtInstantParams{JobID: j.ID, ScheduledAt: sk.First.UnixMilli()}); err != nil || taken > 0 {
		return err
	}
	r := Run{
		JobID: j.ID, GroupID: j.GroupID, Handler: j.Handler, Param: j.Param, ShardTotal: 1,
		TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, ScheduledAt: sk.First, DueAt: sk.First, FinishedAt: now,
		Status: carillonv1.RunStatus_RUN_STATUS_SKIPPED, Message: sk.Message, MissedCount: sk.Count, MissedUntil: sk.Last,
	}
	return insertRun(ctx, tx, &r)
}

// droppedFires returns the IDs of job id's scheduled fires dropped in a
// pause from pausedAt to now (settled SKIPPED, their instants in it),
// oldest first, the instant of the latest, and how many instants all but
// the first stand for.
func droppedFires(ctx context.Context, tx *sql.Tx, id int64, pausedAt, now time.Time) (ids []int64, last, others int64, err error) {
	rows, err := dbsqlc.New(tx).DroppedFires(ctx, dbsqlc.DroppedFiresParams{JobID: id, Status: carillonv1.RunStatus_RUN_STATUS_SKIPPED,
		PausedAt: pausedAt.UnixMilli(), Now: now.UnixMilli(), TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE})
	if err != nil {
		return nil, 0, 0, err
	}
	for _, r := range rows {
		if len(ids) > 0 {
			others += max(r.MissedCount, 1)
		}
		ids, last = append(ids, r.ID), r.ScheduledAt
	}
	return ids, last, others, nil
}

// resumeWorkflows moves the schedule of group id's enabled workflows due
// by now past the pause, and records what it skipped of each as a SKIPPED
// workflow run (GroupStore.Resume).
func resumeWorkflows(ctx context.Context, tx *sql.Tx, id int64, pausedAt, now time.Time,
	plan func(Workflow, time.Time, time.Time) (Skipped, error)) error {
	q := dbsqlc.New(tx)
	rows, err := q.DueWorkflowsOfGroup(ctx, dbsqlc.DueWorkflowsOfGroupParams{GroupID: id, Now: now.UnixMilli()})
	if err != nil {
		return err
	}
	for _, row := range rows {
		w := workflowOf(dbsqlc.WorkflowByIDRow(row))
		sk, err := plan(w, pausedAt, now)
		if err != nil {
			return fmt.Errorf("workflow %d: %w", w.ID, err)
		}
		if err := q.MoveWorkflowPastPause(ctx, dbsqlc.MoveWorkflowPastPauseParams{NextFireAt: millis(sk.Next), ID: w.ID}); err != nil {
			return err
		}
		if sk.Count == 0 {
			continue
		}
		err = q.InsertSkippedWorkflowRun(ctx, dbsqlc.InsertSkippedWorkflowRunParams{WorkflowID: w.ID, Status: carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SKIPPED,
			ScheduledAt: sk.First.UnixMilli(), TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Message: sk.Message,
			CreatedAt: now.UnixMilli(), FinishedAt: now.UnixMilli()})
		if err != nil {
			return err
		}
	}
	return nil
}
