package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// JobStart is a stopped job to start and its first fire (zero when its
// schedule has none), for StartJobs.
type JobStart struct {
	ID   int64
	Next time.Time
}

// StartMany starts the jobs of starts, as JobStore.Start each, in one
// transaction, and returns the jobs of ids (all the batch's, started or
// started already), in their order. A job of ids that does not exist is
// ErrNotFound, naming it, and starts none.
func (s JobStore) StartMany(ctx context.Context, ids []int64, starts []JobStart, now time.Time) ([]Job, error) {
	defer s.jobs.changed()
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := jobsExist(ctx, tx, ids); err != nil {
			return err
		}
		for _, st := range starts {
			if err := startJob(ctx, tx, st.ID, st.Next, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, batchErr("start", err)
	}
	return s.jobsInOrder(ctx, ids)
}

// StopMany stops the jobs of ids, as JobStore.Stop each, in one transaction,
// and returns them in their order. A job of ids that does not exist is
// ErrNotFound, naming it, and stops none.
func (s JobStore) StopMany(ctx context.Context, ids []int64, now time.Time) ([]Job, error) {
	defer s.jobs.changed()
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := jobsExist(ctx, tx, ids); err != nil {
			return err
		}
		for _, id := range ids {
			if err := stopJob(ctx, tx, id, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, batchErr("stop", err)
	}
	for _, id := range ids {
		s.stops.mark(id)
	}
	return s.jobsInOrder(ctx, ids)
}

// jobsExist returns ErrNotFound naming the first of ids (by its index)
// that is not a job.
func jobsExist(ctx context.Context, tx *sql.Tx, ids []int64) error {
	for i, id := range ids {
		if err := jobExists(ctx, tx, id); err != nil {
			return fmt.Errorf("ids[%d]: %w", i, err)
		}
	}
	return nil
}

// batchErr wraps the error of a batch of jobs verb, keeping ErrNotFound
// as it is.
func batchErr(verb string, err error) error {
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%w; no job was %s", err, pastTense[verb])
	}
	return fmt.Errorf("store: %s jobs: %w", verb, err)
}

var pastTense = map[string]string{"start": "started", "stop": "stopped"}

// jobsInOrder returns the jobs of ids in their order.
func (s *db) jobsInOrder(ctx context.Context, ids []int64) ([]Job, error) {
	jobs := make([]Job, 0, len(ids))
	for _, id := range ids {
		j, err := JobStore{s}.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}
