package schedule

import (
	"context"
	"time"
)

// SetClaimCost sets what s takes a claimed fire to cost until its scans
// have measured it (claimCostDefault otherwise): a test of the claim lead
// then needs fewer jobs for the same lead.
func SetClaimCost(s *Scheduler, d time.Duration) { s.perClaim = d }

// SetTakeoverDelay makes s claim the other admins' fires d after their
// owners should have (store.TakeoverDelay otherwise): a test of owners'
// claims then sees no takeover when an owner's scan is late.
func SetTakeoverDelay(s *Scheduler, d time.Duration) { s.takeoverDelay = d }

// SetNow makes s's scans read the time from now instead of time.Now.
func SetNow(s *Scheduler, now func() time.Time) { s.now = now }

// Scan runs one scan of s, as its scan loop does, and returns how many
// runs wait in its queue after it.
func Scan(ctx context.Context, s *Scheduler) (queued int, err error) {
	_, _, err = s.scan(ctx)
	return s.queue.Len(), err
}
