package trigger

import (
	"context"
	"errors"
	"maps"
	"strings"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
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
	err     error          // errCannotAnswer, or the call's error
	asked   map[int64]bool // the runs asked about; nil: all those of the question
	unsure  map[int64]bool // runs the executor cannot tell about yet: ask again later
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

// xxlLogMissing is what an xxl-job executor's /log answers for a run it has
// no log file of: it never started the run.
const xxlLogMissing = "logFile not exists"

// xxlNoLogs is what xxl-job-executor-go's /log answers for any run when
// its program set no log handler ("the default answer: no LogHandler was
// set"): such an executor cannot say which runs it holds.
const xxlNoLogs = "说明没有设置LogHandler"

// xxlHeld is HeldRuns for an xxl-job executor, which has no such call: a
// run is held when the executor has its log file (/log: the run started
// there), and not held when it has none and the job is idle there
// (/idleBeat: nothing of the job running or queued). A run with no log
// whose job is busy there may be queued: it is unsure, and asked about
// again later. An executor whose /log answers the same for every run
// (xxlNoLogs) cannot answer.
func (t *Trigger) xxlHeld(ctx context.Context, address string, runs []store.Run) heldAnswer {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	a := heldAnswer{address: address, held: map[int64]carillonv1.HeldRunState{}}
	client := t.executors.client(ctx, address)
	for _, run := range runs {
		// /idleBeat first: a job idle then had nothing queued, so a run
		// with no log after it never started; asked the other way round, a
		// run could start and end between the two answers.
		idle, err := client.IdleBeat(ctx, &carillonv1.IdleBeatRequest{JobId: run.JobID})
		if err != nil {
			a.err = err
			return a
		}
		page, err := client.ReadLog(ctx, &carillonv1.ReadLogRequest{RunId: run.ID,
			ScheduledAt: timestamppb.New(run.ScheduledAt), FromLine: 1})
		if err != nil {
			a.err = err
			return a
		}
		switch {
		case strings.Contains(page.GetContent(), xxlNoLogs):
			return heldAnswer{address: address, err: errCannotAnswer}
		case !strings.Contains(page.GetContent(), xxlLogMissing):
			a.held[run.ID] = carillonv1.HeldRunState_HELD_RUN_STATE_ACTIVE
		case !idle.GetIdle():
			if a.unsure == nil {
				a.unsure = map[int64]bool{}
			}
			a.unsure[run.ID] = true
		}
	}
	return a
}
