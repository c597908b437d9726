package store

import (
	"context"
	"database/sql"
	"time"
)

const (
	// foldInterval is how often runs inserted since are folded into
	// run_counts.
	foldInterval = time.Second
	// foldBatch is the most runs one fold transaction counts, so that a
	// fold holds the writer for a few milliseconds at most.
	foldBatch = 10_000
	// foldLag is the most runs left out of run_counts: the fold waits for
	// runs to settle (their status changes then cost no trigger work) but
	// not for a run that runs for hours, which would leave CountRuns an
	// ever longer range of runs to count.
	foldLag = 100_000
)

// foldRunCounts adds to run_counts up to limit runs inserted after
// run_counts_upto, in one write transaction, and returns how many it
// folded: those before the oldest run still running or pending, or more
// when over lag runs would be left out. Runs are never inserted with an id
// below one already there (AUTOINCREMENT), so the runs after
// run_counts_upto are exactly those not counted yet; the triggers of
// migration 0007 keep the counted ones.
func (s *Store) foldRunCounts(ctx context.Context, limit, lag int64) (int64, error) {
	var folded int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		var upto, last int64
		if err := tx.QueryRowContext(ctx, `SELECT id FROM run_counts_upto`).Scan(&upto); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM runs`).Scan(&last); err != nil {
			return err
		}
		var oldest sql.NullInt64 // the oldest run in flight (the runs_active index)
		if err := tx.QueryRowContext(ctx, `SELECT min(id) FROM runs WHERE status IN (1, 7)`).Scan(&oldest); err != nil {
			return err
		}
		to := last
		if oldest.Valid {
			to = max(min(last, oldest.Int64-1), last-lag)
		}
		to = min(to, upto+limit)
		if to <= upto {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_counts (bucket, group_id, status, n)
			SELECT scheduled_at / 900000, group_id, status, count(*) FROM runs WHERE id > ? AND id <= ? GROUP BY 1, 2, 3
			ON CONFLICT (bucket, group_id, status) DO UPDATE SET n = n + excluded.n`, upto, to); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE run_counts_upto SET id = ?`, to); err != nil {
			return err
		}
		folded = to - upto
		return nil
	})
	return folded, err
}

// folds runs foldRunCounts every foldInterval until stop is closed, in
// batches, until it has caught up.
func (s *Store) folds(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(foldInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		for range 100 { // a bound: at most a million runs per tick
			// An error (a full disk, the database closing) is retried at the next tick.
			if n, err := s.foldRunCounts(ctx, foldBatch, foldLag); err != nil || n < foldBatch {
				break
			}
			select {
			case <-stop:
				cancel()
				return
			default:
			}
		}
		cancel()
	}
}
