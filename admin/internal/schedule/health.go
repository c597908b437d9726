package schedule

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// staleScans is how many scan intervals may pass without a finished scan
// before the scheduler is not ready: a scan runs at least once per
// interval, so only a scan stuck (on a stalled disk, say) gets there.
const staleScans = 30

// health is what Ready reports: whether Run runs, and the last scan's
// outcome.
type health struct {
	mu       sync.Mutex
	running  bool
	started  time.Time
	scanned  time.Time // when the last scan finished
	err      error     // the last scan's error
	failedAt time.Time // when it failed
	okAt     time.Time // when the last successful scan finished
}

func (h *health) start(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.running, h.started, h.scanned, h.err, h.okAt = true, now, time.Time{}, nil, time.Time{}
}

func (h *health) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.running = false
}

// scan records the outcome of a scan that finished at now.
func (h *health) scan(now time.Time, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.scanned, h.err = now, err
	if err != nil {
		h.failedAt = now
	} else {
		h.okAt = now
	}
}

// Ready returns nil when the scheduler is running and its last scan
// succeeded, less than 30 scan intervals before now; else the reason: not
// started (or stopped), no scan finished yet, the last scan's error (a
// full disk: it matches store.ErrFull), or no scan for too long. Fires
// that fall due while scans fail are not lost: the first scan that
// succeeds finds them late, and the job's misfire strategy handles them.
func (s *Scheduler) Ready(now time.Time) error {
	h := &s.health
	h.mu.Lock()
	defer h.mu.Unlock()
	stale := staleScans * s.cfg.ScanInterval
	switch {
	case !h.running:
		return errors.New("schedule: the scheduler is not running")
	case h.err != nil:
		return fmt.Errorf("schedule: the last scan, at %s, failed: %w", h.failedAt.UTC().Format(time.RFC3339), h.err)
	case h.scanned.IsZero() && now.Sub(h.started) < stale:
		return errors.New("schedule: the first scan has not finished yet")
	case now.Sub(cmpTime(h.scanned, h.started)) >= stale:
		return fmt.Errorf("schedule: no scan has finished for %s", now.Sub(cmpTime(h.scanned, h.started)).Round(time.Second))
	}
	return nil
}

// ScanLag returns how long before now the last successful scan finished,
// or, before the first one, how long ago Run started; 0 when Run is not
// running. A scan runs at least every ScanInterval: a lag well past it is
// a stuck scheduler (see Ready).
func (s *Scheduler) ScanLag(now time.Time) time.Duration {
	h := &s.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.running {
		return 0
	}
	last := h.started
	if h.err == nil && !h.scanned.IsZero() {
		last = h.scanned
	} else if !h.okAt.IsZero() {
		last = h.okAt
	}
	return max(now.Sub(last), 0)
}

// cmpTime returns t, or else if t is zero.
func cmpTime(t, orElse time.Time) time.Time {
	if t.IsZero() {
		return orElse
	}
	return t
}
