package server

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/carillonhq/carillon/admin/internal/auth"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// The List RPCs of a MEMBER show only the groups granted to them. The
// scoped services wrap the plain ones: for a caller who may read every
// group they change nothing; for a MEMBER who names no group they list each
// granted group and merge the pages, so paging stays exact.

// scopedGroupService filters ListGroups.
type scopedGroupService struct{ groupService }

func (s scopedGroupService) ListGroups(ctx context.Context, req *carillonv1.ListGroupsRequest) (*carillonv1.ListGroupsResponse, error) {
	res, err := s.groupService.ListGroups(ctx, req)
	if err != nil {
		return nil, err
	}
	p := auth.FromContext(ctx)
	res.Groups = slices.DeleteFunc(res.Groups, func(g *carillonv1.Group) bool { return !p.CanRead(g.Id) })
	return res, nil
}

// scopedJobService scopes ListJobs.
type scopedJobService struct{ jobService }

func (s scopedJobService) ListJobs(ctx context.Context, req *carillonv1.ListJobsRequest) (*carillonv1.ListJobsResponse, error) {
	all, groups := auth.FromContext(ctx).ReadScope()
	if all || req.GroupId != 0 { // a named group was checked by the rule
		return s.jobService.ListJobs(ctx, req)
	}
	size, err := pageSize(req.PageSize)
	if err != nil {
		return nil, err
	}
	var jobs []*carillonv1.Job
	more := false
	for _, g := range groups {
		sub := proto.CloneOf(req)
		sub.GroupId = g
		res, err := s.jobService.ListJobs(ctx, sub)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, res.Jobs...)
		more = more || res.NextPageToken != ""
	}
	slices.SortFunc(jobs, func(a, b *carillonv1.Job) int { return cmp.Compare(a.Id, b.Id) })
	res := &carillonv1.ListJobsResponse{Jobs: jobs}
	if len(jobs) > size {
		res.Jobs, more = jobs[:size], true
	}
	if more && len(res.Jobs) > 0 {
		res.NextPageToken = strconv.FormatInt(res.Jobs[len(res.Jobs)-1].Id, 10)
	}
	return res, nil
}

// scopedRunService scopes ListRuns.
type scopedRunService struct{ runService }

func (s scopedRunService) ListRuns(ctx context.Context, req *carillonv1.ListRunsRequest) (*carillonv1.ListRunsResponse, error) {
	all, groups := auth.FromContext(ctx).ReadScope()
	if all || req.GroupId != 0 {
		return s.runService.ListRuns(ctx, req)
	}
	size, err := pageSize(req.PageSize)
	if err != nil {
		return nil, err
	}
	var runs []*carillonv1.Run
	more := false
	for _, g := range groups {
		sub := proto.CloneOf(req)
		sub.GroupId = g
		res, err := s.runService.ListRuns(ctx, sub)
		if err != nil {
			return nil, err
		}
		runs = append(runs, res.Runs...)
		more = more || res.NextPageToken != ""
	}
	slices.SortFunc(runs, func(a, b *carillonv1.Run) int { return cmp.Compare(b.Id, a.Id) }) // newest first
	res := &carillonv1.ListRunsResponse{Runs: runs}
	if len(runs) > size {
		res.Runs, more = runs[:size], true
	}
	if more && len(res.Runs) > 0 {
		res.NextPageToken = strconv.FormatInt(res.Runs[len(res.Runs)-1].Id, 10)
	}
	return res, nil
}
