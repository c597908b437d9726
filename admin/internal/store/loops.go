package store

import (
	"context"
	"time"

	"github.com/carillonhq/carillon/admin/internal/service"
)

// Loops returns the services an admin runs while it serves, in the order
// to start them: over SQLite the WAL checkpoints (CheckpointLoop) and the
// folds of run counts (FoldLoop); over PostgreSQL the folds and the
// following of the other admins' changes (FollowLoop). The renewal of
// this admin's lease (LeaseLoop), which also reads the buckets of due jobs
// this admin owns, is not among them: the lease is taken by Open, and an
// admin renews it from then on, not only once it serves.
// Open starts none: a short-lived command needs none, and a test starts
// the ones it tests.
func (s *Store) Loops() []service.Service {
	if s.pg == nil {
		return []service.Service{s.CheckpointLoop(), s.FoldLoop()}
	}
	return []service.Service{s.FoldLoop(), s.FollowLoop()}
}

// every calls fn every interval, with a context of timeout, until stop
// ends. A call begun finishes: stop ends the loop between calls.
func every(stop context.Context, interval, timeout time.Duration, fn func(ctx context.Context)) error {
	return everyOf(stop, func() time.Duration { return interval }, timeout, fn)
}

// everyOf is every with an interval that may change: interval is asked
// after each call for the wait until the next.
func everyOf(stop context.Context, interval func() time.Duration, timeout time.Duration, fn func(ctx context.Context)) error {
	d := interval()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-stop.Done():
			return nil
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(stop), timeout)
		fn(ctx)
		cancel()
		if next := interval(); next != d {
			d = next
			t.Reset(d)
		}
	}
}
