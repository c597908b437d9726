package server

import (
	"context"
	"slices"
	"time"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// groupService implements carillonv1connect.GroupServiceHandler.
type groupService struct{ *Server }

// checkGroup validates a group from a request and fills its defaults.
func checkGroup(g *carillonv1.Group) error {
	if g == nil {
		return invalid("group", "required")
	}
	if g.AppName == "" {
		return invalid("group.app_name", "required: the app name its executors register under")
	}
	if g.Title == "" {
		g.Title = g.AppName
	}
	if g.ExecutorProtocol == carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_UNSPECIFIED {
		g.ExecutorProtocol = carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_CARILLON
	}
	if g.AddressMode == carillonv1.AddressMode_ADDRESS_MODE_UNSPECIFIED {
		g.AddressMode = carillonv1.AddressMode_ADDRESS_MODE_AUTO
	}
	if g.AddressMode == carillonv1.AddressMode_ADDRESS_MODE_AUTO {
		g.Addresses = nil // AUTO addresses are an output
		return nil
	}
	if len(g.Addresses) == 0 {
		return invalid("group.addresses", "a MANUAL group needs at least one executor URL")
	}
	for _, a := range g.Addresses {
		if err := checkURL("group.addresses", a); err != nil {
			return err
		}
	}
	slices.Sort(g.Addresses)
	g.Addresses = slices.Compact(g.Addresses)
	return nil
}

func groupFromProto(g *carillonv1.Group) store.Group {
	return store.Group{ID: g.Id, AppName: g.AppName, Title: g.Title, AddressMode: g.AddressMode, Addresses: g.Addresses,
		ExecutorProtocol: g.ExecutorProtocol, AllowScripts: g.AllowScripts, MaxConcurrency: g.MaxConcurrency}
}

// toProto returns g with its executor addresses: the live ones for AUTO.
func (s groupService) toProto(ctx context.Context, g store.Group) (*carillonv1.Group, error) {
	addrs, err := s.cfg.Trigger.Dispatcher.Executors(ctx, g)
	if err != nil {
		return nil, s.toConnect(err)
	}
	p := groupToProto(g, addrs)
	if g.AddressMode != carillonv1.AddressMode_ADDRESS_MODE_MANUAL && len(addrs) > 0 {
		beats, err := s.cfg.Store.Registry.Beats(ctx, g.AppName, time.Time{})
		if err != nil {
			return nil, s.toConnect(err)
		}
		for _, a := range addrs {
			p.LiveExecutors = append(p.LiveExecutors, &carillonv1.LiveExecutor{Address: a, LastBeat: ts(beats[a])})
		}
	}
	return p, nil
}

func (s groupService) CreateGroup(ctx context.Context, req *carillonv1.CreateGroupRequest) (*carillonv1.CreateGroupResponse, error) {
	if err := checkGroup(req.Group); err != nil {
		return nil, err
	}
	g, err := s.cfg.Store.Groups.Create(ctx, groupFromProto(req.Group), s.cfg.NowFunc())
	if err != nil {
		return nil, s.toConnect(err)
	}
	p, err := s.toProto(ctx, g)
	return &carillonv1.CreateGroupResponse{Group: p}, err
}

func (s groupService) GetGroup(ctx context.Context, req *carillonv1.GetGroupRequest) (*carillonv1.GetGroupResponse, error) {
	g, err := s.cfg.Store.Groups.Get(ctx, req.Id)
	if err != nil {
		return nil, s.toConnect(err)
	}
	p, err := s.toProto(ctx, g)
	return &carillonv1.GetGroupResponse{Group: p}, err
}

func (s groupService) ListGroups(ctx context.Context, _ *carillonv1.ListGroupsRequest) (*carillonv1.ListGroupsResponse, error) {
	gs, err := s.cfg.Store.Groups.List(ctx)
	if err != nil {
		return nil, s.toConnect(err)
	}
	res := &carillonv1.ListGroupsResponse{Groups: make([]*carillonv1.Group, len(gs))}
	for i, g := range gs {
		if res.Groups[i], err = s.toProto(ctx, g); err != nil {
			return nil, err
		}
	}
	if res.UnclaimedAppNames, err = s.cfg.Store.Registry.UnclaimedApps(ctx, s.cfg.NowFunc().Add(-s.cfg.ExecutorTTL)); err != nil {
		return nil, s.toConnect(err)
	}
	return res, nil
}

// waitingRequeueMax bounds the runs waiting for a concurrency slot that a
// change of their group's cap hands to the scheduler again; the others
// follow as runs of the group settle.
const waitingRequeueMax = 10_000

func (s groupService) UpdateGroup(ctx context.Context, req *carillonv1.UpdateGroupRequest) (*carillonv1.UpdateGroupResponse, error) {
	if req.Group == nil {
		return nil, invalid("group", "required")
	}
	old, err := s.cfg.Store.Groups.Get(ctx, req.Group.Id)
	if err != nil {
		return nil, s.toConnect(err)
	}
	merged := groupToProto(old, old.Addresses)
	if err := applyMask(merged, req.Group, req.UpdateMask, "group", groupOutputFields); err != nil {
		return nil, err
	}
	if err := checkGroup(merged); err != nil {
		return nil, err
	}
	g, err := s.cfg.Store.Groups.Update(ctx, groupFromProto(merged), s.cfg.NowFunc())
	if err != nil {
		return nil, s.toConnect(err)
	}
	if g.MaxConcurrency != old.MaxConcurrency {
		// A cap raised or removed frees slots: the runs waiting for one
		// try again.
		waiting, err := s.cfg.Store.Fires.Waiting(ctx, g.ID, waitingRequeueMax)
		if err != nil {
			return nil, s.toConnect(err)
		}
		s.cfg.Trigger.Dispatcher.Requeue(waiting)
	}
	if g.AppName != old.AppName {
		if err := s.loadGroupTokens(ctx); err != nil { // the group's token goes with its app name
			return nil, err
		}
	}
	p, err := s.toProto(ctx, g)
	return &carillonv1.UpdateGroupResponse{Group: p}, err
}

func (s groupService) DeleteGroup(ctx context.Context, req *carillonv1.DeleteGroupRequest) (*carillonv1.DeleteGroupResponse, error) {
	if err := s.cfg.Store.Groups.Delete(ctx, req.Id); err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.DeleteGroupResponse{}, s.loadGroupTokens(ctx)
}

func (s groupService) RotateGroupToken(ctx context.Context, req *carillonv1.RotateGroupTokenRequest) (*carillonv1.RotateGroupTokenResponse, error) {
	token := auth.NewExecutorToken()
	if err := s.cfg.Store.Groups.SetToken(ctx, req.Id, token, s.cfg.NowFunc()); err != nil {
		return nil, s.toConnect(err)
	}
	if err := s.loadGroupTokens(ctx); err != nil {
		return nil, err
	}
	return &carillonv1.RotateGroupTokenResponse{Token: token}, nil
}

func (s groupService) ClearGroupToken(ctx context.Context, req *carillonv1.ClearGroupTokenRequest) (*carillonv1.ClearGroupTokenResponse, error) {
	if err := s.cfg.Store.Groups.SetToken(ctx, req.Id, "", s.cfg.NowFunc()); err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.ClearGroupTokenResponse{}, s.loadGroupTokens(ctx)
}

// groupOutputFields cannot be set by UpdateGroup.
var groupOutputFields = []string{"id", "updated_at", "has_own_token", "live_executors", "paused"}
