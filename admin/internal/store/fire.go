package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// FireStore is the scan's side of the database: the due jobs, their
// claims, and the claims of runs waiting for a slot (Store.Fires).
type FireStore struct{ *db }

// DueJobs returns the enabled jobs that this admin's scan claims, earliest
// next fire first, at most limit of them, none of a paused group: those
// of its own buckets (partition.go) whose next fire is at or before
// before, and those of the other admins' buckets whose next fire is at or
// before takeover (later than their owners claim them, see
// TakeoverDelay). Over SQLite, or an admin alone, every job is its own.
// Only the fields the scan's claims use are read (dueColumns: the
// schedule, what a run is made of, the calendars, the misfire strategy
// and the cap); the others are left zero. A burst reads thousands of rows
// a second, and the rest of a job (scripts, descriptions, alarms) would be
// most of each.
func (s FireStore) DueJobs(ctx context.Context, before, takeover time.Time, limit int) ([]Job, error) {
	var rows *sql.Rows
	var err error
	if p := s.partition(); p.All() {
		rows, err = s.q.dueJobs.QueryContext(ctx, before.UnixMilli(), limit)
	} else {
		rows, err = s.r.QueryContext(ctx, dueJobsSharedSQL, before.UnixMilli(), takeover.UnixMilli(), p.Lo, p.Hi, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("store: due jobs: %w", err)
	}
	defer rows.Close()
	var js []Job
	var calendars string
	for rows.Next() {
		if js == nil {
			// A Job is ~470 bytes: grown by appends, a batch of 256
			// allocated twice its size (most of a scan's allocation).
			js = make([]Job, 0, min(limit, 1024))
		}
		// Scanned in place: a Job of its own would escape to the heap
		// through Scan's arguments, one more allocation a due job.
		js = append(js, Job{Enabled: true})
		j := &js[len(js)-1]
		err := rows.Scan(intCol(&j.ID), intCol(&j.GroupID), &j.Handler, &j.Param, intCol(&j.ScheduleType), &j.Cron,
			intCol(&j.IntervalSeconds), &j.TimeZone, intCol(&j.MisfireStrategy), &calendars, millisInto{&j.NextFireAt},
			boolInto{&j.Capped})
		if err != nil {
			return nil, fmt.Errorf("store: due jobs: %w", err)
		}
		j.CalendarIDs = parseIDs(calendars)
	}
	return js, rows.Err()
}

// dueColumns are the columns of a job that DueJobs reads.
const dueColumns = `id, group_id, handler, param, schedule_type, cron, interval_seconds, time_zone, misfire_strategy,
	calendar_ids, next_fire_at, capped`

// dueJobs is the condition of the partial index jobs_due and the jobs of
// groups not paused.
const dueJobs = `FROM jobs WHERE enabled = 1 AND next_fire_at IS NOT NULL` + jobsNotPaused

var (
	// dueJobsSQL reads the jobs due at or before $1, at most $2.
	dueJobsSQL = `SELECT ` + dueColumns + ` ` + dueJobs + ` AND next_fire_at <= $1 ORDER BY next_fire_at LIMIT $2`
	// dueJobsSharedSQL reads the jobs of the buckets [$3, $4) due at or
	// before $1 and the others due at or before $2, at most $5.
	dueJobsSharedSQL = shared(`SELECT `+dueColumns+` `+dueJobs, `$1`, `$2`, `$3`, `$4`, `ORDER BY next_fire_at LIMIT $5`)

	// countDueSQL reads the index jobs_due only: the jobs due after $3
	// and at or before $1, at most $2; countDueSharedSQL those of the
	// buckets [$3, $4) due after $5 and at or before $1.
	countDueSQL       = `SELECT count(*) FROM (SELECT 1 ` + dueJobs + ` AND next_fire_at > $3 AND next_fire_at <= $1 LIMIT $2) AS due`
	countDueSharedSQL = `SELECT count(*) FROM (SELECT 1 ` + dueJobs + ` AND next_fire_at > $5 AND next_fire_at <= $1` + inBuckets(`$3`, `$4`) + ` LIMIT $2) AS due`

	// nextFireSQL reads the entries of jobs_due in order up to the first
	// of a group not paused; nextFireSharedSQL that of the buckets
	// [$1, $2) and that of the others.
	nextFireSQL       = `SELECT next_fire_at ` + dueJobs + ` ORDER BY next_fire_at LIMIT 1`
	nextFireSharedSQL = nextShared(`SELECT next_fire_at `+dueJobs, `ORDER BY next_fire_at LIMIT 1`)

	// nextBothSQL reads nextFireSQL's column and nextWorkflowSQL's,
	// nextBothSharedSQL nextFireSharedSQL's two and nextWorkflowSharedSQL's.
	nextBothSQL       = `SELECT (` + nextFireSQL + `), (` + nextWorkflowSQL + `)`
	nextBothSharedSQL = `SELECT ` + nextSharedColumns(`SELECT next_fire_at `+dueJobs, `ORDER BY next_fire_at LIMIT 1`) +
		`, ` + nextSharedColumns(`SELECT next_fire_at `+dueWorkflows, `ORDER BY next_fire_at LIMIT 1`)
)

// CountDue returns how many enabled jobs of this admin's buckets have
// their next fire after after and at or before before, counting at most
// limit: how large a burst of fires is coming, for the scan to claim it
// early enough. It reads the index jobs_due only.
func (s FireStore) CountDue(ctx context.Context, after, before time.Time, limit int) (int, error) {
	var n int
	var err error
	if p := s.partition(); p.All() {
		err = s.q.countDue.QueryRowContext(ctx, before.UnixMilli(), limit, after.UnixMilli()).Scan(&n)
	} else {
		err = s.r.QueryRowContext(ctx, countDueSharedSQL, before.UnixMilli(), limit, p.Lo, p.Hi, after.UnixMilli()).Scan(&n)
	}
	if err != nil {
		return 0, fmt.Errorf("store: count due jobs: %w", err)
	}
	return n, nil
}

// NextFires is the earliest next instants of the jobs and the workflows
// that a scan claims (Next), each zero when there is none.
type NextFires struct {
	// Jobs and Workflows are those of this admin's buckets.
	Jobs, Workflows time.Time
	// JobsOthers and WorkflowsOthers are those of the other admins'
	// buckets: zero over SQLite, or for an admin alone.
	JobsOthers, WorkflowsOthers time.Time
}

// Next returns the earliest next fire of the enabled jobs of groups not
// paused, and what WorkflowStore.NextFireAt returns, in one round trip:
// the scan reads it after each of its scans, and over PostgreSQL an admin
// standing by scans about once a second for nothing but this.
func (s FireStore) Next(ctx context.Context) (NextFires, error) {
	var j, w, jx, wx sql.NullInt64
	var err error
	if p := s.partition(); p.All() {
		err = s.q.nextBoth.QueryRowContext(ctx).Scan(&j, &w)
	} else {
		err = s.r.QueryRowContext(ctx, nextBothSharedSQL, p.Lo, p.Hi).Scan(&j, &jx, &w, &wx)
	}
	if err != nil {
		return NextFires{}, fmt.Errorf("store: next fires: %w", err)
	}
	return NextFires{Jobs: fromMillis(j), Workflows: fromMillis(w), JobsOthers: fromMillis(jx), WorkflowsOthers: fromMillis(wx)}, nil
}

// Claim advances one job's schedule by one fire.
type Claim struct {
	JobID int64
	// Due is the job's next fire as read; the claim applies only if it is
	// still the job's next fire (nobody changed the job since).
	Due time.Time
	// Next becomes the job's next fire; zero when nothing is scheduled.
	Next time.Time
	// Runs are stored in the same transaction as the advance: the fire of
	// the scheduled instant, or, for a job found late, the record of its
	// missed instants (a SKIPPED run, or the MISFIRE run fired for them)
	// and the fires of the instants less than the misfire threshold late.
	// The latest scheduled instant of its runs that fire (all but the
	// SKIPPED) becomes the job's last fire.
	Runs []Run
	// Capped says the job or its group has a concurrency cap (Job.Capped):
	// its RUNNING runs take slots, or wait for one (caps.go).
	Capped bool
}

// Claim applies claims in one transaction and returns the runs it
// stored, RUNNING, SKIPPED and PENDING alike (only the RUNNING ones are to
// be sent: a capped job's fire that finds no free slot waits PENDING, or
// is SKIPPED under DISCARD_LATER; see caps.go). Advancing a job and storing its runs together, with a unique key
// on (job, scheduled instant, shard, attempt), is what makes each scheduled
// instant fire exactly once across crashes: a claim either happened with
// its runs or not at all. Each job appears at most once in claims.
func (s FireStore) Claim(ctx context.Context, claims []Claim) ([]Run, error) {
	var list jsonRows
	n := 0
	capped := false
	for _, c := range claims {
		list.key(c.JobID).int(c.Due.UnixMilli()).nullInt(millis(c.Next)).nullInt(firedInstant(c.Runs))
		n += len(c.Runs)
		capped = capped || c.Capped
	}
	now := time.Now()
	// Sized once: the trigger points at these runs until they are sent,
	// and the slack of appends would stay with them.
	runs := make([]Run, 0, n)
	err := s.writeLeased(ctx, func(tx *sql.Tx) error {
		runs = runs[:0]
		rows, err := tx.StmtContext(ctx, s.q.advanceJobs).QueryContext(ctx, list.Object()) //nolint:sqlclosecheck // a transaction's statement closes with the transaction
		if err != nil {
			return err
		}
		advanced := make(map[int64]bool, len(claims))
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close() //nolint:sqlclosecheck // closed on every path before the transaction's next statement, which a deferred Close would come after
				return err
			}
			advanced[id] = true
		}
		// An error that ended the iteration (rather than the last row)
		// means some advanced jobs are missing from advanced: their runs
		// would not be stored while their next fire moved on. Fail the
		// transaction instead; nothing of it is kept.
		if err := rows.Err(); err != nil {
			rows.Close()
			return err
		}
		if err := rows.Close(); err != nil {
			return err
		}
		applied := claims
		if capped {
			applied = cappedClaims(claims, advanced)
			if err := capFires(ctx, tx, s.d, applied, now); err != nil {
				return err
			}
		}
		for _, c := range applied {
			if advanced[c.JobID] {
				runs = append(runs, c.Runs...)
			}
		}
		return s.insertRuns(ctx, tx, runs)
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim fires: %w", err)
	}
	if s.pg != nil {
		s.pg.claimed.Add(int64(len(runs)))
	}
	return runs, nil
}

// cappedClaims returns the claims that advanced, the capped ones with
// copies of their runs, which capFires changes: a transaction tried again
// starts from the claims as given.
func cappedClaims(claims []Claim, advanced map[int64]bool) []Claim {
	out := make([]Claim, 0, len(claims))
	for _, c := range claims {
		if !advanced[c.JobID] {
			continue
		}
		if c.Capped {
			c.Runs = slices.Clone(c.Runs)
		}
		out = append(out, c)
	}
	return out
}

// firedInstant is the latest scheduled instant of the runs of a claim
// that fire (all but SKIPPED ones): the job's last fire; null when none
// fires.
func firedInstant(runs []Run) sql.NullInt64 {
	var last time.Time
	for _, r := range runs {
		if r.Status != carillonv1.RunStatus_RUN_STATUS_SKIPPED && r.ScheduledAt.After(last) {
			last = r.ScheduledAt
		}
	}
	return millis(last)
}

// Skip settles a pending run as SKIPPED (a misfire under DO_NOTHING),
// the record of its one missed instant (missed_count 1).
func (s FireStore) Skip(ctx context.Context, id int64, message string, now time.Time) error {
	_, err := s.exec(ctx, `UPDATE runs SET status = $1, message = $2, finished_at = $3, missed_count = 1, missed_until = scheduled_at
		WHERE id = $4 AND status = $5`,
		carillonv1.RunStatus_RUN_STATUS_SKIPPED, message, now.UnixMilli(), id, carillonv1.RunStatus_RUN_STATUS_PENDING)
	if err != nil {
		return fmt.Errorf("store: skip run %d: %w", id, err)
	}
	return nil
}

// CancelPending settles run id as KILLED with message if it is still
// pending (a one-off run waiting for its instant, a retry waiting for its
// delay), and reports whether it was: a run claimed meanwhile, or a
// workflow node's run (its workflow run's cancel is the way), is not
// changed.
func (s FireStore) CancelPending(ctx context.Context, id int64, message string, now time.Time) (bool, error) {
	var n int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = $1, message = $2, finished_at = $3 WHERE id = $4 AND status = $5 AND workflow_run_id = 0`,
			carillonv1.RunStatus_RUN_STATUS_KILLED, message, now.UnixMilli(), id, carillonv1.RunStatus_RUN_STATUS_PENDING)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store: cancel run %d: %w", id, err)
	}
	return n == 1, nil
}

// RunClaim names a pending run to claim and the trigger type it fires as.
type RunClaim struct {
	RunID int64
	// JobID is the run's job: a capped job's run (JobDefinition.Capped)
	// is claimed only while a slot of its cap is free (caps.go).
	JobID       int64
	TriggerType carillonv1.TriggerType
	// SendAt, if later than the claim, is when the run will be sent (a
	// fire claimed ahead of its instant): its triggered_at.
	SendAt time.Time
}

// ClaimRuns moves pending runs to RUNNING, stamped triggered at now (or
// their later SendAt), in one statement, and returns those it claimed. A run that is no longer pending
// (its job was stopped, changed or deleted after the run was read ahead) is
// left out and must not be dispatched.
func (s FireStore) ClaimRuns(ctx context.Context, claims []RunClaim, now time.Time) ([]Run, error) {
	free, capped, err := s.splitCapped(ctx, claims)
	if err != nil {
		return nil, fmt.Errorf("store: claim runs: %w", err)
	}
	var runs []Run
	err = s.writeLeased(ctx, func(tx *sql.Tx) error {
		all := free
		if len(capped) > 0 {
			taken, err := capRuns(ctx, tx, s.d, capped, now)
			if err != nil {
				return err
			}
			all = append(slices.Clip(free), taken...)
		}
		var list jsonRows
		for _, c := range all {
			list.key(c.RunID).int(int64(c.TriggerType))
			if c.SendAt.After(now) {
				list.int(c.SendAt.UnixMilli())
			}
		}
		var err error
		runs, err = collectRuns(tx.StmtContext(ctx, s.q.claimRuns).QueryContext(ctx, list.Object(), now.UnixMilli())) //nolint:sqlclosecheck // a transaction's statement closes with the transaction
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim runs: %w", err)
	}
	return runs, nil
}

// collectColumn scans every row of a query returning one column.
func collectColumn[T any](rows *sql.Rows, err error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// splitCapped splits claims into those of jobs without a cap and those
// that count slots: of capped jobs, and the backfill of SERIAL_EXECUTION
// jobs (serialBackfill). It reads the jobs' cached definitions: claims of
// jobs without a cap cost a look-up in the cache, no query.
func (s *db) splitCapped(ctx context.Context, claims []RunClaim) (free, capped []RunClaim, err error) {
	ids := make([]int64, 0, len(claims))
	for _, c := range claims {
		if c.JobID != 0 {
			ids = append(ids, c.JobID)
		}
	}
	if len(ids) == 0 {
		return claims, nil, nil
	}
	defs, err := JobStore{s}.Definitions(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	counted := func(c RunClaim) bool {
		j := defs[c.JobID]
		return j != nil && (j.Capped || serialBackfill(c.TriggerType, j.BlockStrategy))
	}
	if !slices.ContainsFunc(claims, counted) {
		return claims, nil, nil
	}
	for _, c := range claims {
		if counted(c) {
			capped = append(capped, c)
		} else {
			free = append(free, c)
		}
	}
	return free, capped, nil
}

// collectRuns scans every row of a query returning runColumns.
func collectRuns(rows *sql.Rows, err error) ([]Run, error) {
	return appendRuns(nil, rows, err)
}

// appendRuns is collectRuns appending to runs.
func appendRuns(runs []Run, rows *sql.Rows, err error) ([]Run, error) {
	if err != nil {
		return runs, err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, rows.Err()
}

// collectRouted scans every row of a query returning runColumns and
// routed_to.
func collectRouted(rows *sql.Rows, err error) ([]Run, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		var routed string
		r, err := scanRun(routedRow{rows, &routed})
		if err != nil {
			return nil, err
		}
		r.RoutedTo = routed
		runs = append(runs, r)
	}
	return runs, rows.Err()
}

// routedRow scans a row of runColumns and routed_to with scanRun.
type routedRow struct {
	rows   *sql.Rows
	routed *string
}

func (r routedRow) Scan(dest ...any) error { return r.rows.Scan(append(dest, r.routed)...) }

// collectJobs scans every row of a query returning jobColumns, by ID.
func collectJobs(rows *sql.Rows, err error) (map[int64]*Job, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	jobs := map[int64]*Job{}
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		jobs[j.ID] = &j
	}
	return jobs, rows.Err()
}
