package store

import (
	"context"
	"fmt"
	"time"

	"github.com/carillonhq/carillon/admin/internal/service"
)

// followInterval is how often an admin sharing a PostgreSQL database reads
// what the other admins changed of what it caches, and standbyFollow how
// often while it owns no bucket of due jobs (partition.go): it then sends
// only manual fires and what it takes over, and a round trip is, on a
// small machine, most of what an admin standing by costs.
const (
	followInterval = 100 * time.Millisecond
	standbyFollow  = time.Second
)

// FollowLoop returns the service that follows the other admins' changes
// every followInterval, or standbyFollow while this admin stands by: an
// admin sharing a PostgreSQL database runs it while it serves. Over
// SQLite it ends at once.
func (s *Store) FollowLoop() service.Service {
	return service.NewLoop(func(stop context.Context) error {
		if s.pg == nil {
			return nil
		}
		return everyOf(stop, s.followEvery, 5*time.Second, func(ctx context.Context) {
			_ = s.follow(ctx) // retried at the next tick
			s.pg.followed.Emit()
		})
	})
}

// followEvery is how long FollowLoop waits for its next follow: standing
// by, the loop sleeps too, since a wake-up costs a standby about as much
// as the round trip.
func (s *db) followEvery() time.Duration {
	if p := s.partition(); p.Lo >= p.Hi {
		return standbyFollow
	}
	return followInterval
}

// follower is where this admin stands in the other admins' changes.
type follower struct {
	jobSeq  int64    // the last job_changes row seen
	routing [3]int64 // the fingerprints of the registry's heartbeats, of its capabilities, and of the groups
	started bool
}

// followSQL reads the fingerprints of the registry and the groups (any
// write changes a sum of updated_at or a count; a heartbeat that changes
// an executor's capabilities and not its time, their sum) and the newest
// job change.
const followSQL = `SELECT r.beats, r.caps,
	(SELECT coalesce(sum(updated_at), 0) + count(*) + coalesce(sum(length(addresses)), 0) FROM groups),
	(SELECT coalesce(max(seq), 0) FROM job_changes)
	FROM (SELECT coalesce(sum(updated_at), 0) + count(*) AS beats, coalesce(sum(capabilities), 0) AS caps FROM registry) AS r`

// follow brings this admin's caches up to the other admins' writes: a
// routing change bumps RoutingVersion, a changed job empties the job cache
// (JobStore.Definitions), a stopped or deleted job is marked (JobStore.StoppedSince), and
// so is a job updated in what its runs carry to their executors
// (UpdatedSince), after the cache is emptied, so that a run sent again
// reads the new definition. The first call only notes where things stand.
// Its own writes come back to it too, harmlessly.
func (s *db) follow(ctx context.Context) error {
	f := &s.pg.follow
	var routing [3]int64
	var seq int64
	if err := s.r.QueryRowContext(ctx, followSQL).Scan(&routing[0], &routing[1], &routing[2], &seq); err != nil {
		return fmt.Errorf("store: follow: %w", err)
	}
	if !f.started {
		f.started, f.routing, f.jobSeq = true, routing, seq
		return nil
	}
	if routing != f.routing {
		f.routing = routing
		s.routing.Add(1)
	}
	if seq == f.jobSeq {
		return nil
	}
	changes, err := s.jobChanges(ctx)
	if len(changes) > 0 {
		s.jobs.changed() // before the marks
		for _, c := range changes {
			if c.stopped {
				s.stops.mark(c.job)
			}
			if c.updated {
				s.stops.markUpdate(c.job)
			}
		}
	}
	return err
}

// jobChange is a row of job_changes.
type jobChange struct {
	job     int64
	stopped bool // stopped or deleted
	updated bool // updated in what its runs carry to their executors (runsChanged)
}

// jobChanges reads the job changes after the last one seen, in order, and
// advances the follower past them. On an error it returns those it read
// before it, the follower past them only.
func (s *db) jobChanges(ctx context.Context) ([]jobChange, error) {
	f := &s.pg.follow
	rows, err := s.r.QueryContext(ctx, `SELECT seq, job_id, stopped, updated FROM job_changes WHERE seq > $1 ORDER BY seq`, f.jobSeq)
	if err != nil {
		return nil, fmt.Errorf("store: follow: %w", err)
	}
	defer rows.Close()
	var changes []jobChange
	for rows.Next() {
		var seq, job, stopped, updated int64
		if err := rows.Scan(&seq, &job, &stopped, &updated); err != nil {
			return changes, fmt.Errorf("store: follow: %w", err)
		}
		f.jobSeq = seq
		changes = append(changes, jobChange{job: job, stopped: stopped == 1, updated: updated == 1})
	}
	if err := rows.Err(); err != nil {
		return changes, fmt.Errorf("store: follow: %w", err)
	}
	return changes, nil
}
