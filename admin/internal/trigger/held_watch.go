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

const (
	// heldWatchBatch bounds the runs one sweep asks their executors about.
	heldWatchBatch = 1000
	// heldWatchCalls bounds the executors asked at once.
	heldWatchCalls = 8
)

// heldWatch remembers, for the monitor's backstop (watchHeld), since when
// each running run's executor has not said it holds the run ACTIVE, and
// where the walk over the runs to ask about is.
type heldWatch struct {
	mu     sync.Mutex
	cursor store.RunsCursor       // the next page starts after it
	round  time.Time              // when the current walk started
	since  map[int64]notActiveRun // by run ID
}

// notActiveRun is a run its executor was seen not to hold ACTIVE: since
// when, and when it was last asked about.
type notActiveRun struct {
	since, seen time.Time
}

// watchHeld is the monitor's backstop for the running runs of AUTO groups
// (of Carillon executors) dispatched more than grace ago, a page of them
// per sweep (heldWatchBatch; the next sweep takes the next page, and the
// first again after the last): it asks each run's executor, once per
// sweep and all of its runs in one HeldRuns call, whether it holds them.
// A run the executor says was cut short (CUT_SHORT: its process was
// killed while the run ran) is LOST at once. A run it does not hold
// ACTIVE (it does not list it, or says it ENDED and yet no result came)
// for longer than grace since first seen so is LOST. Executors that do not
// answer are skipped: those that cannot answer (errCannotAnswer) and
// those that fail have their timeout and lost-executor judgements.
func (rs *Rescuer) watchHeld(ctx context.Context, now time.Time, grace time.Duration) ([]store.Result, error) {
	w := &rs.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.since == nil {
		w.since = map[int64]notActiveRun{}
	}
	if w.round.IsZero() {
		w.round = now
	}
	runs, err := rs.cfg.Store.Runs.Watched(ctx, now.Add(-grace), w.cursor, heldWatchBatch)
	if err != nil {
		return nil, err
	}
	if len(runs) == heldWatchBatch {
		last := runs[len(runs)-1]
		w.cursor = store.RunsCursor{TriggeredAt: last.TriggeredAt, ID: last.ID}
	} else {
		defer w.endRound()
	}
	byAddr := map[string][]store.Run{}
	var addrs []string
	for _, r := range runs {
		if _, ok := byAddr[r.ExecutorAddress]; !ok {
			addrs = append(addrs, r.ExecutorAddress)
		}
		byAddr[r.ExecutorAddress] = append(byAddr[r.ExecutorAddress], r)
	}
	answers := make([]heldAnswer, len(addrs))
	var wg sync.WaitGroup
	slots := make(chan struct{}, heldWatchCalls)
	for i, addr := range addrs {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			answers[i] = rs.gateway.heldAt(ctx, addr, byAddr[addr])
		}()
	}
	wg.Wait()
	var results []store.Result
	for i, addr := range addrs {
		a := answers[i]
		if a.err != nil {
			if !errors.Is(a.err, errCannotAnswer) && ctx.Err() == nil {
				rs.cfg.Logger.Debug("trigger: ask an executor which of its running runs it holds; asking again at the next sweep",
					"executor", addr, "err", a.err)
			}
			for _, r := range byAddr[addr] {
				if e, ok := w.since[r.ID]; ok {
					e.seen = now // no news: still not seen ACTIVE
					w.since[r.ID] = e
				}
			}
			continue
		}
		for _, r := range byAddr[addr] {
			state, listed := a.held[r.ID]
			if state == carillonv1.HeldRunState_HELD_RUN_STATE_ACTIVE {
				delete(w.since, r.ID)
				continue
			}
			if state == carillonv1.HeldRunState_HELD_RUN_STATE_CUT_SHORT {
				delete(w.since, r.ID)
				results = append(results, cutShortResult(r.ID, addr, now))
				continue
			}
			e, ok := w.since[r.ID]
			if !ok {
				e.since = now
			}
			e.seen = now
			w.since[r.ID] = e
			if now.Sub(e.since) <= grace {
				continue
			}
			delete(w.since, r.ID)
			msg := fmt.Sprintf("lost: executor %s does not hold this run (not listed by HeldRuns since %s, more than the %s grace): "+
				"it never got it, or lost it", addr, e.since.UTC().Format(time.RFC3339), grace)
			if listed {
				msg = fmt.Sprintf("lost: executor %s says this run ended (HeldRuns ENDED since %s), but no result came within the %s grace",
					addr, e.since.UTC().Format(time.RFC3339), grace)
			}
			results = append(results, store.Result{RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_LOST, FinishedAt: now, ByAdmin: true,
				Message: msg})
		}
	}
	return results, nil
}

// endRound ends a walk over the runs: the next sweep starts from the
// first, and the runs not asked about during this walk, no longer running
// (or no longer watched), are forgotten. w.mu is held.
func (w *heldWatch) endRound() {
	for id, e := range w.since {
		if e.seen.Before(w.round) {
			delete(w.since, id)
		}
	}
	w.cursor, w.round = store.RunsCursor{}, time.Time{}
}

// cutShortMessage starts the message of a run its executor says was cut
// short by a restart of its process.
const cutShortMessage = "lost: the executor restarted; the run was cut short"

// cutShortResult settles LOST a run the executor at addr says was cut
// short (HELD_RUN_STATE_CUT_SHORT).
func cutShortResult(runID int64, addr string, now time.Time) store.Result {
	return store.Result{RunID: runID, Status: carillonv1.RunStatus_RUN_STATUS_LOST, FinishedAt: now, ByAdmin: true,
		Message: fmt.Sprintf("%s: executor %s accepted it, and its process was killed before the run ended, so no result will come",
			cutShortMessage, addr)}
}
