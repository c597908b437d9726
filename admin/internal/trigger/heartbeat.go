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
// its address and process (Registered) and what the store keeps of it
// (store.RegistryStore.Register: among others its capabilities, from which the trigger
// decides which executors take runs ahead of their instant).
type Heartbeat struct {
	// Address is the executor's.
	Address string
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

// heard is what the trigger knows of each executor's clock from its
// heartbeats to this admin, in memory only.
type heard struct {
	mu     sync.Mutex
	skewed map[string]bool // by address: the last offset heard was over ClockOffsetMax
}

// Heard is told of each executor heartbeat: it logs a warning when the
// executor's clock is more than ClockOffsetMax off the admin's (once,
// until the clock is back within it, which is logged too).
func (rs *Rescuer) Heard(hb Heartbeat) {
	// The offset is known to within half the round trip: a heartbeat
	// whose round trip was that slow (a busy executor, e.g. accepting a
	// burst) says nothing of the clock, and the offset counts as off only
	// by what it surely is.
	if !hb.ClockMeasured || hb.ClockRoundTrip/2 > ClockOffsetMax {
		return
	}
	h := &rs.heard
	h.mu.Lock()
	if h.skewed == nil {
		h.skewed = map[string]bool{}
	}
	off := hb.ClockOffset.Abs()-hb.ClockRoundTrip/2 > ClockOffsetMax
	was := h.skewed[hb.Address]
	h.skewed[hb.Address] = off
	h.mu.Unlock()
	switch {
	case off && !was:
		rs.cfg.Logger.Warn("executor clock is off the admin's by more than 50 ms: runs sent ahead start at their instant by the executor's clock; check NTP on both",
			"executor", hb.Address, "admin_minus_executor", hb.ClockOffset, "round_trip", hb.ClockRoundTrip)
	case !off && was:
		rs.cfg.Logger.Info("executor clock is back within 50 ms of the admin's",
			"executor", hb.Address, "admin_minus_executor", hb.ClockOffset, "round_trip", hb.ClockRoundTrip)
	}
}
