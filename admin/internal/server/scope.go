package server

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/carillonhq/carillon/admin/internal/auth"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// scopeFunc calls a List RPC's handler, next, for caller p so that it
// shows only the groups p may read: for a caller who may read every group
// it changes nothing; for a MEMBER who names no group it lists each
// granted group and merges the pages, so paging stays exact.
type scopeFunc func(ctx context.Context, p *auth.Principal, req connect.AnyRequest, next connect.UnaryFunc) (connect.AnyResponse, error)

// scopeListGroups drops the groups p may not read.
func scopeListGroups(ctx context.Context, p *auth.Principal, req connect.AnyRequest, next connect.UnaryFunc) (connect.AnyResponse, error) {
	res, err := next(ctx, req)
	if err != nil {
		return nil, err
	}
	out := res.Any().(*carillonv1.ListGroupsResponse)
	out.Groups = slices.DeleteFunc(out.Groups, func(g *carillonv1.Group) bool { return !p.CanRead(g.Id) })
	if all, _ := p.ReadScope(); !all {
		out.UnclaimedAppNames = nil // other app names are not a MEMBER's business
	}
	return res, nil
}

// scopeListJobs lists the jobs of p's groups, by id.
func scopeListJobs(ctx context.Context, p *auth.Principal, req connect.AnyRequest, next connect.UnaryFunc) (connect.AnyResponse, error) {
	r := req.Any().(*carillonv1.ListJobsRequest)
	all, groups := p.ReadScope()
	if all || r.GroupId != 0 { // a named group was checked by the row's check
		return next(ctx, req)
	}
	jobs, more, err := perGroup(ctx, groups, r, r.PageSize, next,
		func(sub *carillonv1.ListJobsRequest, g int64) { sub.GroupId = g },
		func(res *carillonv1.ListJobsResponse) ([]*carillonv1.Job, bool) {
			return res.Jobs, res.NextPageToken != ""
		},
		func(a, b *carillonv1.Job) int { return cmp.Compare(a.Id, b.Id) })
	if err != nil {
		return nil, err
	}
	out := &carillonv1.ListJobsResponse{Jobs: jobs}
	if more {
		out.NextPageToken = strconv.FormatInt(jobs[len(jobs)-1].Id, 10)
	}
	return connect.NewResponse(out), nil
}

// scopeListRuns lists the runs of p's groups, newest first.
func scopeListRuns(ctx context.Context, p *auth.Principal, req connect.AnyRequest, next connect.UnaryFunc) (connect.AnyResponse, error) {
	r := req.Any().(*carillonv1.ListRunsRequest)
	all, groups := p.ReadScope()
	if all || r.GroupId != 0 {
		return next(ctx, req)
	}
	runs, more, err := perGroup(ctx, groups, r, r.PageSize, next,
		func(sub *carillonv1.ListRunsRequest, g int64) { sub.GroupId = g },
		func(res *carillonv1.ListRunsResponse) ([]*carillonv1.Run, bool) {
			return res.Runs, res.NextPageToken != ""
		},
		func(a, b *carillonv1.Run) int { return cmp.Compare(b.Id, a.Id) })
	if err != nil {
		return nil, err
	}
	out := &carillonv1.ListRunsResponse{Runs: runs}
	if more {
		out.NextPageToken = strconv.FormatInt(runs[len(runs)-1].Id, 10)
	}
	return connect.NewResponse(out), nil
}

// perGroup calls next once per group with req narrowed to it (setGroup),
// merges the items in order (compare) and cuts them to one page; more says
// another page follows.
func perGroup[R any, Req interface {
	*R
	proto.Message
}, Res any, Item any](ctx context.Context, groups []int64, req Req, size32 int32, next connect.UnaryFunc,
	setGroup func(Req, int64), items func(Res) ([]Item, bool), compare func(a, b Item) int) (page []Item, more bool, err error) {
	size, err := pageSize(size32)
	if err != nil {
		return nil, false, err
	}
	for _, g := range groups {
		sub := proto.CloneOf(req)
		setGroup(sub, g)
		res, err := next(ctx, connect.NewRequest((*R)(sub)))
		if err != nil {
			return nil, false, err
		}
		got, m := items(res.Any().(Res))
		page = append(page, got...)
		more = more || m
	}
	slices.SortFunc(page, compare)
	if len(page) > size {
		page, more = page[:size], true
	}
	return page, more && len(page) > 0, nil
}
