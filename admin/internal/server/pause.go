package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"connectrpc.com/connect"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// PauseGroup pauses the group: the store leaves its jobs and workflows
// unclaimed and its pending runs pending (store.GroupStore.Pause).
func (s groupService) PauseGroup(ctx context.Context, req *carillonv1.PauseGroupRequest) (*carillonv1.PauseGroupResponse, error) {
	g, err := s.cfg.Store.Groups.Pause(ctx, req.Id, s.cfg.NowFunc().Truncate(time.Millisecond))
	if err != nil {
		return nil, s.toConnect(err)
	}
	p, err := s.toProto(ctx, g)
	return &carillonv1.PauseGroupResponse{Group: p}, err
}

// ResumeGroup ends the group's pause: its schedules go on from their next
// instant, what the pause skipped recorded, and its pending runs that
// waited are queued again.
func (s groupService) ResumeGroup(ctx context.Context, req *carillonv1.ResumeGroupRequest) (*carillonv1.ResumeGroupResponse, error) {
	g, waited, err := s.cfg.Store.Groups.Resume(ctx, req.Id, s.cfg.NowFunc().Truncate(time.Millisecond), schedule.ResumePlan())
	if err != nil {
		return nil, s.toConnect(err)
	}
	s.cfg.Trigger.Dispatcher.Requeue(waited)
	s.cfg.WakeFunc()
	p, err := s.toProto(ctx, g)
	return &carillonv1.ResumeGroupResponse{Group: p}, err
}

// refusePaused refuses, as failed_precondition naming the pause, a manual
// trigger of what (a job or a workflow) of group id while it is paused.
func (s *Server) refusePaused(ctx context.Context, groupID int64, what string) error {
	g, err := s.cfg.Store.Groups.Get(ctx, groupID)
	if err != nil {
		return s.toConnect(err)
	}
	if g.PausedAt.IsZero() {
		return nil
	}
	return connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf(
		"%s's group %d (%s) is paused (since %s): nothing of it fires until it is resumed (ResumeGroup, `carillon group resume %d`); nothing was triggered",
		what, g.ID, g.AppName, g.PausedAt.UTC().Format(time.RFC3339), g.ID))
}

// jobsForBatch returns the jobs of ids, in order, or refuses the whole
// call naming the first id that is not a job (not_found).
func (s jobService) jobsForBatch(ctx context.Context, ids []int64) ([]store.Job, error) {
	jobs := make([]store.Job, 0, len(ids))
	for i, id := range ids {
		j, err := s.cfg.Store.Jobs.Get(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("ids[%d]: job %d not found; no job was changed", i, id))
		}
		if err != nil {
			return nil, s.toConnect(err)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// StartJobs starts the jobs of req.Ids, as StartJob each, in one
// transaction: all or none.
func (s jobService) StartJobs(ctx context.Context, req *carillonv1.StartJobsRequest) (*carillonv1.StartJobsResponse, error) {
	jobs, err := s.jobsForBatch(ctx, req.Ids)
	if err != nil {
		return nil, err
	}
	now := s.cfg.NowFunc()
	starts := make([]store.JobStart, 0, len(jobs))
	for i, j := range jobs {
		if j.Enabled {
			continue
		}
		next, err := s.firstFire(schedule.SpecOf(j), now)
		if err != nil {
			return nil, fmt.Errorf("ids[%d] (job %d): %w; no job was started", i, j.ID, err)
		}
		starts = append(starts, store.JobStart{ID: j.ID, Next: next})
	}
	started, err := s.cfg.Store.Jobs.StartMany(ctx, req.Ids, starts, now)
	if err != nil {
		return nil, s.toConnect(err)
	}
	s.cfg.WakeFunc()
	res := &carillonv1.StartJobsResponse{Jobs: make([]*carillonv1.Job, len(started))}
	for i, j := range started {
		res.Jobs[i] = jobToProto(j)
	}
	return res, nil
}

// StopJobs stops the jobs of req.Ids, as StopJob each, in one
// transaction: all or none.
func (s jobService) StopJobs(ctx context.Context, req *carillonv1.StopJobsRequest) (*carillonv1.StopJobsResponse, error) {
	if _, err := s.jobsForBatch(ctx, req.Ids); err != nil {
		return nil, err
	}
	stopped, err := s.cfg.Store.Jobs.StopMany(ctx, req.Ids, s.cfg.NowFunc())
	if err != nil {
		return nil, s.toConnect(err)
	}
	res := &carillonv1.StopJobsResponse{Jobs: make([]*carillonv1.Job, len(stopped))}
	for i, j := range stopped {
		res.Jobs[i] = jobToProto(j)
	}
	return res, nil
}
