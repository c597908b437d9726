package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
)

// A job's child jobs fire after each of its runs succeeds (settle.go), in
// the order it lists them (Job.ChildJobIDs). Each link is a row of
// job_children (migration 0023): the parent, the child and its position in
// the parent's list. Deleting a job deletes its own links; a job that
// another lists cannot be deleted (notAChild), and a link to a missing job
// cannot be made (a foreign key, which setChildren reports first).

// jobChildrenSQL is the last column of jobColumns: the IDs of the job's
// children, comma-separated in their order (empty for none). It is a
// subquery of the statement reading the jobs, a seek of job_children's
// primary key per job, so that reading many jobs (lists, the job cache,
// exports) stays one query. sqlc's SQLite parser refuses the ORDER BY of
// its aggregate: the statements reading jobs are written by hand.
const jobChildrenSQL = `coalesce((SELECT string_agg(CAST(c.child_id AS TEXT), ',' ORDER BY c.position)
	FROM job_children AS c WHERE c.parent_id = jobs.id), '')`

// setChildren makes ids, in their order, the child jobs of job parent in
// tx. A child that does not exist is ErrNotFound and one listed twice
// ErrAlreadyExists, each naming its index in ids.
func setChildren(ctx context.Context, tx *sql.Tx, parent int64, ids []int64) error {
	if err := childrenExist(ctx, tx, ids); err != nil {
		return err
	}
	if err := dbsqlc.New(tx).DeleteChildLinks(ctx, parent); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, 0, 3*len(ids))
	for i, id := range ids {
		args = append(args, parent, id, i)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO job_children (parent_id, child_id, position) VALUES `+rowsOf(len(ids), 3), args...) //nolint:gosec // constant SQL; values are placeholders
	return err
}

// childrenExist checks that ids name jobs, each once.
func childrenExist(ctx context.Context, tx *sql.Tx, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	var a args
	found, err := collectColumn[int64](tx.QueryContext(ctx, `SELECT id FROM jobs WHERE id IN (`+addList(&a, ids)+`)`, a...)) //nolint:gosec // placeholders only
	if err != nil {
		return err
	}
	exists := make(map[int64]bool, len(found))
	for _, id := range found {
		exists[id] = true
	}
	seen := make(map[int64]bool, len(ids))
	for i, id := range ids {
		switch {
		case !exists[id]:
			return fmt.Errorf("%w: child_job_ids[%d]: job %d", ErrNotFound, i, id)
		case seen[id]:
			return fmt.Errorf("%w: child_job_ids[%d]: job %d is listed twice", ErrAlreadyExists, i, id)
		}
		seen[id] = true
	}
	return nil
}

// notAChild refuses (ErrInUse) to delete job id while other jobs list it
// as a child job, naming them: removing it from their lists silently would
// change what they do.
func notAChild(ctx context.Context, tx *sql.Tx, id int64) error {
	rows, err := dbsqlc.New(tx).ParentJobs(ctx, id)
	if err != nil || len(rows) == 0 {
		return err
	}
	parents := make([]string, len(rows))
	for i, r := range rows {
		parents[i] = fmt.Sprintf("%d (%q)", r.ID, r.Description)
	}
	return fmt.Errorf("%w: job %d is a child job of job %s: remove it from their child_job_ids first", ErrInUse, id, strings.Join(parents, ", job "))
}
