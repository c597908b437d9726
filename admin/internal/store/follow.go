package store

import (
	"context"
	"fmt"
	"time"
)

// followInterval is how often an admin sharing a PostgreSQL database reads
// what the other admins changed of what it caches.
const followInterval = 100 * time.Millisecond

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
// (JobDefinitions), a stopped or deleted job is marked (StoppedSince). The
// first call only notes where things stand. Its own writes come back to
// it too, harmlessly.
func (s *Store) follow(ctx context.Context) error {
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
	rows, err := s.r.QueryContext(ctx, `SELECT seq, job_id, stopped FROM job_changes WHERE seq > ? ORDER BY seq`, f.jobSeq)
	if err != nil {
		return fmt.Errorf("store: follow: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var job, stopped int64
		if err := rows.Scan(&f.jobSeq, &job, &stopped); err != nil {
			return fmt.Errorf("store: follow: %w", err)
		}
		if stopped == 1 {
			s.stops.mark(job)
		}
	}
	s.jobs.changed()
	return rows.Err()
}
