package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// applyService implements carillonv1connect.ApplyServiceHandler.
type applyService struct{ *Server }

// applyAction is the audit log's name of the changes Apply makes.
const applyAction = "ApplyService.Apply"

// applyRun is one Apply in its transaction: what is stored, indexed by
// the names apply uses, and the plan as it is computed and made.
type applyRun struct {
	s   applyService
	ctx context.Context
	p   *auth.Principal
	a   *store.ApplyTx
	req *carillonv1.ApplyRequest

	groups    map[string]store.Group // by app name
	groupApp  map[int64]string
	calendars map[string]store.Calendar // by name
	calName   map[int64]string
	jobs      map[string]map[string]store.Job // by app name, then name
	jobByID   map[int64]store.Job
	workflows map[string]map[string]store.Workflow // by app name, then name

	calItems   []applyItem[*carillonv1.Calendar]
	groupItems []applyItem[*carillonv1.Group]
	jobItems   []applyItem[*carillonv1.ApplyJob]
	wfItems    []applyItem[*carillonv1.ApplyWorkflow]
	deletes    []store.Job
	wfDeletes  []store.Workflow
	changes    []*carillonv1.ApplyChange
}

// applyItem is one definition of the request with its plan.
type applyItem[T proto.Message] struct {
	field  string // how errors name it: "jobs[3] (app/name)"
	want   T      // its apply form, checked and with its defaults
	change *carillonv1.ApplyChange
}

// Apply computes the plan of req in one write transaction, checks the
// caller may make each change, and makes it unless req.DryRun.
func (s applyService) Apply(ctx context.Context, req *carillonv1.ApplyRequest) (*carillonv1.ApplyResponse, error) {
	r := &applyRun{s: s, ctx: ctx, p: auth.FromContext(ctx), req: req}
	var groupsCapped []int64
	err := s.cfg.Store.Apply(ctx, s.cfg.NowFunc(), func(a *store.ApplyTx) error {
		r.a = a
		if err := r.load(); err != nil {
			return err
		}
		if err := r.plan(); err != nil {
			return err
		}
		var err error
		if groupsCapped, err = r.make(); err != nil {
			return err
		}
		if req.DryRun {
			return store.ErrDryRun
		}
		return nil
	})
	if err != nil {
		var ce *connect.Error
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, s.toConnect(err)
	}
	res := &carillonv1.ApplyResponse{Changes: r.changes, Applied: !req.DryRun}
	if req.DryRun {
		for _, c := range res.Changes {
			if c.Action == carillonv1.ApplyAction_APPLY_ACTION_CREATE {
				c.Id = 0 // rolled back
			}
		}
		return res, nil
	}
	for _, id := range groupsCapped {
		// A cap raised or removed frees slots: the runs waiting for one
		// try again (as UpdateGroup).
		waiting, err := s.cfg.Store.Fires.Waiting(ctx, id, waitingRequeueMax)
		if err != nil {
			return nil, s.toConnect(err)
		}
		s.cfg.Trigger.Dispatcher.Requeue(waiting)
	}
	s.cfg.WakeFunc()
	return res, nil
}

// load reads the groups and calendars, and the jobs of the groups the
// request names.
func (r *applyRun) load() error {
	gs, err := r.a.Groups()
	if err != nil {
		return err
	}
	r.groups, r.groupApp = map[string]store.Group{}, map[int64]string{}
	for _, g := range gs {
		r.groups[g.AppName], r.groupApp[g.ID] = g, g.AppName
	}
	cs, err := r.a.Calendars()
	if err != nil {
		return err
	}
	r.calendars, r.calName = map[string]store.Calendar{}, map[int64]string{}
	for _, c := range cs {
		r.calendars[c.Name], r.calName[c.ID] = c, c.Name
	}
	r.jobs, r.jobByID = map[string]map[string]store.Job{}, map[int64]store.Job{}
	apps := []string{}
	for _, g := range r.req.Groups {
		apps = append(apps, g.GetAppName())
	}
	for _, j := range r.req.Jobs {
		apps = append(apps, j.GetGroup())
		for _, c := range j.GetChildJobs() {
			app, _ := splitRef(j.GetGroup(), c)
			apps = append(apps, app)
		}
	}
	for _, w := range r.req.Workflows {
		apps = append(apps, w.GetGroup())
		for _, ref := range w.GetNodeJobs() {
			app, _ := splitRef(w.GetGroup(), ref)
			apps = append(apps, app)
		}
	}
	for _, app := range apps {
		if err := r.loadJobs(app); err != nil {
			return err
		}
	}
	return r.loadWorkflows()
}

// loadJobs reads the jobs of group app, once.
func (r *applyRun) loadJobs(app string) error {
	g, ok := r.groups[app]
	if _, done := r.jobs[app]; done || !ok {
		return nil
	}
	js, err := r.a.JobsOf(g.ID)
	if err != nil {
		return err
	}
	r.jobs[app] = map[string]store.Job{}
	for _, j := range js {
		r.jobByID[j.ID] = j
		if j.Name != "" {
			r.jobs[app][j.Name] = j
		}
	}
	return nil
}

// ref names stored job id for a job of group app (childRef).
func (r *applyRun) ref(app string, id int64) string {
	j, ok := r.jobByID[id]
	if !ok {
		var err error
		if j, err = r.a.Job(id); err != nil {
			return fmt.Sprintf("#%d", id)
		}
		r.jobByID[id] = j
	}
	return childRef(app, r.groupApp[j.GroupID], j.Name, id)
}

// change records one item of the plan.
func (r *applyRun) change(kind, name string, id int64, cur, want proto.Message, trim string) *carillonv1.ApplyChange {
	c := &carillonv1.ApplyChange{Kind: kind, Name: name, Id: id}
	switch {
	case id == 0:
		c.Action = carillonv1.ApplyAction_APPLY_ACTION_CREATE
	default:
		for _, f := range diffFields(cur, want) {
			c.Fields = append(c.Fields, strings.TrimPrefix(f, trim))
		}
		c.Action = carillonv1.ApplyAction_APPLY_ACTION_UNCHANGED
		if len(c.Fields) > 0 {
			c.Action = carillonv1.ApplyAction_APPLY_ACTION_UPDATE
		}
	}
	r.changes = append(r.changes, c)
	return c
}

// adminChange refuses a change of a non-ADMIN to what only an ADMIN
// changes (groups, calendars).
func (r *applyRun) adminChange(field string, c *carillonv1.ApplyChange) error {
	if c.Action == carillonv1.ApplyAction_APPLY_ACTION_UNCHANGED || r.p.Admin() {
		return nil
	}
	return denied(field, "only an ADMIN may %s a %s", actionVerb(c.Action), c.Kind)
}

func actionVerb(a carillonv1.ApplyAction) string {
	return strings.ToLower(strings.TrimPrefix(a.String(), "APPLY_ACTION_"))
}

// audit records each change of the plan in the audit log, in the
// transaction.
func (r *applyRun) audit() error {
	for _, c := range r.changes {
		if c.Action == carillonv1.ApplyAction_APPLY_ACTION_UNCHANGED {
			continue
		}
		detail, err := json.Marshal(map[string]any{"action": actionVerb(c.Action), "name": c.Name, "fields": c.Fields})
		if err != nil {
			return err
		}
		e := store.AuditEntry{At: r.a.Now(), Action: applyAction, Target: fmt.Sprintf("%s %d", c.Kind, c.Id), Detail: string(detail)}
		if r.p != nil {
			e.UserID, e.Username = r.p.UserID, r.p.Username
		}
		if err := r.a.Audit(e); err != nil {
			return err
		}
	}
	return nil
}
