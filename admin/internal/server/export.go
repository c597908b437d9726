package server

import (
	"context"
	"fmt"
	"slices"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// exportPage is how many jobs or calendars Export reads at a time.
const exportPage = 500

// Export returns the groups the caller may read (or req.Group alone), their
// named jobs, their workflows and the calendars, in their apply form. Jobs without a name
// cannot be applied, and are left out.
func (s applyService) Export(ctx context.Context, req *carillonv1.ExportRequest) (*carillonv1.ExportResponse, error) {
	p := auth.FromContext(ctx)
	gs, err := s.cfg.Store.Groups.List(ctx)
	if err != nil {
		return nil, s.toConnect(err)
	}
	groupApp := map[int64]string{}
	for _, g := range gs {
		groupApp[g.ID] = g.AppName
	}
	if req.Group != "" {
		i := slices.IndexFunc(gs, func(g store.Group) bool { return g.AppName == req.Group })
		if i < 0 {
			return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("group: no group %q", req.Group))
		}
		if err := readGroup(p, "group", gs[i].ID); err != nil {
			return nil, err
		}
		gs = gs[i : i+1]
	}
	cals, err := s.allCalendars(ctx)
	if err != nil {
		return nil, err
	}
	calName := map[int64]string{}
	for _, c := range cals {
		calName[c.ID] = c.Name
	}
	res := &carillonv1.ExportResponse{}
	used := map[int64]bool{}
	for _, g := range gs {
		if !p.CanRead(g.ID) {
			continue
		}
		res.Groups = append(res.Groups, groupForm(g))
		js, err := s.groupJobs(ctx, g.ID)
		if err != nil {
			return nil, err
		}
		// A child or node job is most often of the same group, read
		// already; one of another group is read alone.
		byID := make(map[int64]store.Job, len(js))
		for _, j := range js {
			byID[j.ID] = j
		}
		ref := func(id int64) string {
			c, ok := byID[id]
			if !ok {
				var err error
				if c, err = s.cfg.Store.Jobs.Get(ctx, id); err != nil {
					return fmt.Sprintf("#%d", id)
				}
			}
			return childRef(g.AppName, groupApp[c.GroupID], c.Name, id)
		}
		for _, j := range js {
			if j.Name == "" {
				continue
			}
			res.Jobs = append(res.Jobs, jobForm(j, g.AppName, ref, calName))
			for _, id := range j.CalendarIDs {
				used[id] = true
			}
		}
		ws, err := readAll(func(after int64) ([]store.Workflow, error) {
			return s.cfg.Store.Workflows.List(ctx, store.WorkflowFilter{GroupID: g.ID, AfterID: after, Limit: exportPage})
		}, func(w store.Workflow) int64 { return w.ID })
		if err != nil {
			return nil, s.toConnect(err)
		}
		for _, w := range ws {
			res.Workflows = append(res.Workflows, workflowForm(w, g.AppName, ref))
		}
	}
	for _, c := range cals {
		if req.Group == "" || used[c.ID] {
			res.Calendars = append(res.Calendars, calendarForm(c))
		}
	}
	return res, nil
}

// allCalendars reads every calendar.
func (s applyService) allCalendars(ctx context.Context) ([]store.Calendar, error) {
	cs, err := readAll(func(after int64) ([]store.Calendar, error) { return s.cfg.Store.Calendars.List(ctx, after, exportPage) },
		func(c store.Calendar) int64 { return c.ID })
	return cs, s.toConnect(err)
}

// groupJobs reads every job of group id.
func (s applyService) groupJobs(ctx context.Context, id int64) ([]store.Job, error) {
	js, err := readAll(func(after int64) ([]store.Job, error) {
		return s.cfg.Store.Jobs.List(ctx, store.JobFilter{GroupID: id, AfterID: after, Limit: exportPage})
	}, func(j store.Job) int64 { return j.ID })
	return js, s.toConnect(err)
}

// readAll reads every page of exportPage items that next returns after
// the id of the previous page's last.
func readAll[T any](next func(after int64) ([]T, error), id func(T) int64) ([]T, error) {
	var out []T
	for after := int64(0); ; {
		items, err := next(after)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if len(items) < exportPage {
			return out, nil
		}
		after = id(items[len(items)-1])
	}
}
