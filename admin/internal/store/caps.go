package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Concurrency caps (Job.MaxConcurrency, Group.MaxConcurrency): at most N
// runs of a job, or of all a group's jobs, RUNNING at once over all
// executors. A capped job's run takes a slot when it is claimed RUNNING
// (FireStore.Claim, ClaimRuns) and gives it back when it settles; a fire that
// finds no slot free waits as a PENDING run (SlotWaiting), or is recorded
// SKIPPED when its job's block strategy is DISCARD_LATER. Settling a run
// that held a slot hands the oldest waiting runs of its group to the
// scheduler (Settled.Freed), whose claim takes the slots they find free.
//
// Slots are counted and taken in one write transaction; on PostgreSQL it
// first locks the rows of the groups involved (FOR UPDATE, in id order),
// so that two admins never both take the last slot: every transaction
// that takes or gives back a slot holds its group's row. Jobs without a
// cap (jobs.capped 0: neither the job nor its group has one) never come
// here: their claims are those of before, with no query more.

// Slot is how a run stands with its job's or group's concurrency cap
// (runs.slot).
type Slot int8

// Values of Slot.
const (
	// SlotNone: the run's job had no cap when the run was claimed.
	SlotNone Slot = 0
	// SlotHeld: a capped job's run claimed RUNNING; it holds a slot until
	// it settles.
	SlotHeld Slot = 1
	// SlotWaiting: a capped job's PENDING run waiting for a free slot.
	SlotWaiting Slot = 2
)

// SlotWaitMessage starts the message of a run waiting for a slot.
const SlotWaitMessage = "waiting for a concurrency slot"

// WaitsForSlot says r is a pending run waiting for a concurrency slot.
func (r *Run) WaitsForSlot() bool {
	return r.Slot == SlotWaiting && r.Status == carillonv1.RunStatus_RUN_STATUS_PENDING
}

// capJob is a capped job's cap and counts, inside one transaction.
type capJob struct {
	id      int64
	cap     int32 // 0: none
	running int32
	block   carillonv1.BlockStrategy
	group   *capGroup
	// backfills counts the job's BACKFILL runs holding slots: a
	// SERIAL_EXECUTION job runs its backfill one at a time (serialBackfill).
	backfills int32
}

// capGroup is a group's cap and count, inside one transaction.
type capGroup struct {
	id      int64
	cap     int32 // 0: none
	running int32
}

// free is how many more runs of j may run now.
func (j *capJob) free() int32 {
	n := int32(math.MaxInt32)
	if j.cap > 0 {
		n = j.cap - j.running
	}
	if j.group.cap > 0 {
		n = min(n, j.group.cap-j.group.running)
	}
	return n
}

// freeFor is free for a run of trigger type tt: a SERIAL_EXECUTION job's
// backfill has one slot of its own besides.
func (j *capJob) freeFor(tt carillonv1.TriggerType) int32 {
	if tt == carillonv1.TriggerType_TRIGGER_TYPE_BACKFILL && j.block == carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL {
		return min(j.free(), 1-j.backfills)
	}
	return j.free()
}

// take counts one more run of j, of trigger type tt, running.
func (j *capJob) take(tt carillonv1.TriggerType) {
	j.running++
	j.group.running++
	if tt == carillonv1.TriggerType_TRIGGER_TYPE_BACKFILL {
		j.backfills++
	}
}

// serialBackfill says a run of trigger type tt of a job with block
// strategy block waits for the job's backfill slot: the backfill of a
// SERIAL_EXECUTION job runs one instant at a time, in order, as if its
// cap were 1.
func serialBackfill(tt carillonv1.TriggerType, block carillonv1.BlockStrategy) bool {
	return tt == carillonv1.TriggerType_TRIGGER_TYPE_BACKFILL &&
		(block == carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL || block == carillonv1.BlockStrategy_BLOCK_STRATEGY_UNSPECIFIED)
}

// full says which cap stops a run of j, for its message.
func (j *capJob) full() string {
	if j.backfills > 0 && j.free() > 0 {
		return fmt.Sprintf("job %d runs its backfill one instant at a time (SERIAL_EXECUTION)", j.id)
	}
	if j.cap > 0 && j.running >= j.cap {
		return fmt.Sprintf("concurrency cap %d of job %d reached", j.cap, j.id)
	}
	return fmt.Sprintf("concurrency cap %d of group %d reached", j.group.cap, j.group.id)
}

// discards says a run of j that finds no slot is recorded SKIPPED rather
// than left waiting.
func (j *capJob) discards() bool {
	return j.block == carillonv1.BlockStrategy_BLOCK_STRATEGY_DISCARD_LATER
}

// loadSlots reads, inside tx, the caps of jobIDs and their groups, and
// counts the runs holding their slots, after locking the groups' rows on
// PostgreSQL. Jobs that no longer exist are left out.
func loadSlots(ctx context.Context, tx *sql.Tx, d dialect, jobIDs []int64) (map[int64]*capJob, error) {
	ids := jsonIDs(jobIDs)
	// The rows of the jobs' groups, in id order: see the comment at the top.
	if lock := d.lockRows("groups", `SELECT group_id FROM jobs WHERE id IN (`+d.idRows(`$1`)+`)`); lock != "" {
		if err := eachRow(ctx, tx, nil, lock, ids); err != nil {
			return nil, err
		}
	}
	jobs := map[int64]*capJob{}
	groups := map[int64]*capGroup{}
	err := eachRow(ctx, tx, func(rows *sql.Rows) error {
		j, g := &capJob{}, &capGroup{}
		if err := rows.Scan(&j.id, &j.cap, &j.block, &g.id, &g.cap); err != nil {
			return err
		}
		if known := groups[g.id]; known != nil {
			g = known
		}
		groups[g.id], j.group, jobs[j.id] = g, g, j
		return nil
	}, `SELECT j.id, j.max_concurrency, j.block_strategy, g.id, g.max_concurrency
		FROM jobs j JOIN groups g ON g.id = j.group_id WHERE j.id IN (`+d.idRows(`$1`)+`)`, ids)
	if err != nil {
		return nil, err
	}
	err = countHeld(ctx, tx, d, "job_id", ids, func(id int64, n, backfills int32) {
		if j := jobs[id]; j != nil {
			j.running, j.backfills = n, backfills
		}
	})
	if err != nil {
		return nil, err
	}
	var capped []int64
	for id, g := range groups {
		if g.cap > 0 {
			capped = append(capped, id)
		}
	}
	if len(capped) == 0 {
		return jobs, nil
	}
	err = countHeld(ctx, tx, d, "group_id", jsonIDs(capped), func(id int64, n, _ int32) { groups[id].running = n })
	return jobs, err
}

// countHeld counts the runs holding slots (RUNNING, SlotHeld), and the
// BACKFILL ones among them, by column col (job_id or group_id) for the
// ids of a JSON list, and hands each count to set.
func countHeld(ctx context.Context, tx *sql.Tx, d dialect, col, ids string, set func(id int64, n, backfills int32)) error {
	return eachRow(ctx, tx, func(rows *sql.Rows) error {
		var id int64
		var n, backfills int32
		if err := rows.Scan(&id, &n, &backfills); err != nil {
			return err
		}
		set(id, n, backfills)
		return nil
	}, `SELECT `+col+`, count(*), coalesce(sum(CASE WHEN trigger_type = `+sqlBackfill+` THEN 1 ELSE 0 END), 0) FROM runs
		WHERE slot = 1 AND status = `+sqlRunning+` AND `+col+` IN (`+d.idRows(`$1`)+`) GROUP BY `+col, ids)
}

// sqlBackfill is TRIGGER_TYPE_BACKFILL in SQL.
const sqlBackfill = "8"

// capFires applies the caps to the runs of the capped claims in tx
// (FireStore.Claim): each RUNNING run takes a slot of its job (SlotHeld), or,
// with none free, waits (PENDING, SlotWaiting) or, under DISCARD_LATER, is
// recorded SKIPPED. It changes the runs of claims in place.
func capFires(ctx context.Context, tx *sql.Tx, d dialect, claims []Claim, now time.Time) error {
	var ids []int64
	for _, c := range claims {
		if c.Capped {
			ids = append(ids, c.JobID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	jobs, err := loadSlots(ctx, tx, d, ids)
	if err != nil {
		return err
	}
	for _, c := range claims {
		j := jobs[c.JobID]
		if !c.Capped || j == nil {
			continue
		}
		for i := range c.Runs {
			r := &c.Runs[i]
			if r.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING {
				continue // the record of a misfire
			}
			switch {
			case j.free() > 0:
				j.take(r.TriggerType)
				r.Slot = SlotHeld
			case j.discards():
				r.Status, r.FinishedAt, r.TriggeredAt = carillonv1.RunStatus_RUN_STATUS_SKIPPED, now, time.Time{}
				r.Message = j.full() + "; skipped by DISCARD_LATER"
			default:
				r.DueAt = r.TriggeredAt
				r.Status, r.TriggeredAt, r.Slot = carillonv1.RunStatus_RUN_STATUS_PENDING, time.Time{}, SlotWaiting
				r.Message = SlotWaitMessage + " (" + j.full() + ")"
			}
		}
	}
	return nil
}

// capCandidate is a pending run of a capped job that a claim names.
type capCandidate struct {
	id, job  int64
	due      int64
	slot     Slot
	workflow bool
	trigger  carillonv1.TriggerType
}

// capRuns decides, in tx, which of the pending runs of capped jobs that
// claims name take a slot (ClaimRuns): oldest due first, as long as their
// job and group have one free. It returns the claims of those; the others
// wait (SlotWaiting), or, under DISCARD_LATER, are recorded SKIPPED (not
// workflow nodes' runs, nor retries: those wait). On PostgreSQL a run
// another admin is claiming (locked) is left to it.
func capRuns(ctx context.Context, tx *sql.Tx, d dialect, claims []RunClaim, now time.Time) ([]RunClaim, error) {
	byID := make(map[int64]RunClaim, len(claims))
	ids := make([]int64, len(claims))
	jobIDs := make([]int64, 0, len(claims))
	for i, c := range claims {
		byID[c.RunID], ids[i] = c, c.RunID
		jobIDs = append(jobIDs, c.JobID)
	}
	slices.Sort(jobIDs)
	jobs, err := loadSlots(ctx, tx, d, slices.Compact(jobIDs))
	if err != nil {
		return nil, err
	}
	q := `SELECT id, job_id, due_at, slot, workflow_run_id <> 0, trigger_type FROM runs
		WHERE id IN (` + d.idRows(`$1`) + `) AND status = ` + sqlPending + ` ORDER BY due_at, id` + d.skipLocked()
	var cands []capCandidate
	err = eachRow(ctx, tx, func(rows *sql.Rows) error {
		var c capCandidate
		if err := rows.Scan(&c.id, &c.job, &c.due, &c.slot, &c.workflow, &c.trigger); err != nil {
			return err
		}
		cands = append(cands, c)
		return nil
	}, q, jsonIDs(ids))
	if err != nil {
		return nil, err
	}
	var take []RunClaim
	var held []int64
	for _, c := range cands {
		j := jobs[c.job]
		var err error
		switch {
		case j == nil: // deleted since: the claim finds nothing to do
			take = append(take, byID[c.id])
		case j.freeFor(c.trigger) > 0:
			j.take(c.trigger)
			take = append(take, byID[c.id])
			held = append(held, c.id)
		case j.discards() && j.free() <= 0 && !c.workflow && c.trigger != carillonv1.TriggerType_TRIGGER_TYPE_RETRY:
			_, err = tx.ExecContext(ctx, `UPDATE runs SET status = $1, message = $2, finished_at = $3 WHERE id = $4`,
				carillonv1.RunStatus_RUN_STATUS_SKIPPED, j.full()+"; skipped by DISCARD_LATER", now.UnixMilli(), c.id)
		case c.slot != SlotWaiting:
			_, err = tx.ExecContext(ctx, `UPDATE runs SET slot = $1, message = $2 WHERE id = $3`,
				SlotWaiting, SlotWaitMessage+" ("+j.full()+")", c.id)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(held) == 0 {
		return take, nil
	}
	_, err = tx.ExecContext(ctx, `UPDATE runs SET slot = $1, message = '' WHERE id IN (`+d.idRows(`$2`)+`)`, SlotHeld, jsonIDs(held)) //nolint:gosec // concatenates constant SQL fragments; values are placeholders
	return take, err
}

// freeSlots hands on, as Settled.Freed, the oldest waiting runs of the
// groups of settled runs that held a slot: for each job of such a group,
// as many of its waiting runs as runs of the group settled (each freed a
// slot). The claim of each decides whether it finds one free.
func (st *settler) freeSlots(runs []Run) error {
	freed := map[int64]int{} // by group
	var groups []int64
	for i := range runs {
		if r := &runs[i]; r.Slot == SlotHeld {
			if freed[r.GroupID] == 0 {
				groups = append(groups, r.GroupID)
			}
			freed[r.GroupID]++
		}
	}
	if len(groups) == 0 {
		return nil
	}
	slices.Sort(groups)
	if lock := st.d.lockRows("groups", st.d.idRows(`$1`)); lock != "" {
		if err := eachRow(st.ctx, st.tx, nil, lock, jsonIDs(groups)); err != nil {
			return err
		}
	}
	for _, g := range groups {
		waiting, err := collectRuns(st.tx.QueryContext(st.ctx, `SELECT `+runColumns+` FROM runs WHERE id IN (
			SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY job_id ORDER BY due_at, id) AS n
				FROM runs WHERE slot = 2 AND status = `+sqlPending+` AND group_id = $1) AS w WHERE n <= $2)
			ORDER BY due_at, id`, g, freed[g]))
		if err != nil {
			return err
		}
		st.out.Freed = append(st.out.Freed, waiting...)
	}
	return nil
}

// Waiting returns the runs of group groupID's jobs waiting for a
// concurrency slot, oldest due first, at most limit: for the caller to
// hand to the scheduler after a change of the group's cap.
func (s FireStore) Waiting(ctx context.Context, groupID int64, limit int) ([]Run, error) {
	rows, err := dbsqlc.New(s.reader(ctx)).RunsWaitingForSlot(ctx, dbsqlc.RunsWaitingForSlotParams{GroupID: groupID, MaxRows: int64(limit)})
	if err != nil {
		return nil, fmt.Errorf("store: runs: %w", err)
	}
	rs, err := runsOf(rows)
	if err != nil {
		return nil, fmt.Errorf("store: runs: %w", err)
	}
	return rs, nil
}

// eachRow runs query q in tx and calls fn for each row; a nil fn reads
// the rows only (a SELECT ... FOR UPDATE, for its locks).
func eachRow(ctx context.Context, tx *sql.Tx, fn func(rows *sql.Rows) error, q string, args ...any) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if fn == nil {
			continue
		}
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
