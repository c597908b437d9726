package server

import (
	"context"
	"fmt"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/retention"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// runService implements carillonv1connect.RunServiceHandler.
type runService struct{ *Server }

func (s runService) ListRuns(ctx context.Context, req *carillonv1.ListRunsRequest) (*carillonv1.ListRunsResponse, error) {
	size, err := pageSize(req.PageSize)
	if err != nil {
		return nil, err
	}
	before, err := pageToken(req.PageToken)
	if err != nil {
		return nil, err
	}
	from, to := fromTS(req.From), fromTS(req.To)
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return nil, invalid("to", "must be after from")
	}
	runs, err := s.cfg.Store.Runs.List(ctx, store.RunFilter{
		JobID: req.JobId, GroupID: req.GroupId, Status: req.Status, From: from, To: to, BeforeID: before, Limit: size + 1,
		Now: s.cfg.NowFunc(),
	})
	if err != nil {
		return nil, s.toConnect(err)
	}
	res := &carillonv1.ListRunsResponse{}
	now := s.cfg.NowFunc()
	res.Runs, res.NextPageToken = page(runs, size, func(r store.Run) *carillonv1.Run { return runToProto(r, now) }, func(r store.Run) int64 { return r.ID })
	return res, nil
}

func (s runService) GetRun(ctx context.Context, req *carillonv1.GetRunRequest) (*carillonv1.GetRunResponse, error) {
	r, err := s.cfg.Store.Runs.Get(ctx, req.Id)
	if err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.GetRunResponse{Run: runToProto(r, s.cfg.NowFunc())}, nil
}

func (s runService) ReadRunLog(ctx context.Context, req *carillonv1.ReadRunLogRequest) (*carillonv1.ReadRunLogResponse, error) {
	r, err := s.cfg.Store.Runs.Get(ctx, req.RunId)
	if err != nil {
		return nil, s.toConnect(err)
	}
	if r.ExecutorAddress == "" {
		return nil, connect.NewError(connect.CodeFailedPrecondition,
			fmt.Errorf("run %d was never dispatched to an executor, so it has no log: %s", r.ID, r.Message))
	}
	page, err := s.cfg.Trigger.Gateway.ReadLog(ctx, r, req.FromLine)
	if err != nil {
		return nil, connect.NewError(connect.CodeUnavailable, fmt.Errorf("read the log of run %d from executor %s: %w", r.ID, r.ExecutorAddress, err))
	}
	return &carillonv1.ReadRunLogResponse{FromLine: page.FromLine, ToLine: page.ToLine, Content: page.Content, End: page.End}, nil
}

func (s runService) KillRun(ctx context.Context, req *carillonv1.KillRunRequest) (*carillonv1.KillRunResponse, error) {
	r, err := s.cfg.Store.Runs.Get(ctx, req.RunId)
	if err != nil {
		return nil, s.toConnect(err)
	}
	if r.Status == carillonv1.RunStatus_RUN_STATUS_PENDING && r.WorkflowRunID != 0 {
		// Its workflow run would wait for it forever: the workflow's
		// cancel skips what follows it.
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf(
			"run %d is a pending node (%s) of workflow run %d: cancel the workflow run (CancelWorkflowRun)", r.ID, r.WorkflowNode, r.WorkflowRunID))
	}
	if r.Status == carillonv1.RunStatus_RUN_STATUS_PENDING {
		// A run waiting for its instant or its retry delay: it never
		// starts. One claimed meanwhile is running: killed as such.
		cancelled, err := s.cfg.Store.Fires.CancelPending(ctx, r.ID, "cancelled by KillRun before it started", s.cfg.NowFunc())
		if err != nil {
			return nil, s.toConnect(err)
		}
		if cancelled {
			return &carillonv1.KillRunResponse{}, nil
		}
		if r, err = s.cfg.Store.Runs.Get(ctx, req.RunId); err != nil {
			return nil, s.toConnect(err)
		}
	}
	if r.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING {
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("run %d is %s, not running or pending", r.ID, r.Status))
	}
	// Also a run whose dispatch is not recorded yet: sent ahead of its
	// instant, or just sent (the trigger knows where).
	if err := s.cfg.Trigger.Kill(ctx, r); err != nil {
		return nil, connect.NewError(connect.CodeUnavailable, fmt.Errorf("kill run %d on its executor: %w", r.ID, err))
	}
	err = s.cfg.Trigger.Completer.Settle(ctx, []store.Result{{
		RunID: r.ID, Status: carillonv1.RunStatus_RUN_STATUS_KILLED, Message: "killed by KillRun", FinishedAt: s.cfg.NowFunc(),
	}})
	if err != nil {
		return nil, s.toConnect(err)
	}
	s.cfg.WakeFunc()
	return &carillonv1.KillRunResponse{}, nil
}

func (s runService) DeleteRuns(ctx context.Context, req *carillonv1.DeleteRunsRequest) (*carillonv1.DeleteRunsResponse, error) {
	if req.Before == nil && req.KeepLast == 0 {
		return nil, invalid("before", "set before or keep_last: deleting every run needs an explicit before")
	}
	sel := store.RunSelection{JobID: req.JobId, GroupID: req.GroupId, Before: fromTS(req.Before), KeepLast: int(req.KeepLast)}
	if req.DryRun {
		n, err := s.cfg.Store.Runs.CountSelection(ctx, sel)
		if err != nil {
			return nil, s.toConnect(err)
		}
		return &carillonv1.DeleteRunsResponse{Deleted: n}, nil
	}
	n, err := retention.Delete(ctx, s.cfg.Store, sel)
	if err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.DeleteRunsResponse{Deleted: n}, nil
}
