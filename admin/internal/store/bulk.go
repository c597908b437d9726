package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// bulkBatch is how many jobs one JobStore.CreateMany transaction inserts.
const bulkBatch = 10_000

// CreateMany stores many jobs at once, as JobStore.Create would one by one (same
// columns; CreatedAt and UpdatedAt are now; the caller sets NextFireAt of
// enabled jobs), in transactions of up to 10,000 rows with one prepared
// statement each. It is for seeding large databases, such as the load
// tool's millions of sparse jobs, and returns no IDs. A job whose group does
// not exist fails the whole call with ErrGroupNotFound before anything is
// stored; a later failure leaves the batches already committed in place.
func (s JobStore) CreateMany(ctx context.Context, jobs []Job, now time.Time) error {
	now = now.Truncate(time.Millisecond) // what the database keeps
	groups := map[int64]int32{}          // group caps
	for _, j := range jobs {
		groups[j.GroupID] = 0
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		for id := range groups {
			n, err := groupCap(ctx, tx, id)
			if err != nil {
				return err
			}
			groups[id] = n
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrGroupNotFound) {
			return err
		}
		return fmt.Errorf("store: create jobs: %w", err)
	}
	for start := 0; start < len(jobs); start += bulkBatch {
		batch := jobs[start:min(start+bulkBatch, len(jobs))]
		for i := range batch {
			batch[i].Capped = batch[i].MaxConcurrency > 0 || groups[batch[i].GroupID] > 0
		}
		if err := s.write(ctx, func(tx *sql.Tx) error { return insertJobs(ctx, tx, batch, now) }); err != nil {
			return fmt.Errorf("store: create jobs %d to %d of %d: %w", start, start+len(batch), len(jobs), err)
		}
	}
	return nil
}

func insertJobs(ctx context.Context, tx *sql.Tx, jobs []Job, now time.Time) error {
	stmt, err := tx.PrepareContext(ctx, insertJobSQL)
	if err != nil {
		return err
	}
	defer func() { _ = stmt.Close() }()
	for _, j := range jobs {
		j.CreatedAt, j.UpdatedAt = now, now
		var id int64
		if err := stmt.QueryRowContext(ctx, jobArgs(j)...).Scan(&id); err != nil {
			return err
		}
		if len(j.ChildJobIDs) > 0 {
			if err := setChildren(ctx, tx, id, j.ChildJobIDs); err != nil {
				return err
			}
		}
	}
	return nil
}
