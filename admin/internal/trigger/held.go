package trigger

import (
	"context"
	"errors"
	"maps"
	"sync"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// errCannotAnswer says an executor does not serve HeldRuns (an SDK that
// predates it, or another implementation): it can never say which runs it
// holds.
var errCannotAnswer = errors.New("the executor cannot say which runs it holds (HeldRuns unimplemented)")

// heldAnswer is one executor's answer to "which of these runs do you
// hold?": the runs it holds, or why it did not answer.
type heldAnswer struct {
	address string
	held    map[int64]carillonv1.HeldRunState
	err     error // errCannotAnswer, or the call's error
}

// askHeld asks each executor at addresses, of group groupID, concurrently,
// which of runIDs it holds.
func (t *Trigger) askHeld(ctx context.Context, groupID int64, addresses []string, runIDs []int64) []heldAnswer {
	ctx = forGroup(ctx, groupID)
	answers := make([]heldAnswer, len(addresses))
	var wg sync.WaitGroup
	for i, addr := range addresses {
		wg.Go(func() {
			answers[i] = t.executors.heldRuns(ctx, addr, t.cfg.Store.DatabaseID(), runIDs)
		})
	}
	wg.Wait()
	return answers
}

// heldRuns asks the executor at address which of runIDs of database db it
// holds.
func (e *executors) heldRuns(ctx context.Context, address, db string, runIDs []int64) heldAnswer {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	a := heldAnswer{address: address}
	res, err := e.client(ctx, address).HeldRuns(ctx, &carillonv1.HeldRunsRequest{DatabaseId: db, RunIds: runIDs})
	if connect.CodeOf(err) == connect.CodeUnimplemented {
		err = errCannotAnswer
	}
	if err != nil {
		a.err = err
		return a
	}
	a.held = make(map[int64]carillonv1.HeldRunState, len(res.GetRuns()))
	for _, r := range res.GetRuns() {
		a.held[r.GetRunId()] = r.GetState()
	}
	return a
}

// heldAt asks the executor at address which of runs it holds. Each
// group's runs are asked with that group's token (an address normally
// serves one group); the answers are merged, and an error of any ask is
// the answer's.
func (t *Trigger) heldAt(ctx context.Context, address string, runs []store.Run) heldAnswer {
	byGroup := map[int64][]int64{}
	for _, r := range runs {
		byGroup[r.GroupID] = append(byGroup[r.GroupID], r.ID)
	}
	merged := heldAnswer{address: address, held: map[int64]carillonv1.HeldRunState{}}
	for group, ids := range byGroup {
		a := t.executors.heldRuns(forGroup(ctx, group), address, t.cfg.Store.DatabaseID(), ids)
		if a.err != nil {
			return a
		}
		maps.Copy(merged.held, a.held)
	}
	return merged
}
