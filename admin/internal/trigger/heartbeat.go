package trigger

import (
	"sync"
	"time"
)

// ClockOffsetMax is how far an executor's clock may be from the admin's
// before the admin warns: a run sent ahead of its instant starts at its
// due_at by the executor's clock (see Config.SendAhead), so an executor
// whose clock is off starts its runs early or late by as much. Carillon
// assumes the clocks agree to within a few milliseconds (NTP).
const ClockOffsetMax = 50 * time.Millisecond

// Heartbeat is what an executor's registration tells the trigger besides
// its address and process (Registered).
type Heartbeat struct {
	// Address is the executor's.
	Address string
	// DueAt says the executor starts runs at their RunRequest.due_at
	// (CAPABILITY_DUE_AT): its scheduled runs may be sent ahead.
	DueAt bool
	// ClockMeasured says ClockOffset and ClockRoundTrip are set: the
	// executor measured its clock against the admin's at its previous
	// heartbeat.
	ClockMeasured bool
	// ClockOffset is the admin's clock minus the executor's, as the
	// executor estimated it.
	ClockOffset time.Duration
	// ClockRoundTrip is the round trip the offset was measured over: the
	// estimate is good to half of it.
	ClockRoundTrip time.Duration
}

// heard is what the trigger knows of each executor from its heartbeats.
// It is in memory only: after an admin restart, an executor's runs are
// sent on their instant until its next heartbeat says it takes due_at.
type heard struct {
	mu     sync.Mutex
	dueAt  map[string]bool // by address: takes due_at
	skewed map[string]bool // by address: the last offset heard was over ClockOffsetMax
}

// Heard is told of each executor heartbeat: it remembers whether the
// executor takes runs ahead of their instant, and logs a warning when its
// clock is more than ClockOffsetMax off the admin's (once, until the clock
// is back within it, which is logged too).
func (t *Trigger) Heard(hb Heartbeat) {
	h := &t.heard
	h.mu.Lock()
	if h.dueAt == nil {
		h.dueAt, h.skewed = map[string]bool{}, map[string]bool{}
	}
	h.dueAt[hb.Address] = hb.DueAt
	// The offset is known to within half the round trip: a heartbeat
	// whose round trip was that slow (a busy executor, e.g. accepting a
	// burst) says nothing of the clock, and the offset counts as off only
	// by what it surely is.
	if !hb.ClockMeasured || hb.ClockRoundTrip/2 > ClockOffsetMax {
		h.mu.Unlock()
		return
	}
	off := hb.ClockOffset.Abs()-hb.ClockRoundTrip/2 > ClockOffsetMax
	was := h.skewed[hb.Address]
	h.skewed[hb.Address] = off
	h.mu.Unlock()
	switch {
	case off && !was:
		t.cfg.Logger.Warn("executor clock is off the admin's by more than 50 ms: runs sent ahead start at their instant by the executor's clock; check NTP on both",
			"executor", hb.Address, "admin_minus_executor", hb.ClockOffset, "round_trip", hb.ClockRoundTrip)
	case !off && was:
		t.cfg.Logger.Info("executor clock is back within 50 ms of the admin's",
			"executor", hb.Address, "admin_minus_executor", hb.ClockOffset, "round_trip", hb.ClockRoundTrip)
	}
}

// takesDueAt says whether the executor at address said, at its last
// heartbeat to this admin, that it starts runs at their due_at.
func (t *Trigger) takesDueAt(address string) bool {
	t.heard.mu.Lock()
	defer t.heard.mu.Unlock()
	return t.heard.dueAt[address]
}
