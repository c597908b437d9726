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

// SetScanPasses bounds the passes of s's scans at n (scanPasses
// otherwise): a test of a burst cut short by the bound then needs a few
// hundred jobs, not a quarter of a million.
func SetScanPasses(s *Scheduler, n int) { s.passes = n }

// SetScanBatchAhead sets how many jobs a pass of s takes while it claims
// a burst ahead (scanBatchAhead).
func SetScanBatchAhead(s *Scheduler, n int) { s.batchAhead = n }

// ScanOnce runs one scan of s as its scan loop does, and returns the
// window its next scan claims in, how long the loop waits for it, and
// how many runs wait in its queue.
func ScanOnce(ctx context.Context, s *Scheduler) (window, wait time.Duration, queued int) {
	wait = s.scanOnce(ctx)
	return s.window, wait, s.queue.Len()
}
