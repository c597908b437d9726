package store

import (
	"context"
	"time"

	"github.com/carillonhq/carillon/internal/testsignal"
)

// Exported for tests.
const (
	SQLRunning = sqlRunning
	SQLPending = sqlPending
)

// NextFireAt returns the earliest next fire of the enabled jobs of groups
// not paused in this admin's buckets (own), and in the other admins'
// (others: zero over SQLite, or for an admin alone), by the query of its
// own that FireStore.Next joined with the workflows': the reference the
// tests check Next against.
func (s FireStore) NextFireAt(ctx context.Context) (own, others time.Time, err error) {
	return s.nextFires(ctx, nextFireSQL, nextFireSharedSQL)
}

// JobsChanged marks the job cache stale, as a job write does.
func (s *Store) JobsChanged() { s.jobs.changed() }

// Followed is emitted after each round of FollowLoop over PostgreSQL.
func (s *Store) Followed() *testsignal.Signal { return &s.pg.followed }

// JobReads is how many jobs the job cache has read from the database.
func (s *Store) JobReads() int64 { return s.jobs.reads.Load() }

// PartitionOf is partitionOf.
func PartitionOf(live []string, self string, sharing int) Partition {
	return partitionOf(live, self, sharing)
}

// SharingOf is sharingOf.
func SharingOf(total int64, current, n int, perAdmin int64) int {
	return sharingOf(total, current, n, perAdmin)
}

// DueJobsSharedSQL is the text of DueJobs of an admin sharing the due
// jobs with others (PostgreSQL).
func DueJobsSharedSQL() string { return dueJobsSharedSQL }

// RenewLease renews s's lease once, as LeaseLoop does.
func (s *Store) RenewLease(ctx context.Context) error { return s.renewLease(ctx) }

// RateWindow is rateWindow.
const RateWindow = rateWindow
