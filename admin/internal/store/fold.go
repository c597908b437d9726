package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/carillonhq/carillon/admin/internal/service"
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
	// not for a run that runs for hours, which would leave RunStore.Count an
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
//
// On PostgreSQL it folds only up to the largest id seen foldSettle ago
// (settledMaxID), unless all is set (tests).
func (s *db) foldRunCounts(ctx context.Context, limit, lag int64, all bool) (int64, error) {
	var folded int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		var upto, last int64
		// FOR UPDATE: admins sharing a PostgreSQL database fold one at a
		// time (SQLite has one writer anyway).
		if err := tx.QueryRowContext(ctx, `SELECT id FROM run_counts_upto`+s.d.forUpdate()).Scan(&upto); err != nil { //nolint:gosec // a constant SQL fragment
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM runs`).Scan(&last); err != nil {
			return err
		}
		if s.pg != nil && !all {
			last = s.pg.settledMaxID(last)
		}
		// The oldest run in flight of those not folded yet, found walking
		// the runs by id from upto: at most limit of them, however many
		// runs are in flight (a min over the runs_active index read every
		// run in flight, every second: a quarter of a core with a million
		// runs sent ahead of a minute mark). A run in flight already folded
		// (over lag) has its status changes counted by the triggers.
		var oldest sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT id FROM runs`+s.d.notIndexed()+` WHERE id > $1 AND id <= $2 AND status IN (1, 7)
			ORDER BY id LIMIT 1`, upto, min(last, upto+limit)).Scan(&oldest)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
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
			SELECT scheduled_at / 900000, group_id, status, count(*) FROM runs WHERE id > $1 AND id <= $2 GROUP BY 1, 2, 3
			ON CONFLICT (bucket, group_id, status) DO UPDATE SET n = run_counts.n + excluded.n`, upto, to); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE run_counts_upto SET id = $1`, to); err != nil {
			return err
		}
		folded = to - upto
		return nil
	})
	return folded, err
}

// foldSettle is how long a run id must have been the largest seen before
// PostgreSQL's fold counts up to it. Ids come from a sequence, and a
// transaction still open may hold a smaller id than one committed:
// folding past it would leave its run out of run_counts for good. No
// transaction of the store lasts that long.
const foldSettle = 10 * time.Second

// settledMaxID notes max, the largest run id now, and returns the largest
// that was seen foldSettle ago (0 before then).
func (p *pgState) settledMaxID(max int64) int64 {
	now := time.Now()
	p.foldMarks = append(p.foldMarks, foldMark{at: now, id: max})
	var settled int64
	i := 0
	for i < len(p.foldMarks) && now.Sub(p.foldMarks[i].at) >= foldSettle {
		settled = p.foldMarks[i].id
		i++
	}
	if i > 0 {
		// Keep the last settled mark: it stays the answer until a newer one settles.
		p.foldMarks = p.foldMarks[i-1:]
	}
	return settled
}

// foldMark is the largest run id at a time.
type foldMark struct {
	at time.Time
	id int64
}

// FoldLoop returns the service that folds the runs inserted into
// run_counts (folds), which the dashboard's counts read: an admin runs it
// while it writes.
func (s *Store) FoldLoop() service.Service { return service.NewLoop(s.folds) }

// folds runs foldRunCounts every foldInterval until stop ends, in
// batches, until it has caught up. Of admins sharing a PostgreSQL
// database, only the owner of the first bucket folds (partition.go): a
// fold is the database's, not an admin's, and each other admin's was a
// transaction of five statements a second that found nothing to do. An
// admin that comes to own it folds once it has seen the runs' ids
// foldSettle long.
func (s *db) folds(stop context.Context) error {
	return every(stop, foldInterval, 30*time.Second, func(ctx context.Context) {
		if s.partition().Lo != 0 {
			return
		}
		for range 100 { // a bound: at most a million runs per tick
			// An error (a full disk, the database closing) is retried at the next tick.
			if n, err := s.foldRunCounts(ctx, foldBatch, foldLag, false); err != nil || n < foldBatch || stop.Err() != nil {
				return
			}
		}
	})
}
