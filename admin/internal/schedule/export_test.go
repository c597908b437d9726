package schedule

import "time"

// SetClaimCost sets what s takes a claimed fire to cost until its scans
// have measured it (claimCostDefault otherwise): a test of the claim lead
// then needs fewer jobs for the same lead.
func SetClaimCost(s *Scheduler, d time.Duration) { s.perClaim = d }
