package trigger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// manualProbes remembers, for the executors of MANUAL groups (which never
// register, so no heartbeat says whether they are alive), since when each
// has not answered the monitor's probe.
type manualProbes struct {
	mu    sync.Mutex
	down  map[string]time.Time // address -> first failed probe of the current silence
	ended map[int64]time.Time  // run ID -> first answer that said ENDED, while no result came
}

// manualRuns returns the LOST results of running runs of MANUAL groups
// whose executor stopped answering: the monitor asks each executor that
// holds runs dispatched more than grace ago which runs it holds
// (HeldRuns, or Beat where it cannot say). A run whose executor answers
// but does not hold it, or says it was cut short (the executor restarted),
// is lost at once; the runs
// of an executor that has not answered for ExecutorTTL are lost, as those
// of an AUTO group's executor that stopped heartbeating. A run its
// executor says ENDED, and whose result has not come for longer than grace
// since it first said so, is lost too.
func (rs *Rescuer) manualRuns(ctx context.Context, now time.Time, grace time.Duration) ([]store.Result, error) {
	runs, err := rs.cfg.Store.Runs.Manual(ctx, now.Add(-grace))
	if err != nil {
		return nil, err
	}
	byAddr := map[string][]store.Run{}
	for _, r := range runs {
		byAddr[r.ExecutorAddress] = append(byAddr[r.ExecutorAddress], r)
	}
	p := &rs.manual
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down == nil {
		p.down, p.ended = map[string]time.Time{}, map[int64]time.Time{}
	}
	running := make(map[int64]bool, len(runs))
	for _, r := range runs {
		running[r.ID] = true
	}
	for id := range p.ended {
		if !running[id] {
			delete(p.ended, id) // settled since, or no longer asked about
		}
	}
	for addr := range p.down {
		if _, ok := byAddr[addr]; !ok {
			delete(p.down, addr) // holds no run any more: nothing to watch
		}
	}
	var results []store.Result
	for addr, addrRuns := range byAddr {
		a := rs.gateway.heldAt(ctx, addr, addrRuns)
		if errors.Is(a.err, errCannotAnswer) {
			a = heldAnswer{address: addr, err: rs.gateway.prober(addrRuns[0].GroupID).Beat(ctx, addr)}
		}
		if a.err == nil {
			delete(p.down, addr)
			if a.held == nil {
				continue // answered Beat only: alive, holding we cannot tell
			}
			for _, r := range addrRuns {
				state, ok := a.held[r.ID]
				if state == carillonv1.HeldRunState_HELD_RUN_STATE_CUT_SHORT {
					results = append(results, cutShortResult(r.ID, addr, now))
					continue
				}
				if !ok {
					results = append(results, store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_LOST, FinishedAt: now, ByAdmin: true,
						Message: fmt.Sprintf("lost: executor %s (MANUAL group) answers but does not hold this run: it restarted without it", addr)})
					continue
				}
				if state != carillonv1.HeldRunState_HELD_RUN_STATE_ENDED {
					delete(p.ended, r.ID)
					continue
				}
				since, seen := p.ended[r.ID]
				if !seen {
					p.ended[r.ID] = now
					continue
				}
				if now.Sub(since) > grace {
					delete(p.ended, r.ID)
					results = append(results, store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_LOST, FinishedAt: now, ByAdmin: true,
						Message: fmt.Sprintf("lost: executor %s (MANUAL group) says this run ended (HeldRuns ENDED since %s), but no result came within the %s grace",
							addr, since.UTC().Format(time.RFC3339), grace)})
				}
			}
			continue
		}
		since, ok := p.down[addr]
		if !ok {
			p.down[addr] = now
			continue
		}
		if now.Sub(since) < rs.cfg.ExecutorTTL {
			continue
		}
		for _, r := range addrRuns {
			results = append(results, store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_LOST, FinishedAt: now, ByAdmin: true,
				Message: fmt.Sprintf("lost: executor %s (MANUAL group) has not answered since %s: %v",
					addr, since.UTC().Format(time.RFC3339), a.err)})
		}
	}
	return results, nil
}
