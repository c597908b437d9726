package server

import (
	"cmp"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// The workflows of an Apply: planned after the jobs (their nodes name
// jobs), made after them, pruned before them (a job in a workflow cannot
// be deleted).

// workflowForm is the apply form of workflow w of group app, its nodes'
// jobs named by ref.
func workflowForm(w store.Workflow, app string, ref func(id int64) string) *carillonv1.ApplyWorkflow {
	p := workflowToProto(w)
	clearOutput(p, workflowOutputFields)
	p.GroupId = 0
	out := &carillonv1.ApplyWorkflow{Group: app, Workflow: p}
	for _, n := range p.Nodes {
		out.NodeJobs = append(out.NodeJobs, ref(n.JobId))
		n.JobId = 0
	}
	return out
}

// loadWorkflows reads the workflows of the groups the request names.
func (r *applyRun) loadWorkflows() error {
	r.workflows = map[string]map[string]store.Workflow{}
	for app := range r.jobs {
		g, ok := r.groups[app]
		if !ok {
			continue
		}
		ws, err := r.a.WorkflowsOf(g.ID)
		if err != nil {
			return err
		}
		r.workflows[app] = map[string]store.Workflow{}
		for _, w := range ws {
			r.workflows[app][w.Name] = w
		}
	}
	return nil
}

func (r *applyRun) planWorkflows() error {
	seen := map[string]bool{}
	for i, in := range r.req.Workflows {
		it, err := r.checkWorkflow(i, in)
		if err != nil {
			return err
		}
		key := it.want.Group + "/" + it.want.Workflow.Name
		if seen[key] {
			return invalid(it.field+".name", "workflow %q of group %q is listed twice", it.want.Workflow.Name, it.want.Group)
		}
		seen[key] = true
		cur, ok := r.workflows[it.want.Group][it.want.Workflow.Name]
		var curForm *carillonv1.ApplyWorkflow
		if ok {
			curForm = workflowForm(cur, it.want.Group, func(id int64) string { return r.ref(it.want.Group, id) })
		}
		it.change = r.change("workflow", key, cur.ID, curForm, it.want, "workflow.")
		if it.change.Action != carillonv1.ApplyAction_APPLY_ACTION_UNCHANGED {
			if err := r.checkWorkflowAccess(it, cur); err != nil {
				return err
			}
		}
		r.wfItems = append(r.wfItems, it)
	}
	return nil
}

// checkWorkflow checks workflow i of the request as CreateWorkflow does,
// its node jobs too, and returns its apply form with its defaults.
func (r *applyRun) checkWorkflow(i int, in *carillonv1.ApplyWorkflow) (applyItem[*carillonv1.ApplyWorkflow], error) {
	field := fmt.Sprintf("workflows[%d] (%s/%s)", i, in.GetGroup(), in.GetWorkflow().GetName())
	it := applyItem[*carillonv1.ApplyWorkflow]{field: field}
	want := proto.Clone(in).(*carillonv1.ApplyWorkflow)
	w := want.Workflow
	switch {
	case want.Group == "":
		return it, invalid(field+".group", "required: the app_name of the workflow's group")
	case r.wantGroup(want.Group) == nil:
		return it, invalid(field+".group", "no group %q: define it under groups or create it first", want.Group)
	case w.Id != 0 || w.GroupId != 0:
		return it, invalid(field+".id", "ids differ from admin to admin: name the group instead")
	case len(want.NodeJobs) != len(w.Nodes):
		return it, invalid(field+".node_jobs", "want one job for each of the %d nodes, got %d", len(w.Nodes), len(want.NodeJobs))
	}
	clearOutput(w, workflowOutputFields)
	check := proto.Clone(w).(*carillonv1.Workflow)
	check.GroupId = 1 // its group is checked above
	for k, n := range check.Nodes {
		if n.JobId != 0 {
			return it, invalid(fmt.Sprintf("%s.nodes[%d].job_id", field, k), "ids differ from admin to admin: name the node's job (job: NAME)")
		}
		n.JobId = 1 // its job is checked below
	}
	if err := renamed(checkWorkflowLimits(check), "workflow", field); err != nil {
		return it, err
	}
	if err := renamed(checkWorkflow(check), "workflow", field); err != nil {
		return it, err
	}
	check.GroupId = 0
	for _, n := range check.Nodes {
		n.JobId = 0
	}
	want.Workflow = check
	for k, ref := range want.NodeJobs {
		app, name := splitRef(want.Group, ref)
		if _, ok := r.jobs[app][name]; !ok && !r.wantJob(app, name) {
			return it, invalid(fmt.Sprintf("%s.nodes[%d].job", field, k), "no job %q in group %q: define it under jobs or create it first", name, app)
		}
		want.NodeJobs[k] = childRef(want.Group, app, name, 0)
	}
	it.want = want
	return it, nil
}

// checkWorkflowAccess requires the caller to operate the workflow's
// group and the groups of its nodes' jobs (as CreateWorkflow does), and an
// ADMIN or an allowed prefix for a new webhook.
func (r *applyRun) checkWorkflowAccess(it applyItem[*carillonv1.ApplyWorkflow], cur store.Workflow) error {
	return r.checkAccess(it.field, it.want.Group, it.want.NodeJobs, ".nodes[%d].job", it.want.Workflow.AlarmWebhookUrl, cur.AlarmWebhookURL)
}

// planPruneWorkflows plans, with req.Prune, the deletion of the stored
// workflows of the request's groups that it does not define.
func (r *applyRun) planPruneWorkflows() error {
	if !r.req.Prune {
		return nil
	}
	for _, it := range r.groupItems {
		g, ok := r.groups[it.want.AppName]
		if !ok {
			continue
		}
		for _, w := range r.workflows[g.AppName] {
			if r.wantWorkflow(g.AppName, w.Name) {
				continue
			}
			if err := writeGroup(r.p, it.field, g.ID); err != nil {
				return err
			}
			r.wfDeletes = append(r.wfDeletes, w)
		}
	}
	slices.SortFunc(r.wfDeletes, func(a, b store.Workflow) int { return cmp.Compare(a.ID, b.ID) })
	for _, w := range r.wfDeletes {
		r.changes = append(r.changes, &carillonv1.ApplyChange{Kind: "workflow", Name: r.groupApp[w.GroupID] + "/" + w.Name, Id: w.ID,
			Action: carillonv1.ApplyAction_APPLY_ACTION_DELETE})
	}
	return nil
}

// wantWorkflow reports whether the request defines workflow name of
// group app.
func (r *applyRun) wantWorkflow(app, name string) bool {
	for _, w := range r.req.Workflows {
		if w.GetGroup() == app && w.GetWorkflow().GetName() == name {
			return true
		}
	}
	return false
}

// storeWorkflow is the workflow of it as the store takes it, its group and
// node jobs resolved.
func (r *applyRun) storeWorkflow(it applyItem[*carillonv1.ApplyWorkflow]) store.Workflow {
	w := workflowFromProto(it.want.Workflow)
	w.GroupID = r.groups[it.want.Group].ID
	for k, ref := range it.want.NodeJobs {
		app, name := splitRef(it.want.Group, ref)
		w.Nodes[k].JobID = r.jobs[app][name].ID
	}
	return w
}

func workflowSpec(w store.Workflow) schedule.Spec {
	return schedule.Spec{Type: w.ScheduleType, Cron: w.Cron, IntervalSeconds: w.IntervalSeconds, TimeZone: w.TimeZone}
}

// makeWorkflows creates and updates the workflows, once their jobs exist.
func (r *applyRun) makeWorkflows() error {
	for _, it := range r.wfItems {
		if it.change.Action == carillonv1.ApplyAction_APPLY_ACTION_UNCHANGED {
			continue
		}
		w := r.storeWorkflow(it)
		for k, n := range w.Nodes {
			if n.Param != nil {
				j := r.jobByID[n.JobID]
				if err := checkParamTemplate(fmt.Sprintf("%s.nodes[%d].param", it.field, k), *n.Param, j.TimeZone, j.ParamTemplate); err != nil {
					return err
				}
			}
		}
		next, err := r.s.firstInstant(workflowSpec(w), r.a.Now(), "workflow")
		if err != nil {
			return renamed(err, "workflow", it.field)
		}
		if it.change.Action == carillonv1.ApplyAction_APPLY_ACTION_CREATE {
			if it.want.Workflow.Enabled {
				w.Enabled, w.NextFireAt = true, next
			}
			if w, err = r.a.CreateWorkflow(w); err != nil {
				return err
			}
			it.change.Id = w.ID
			continue
		}
		old := r.workflows[it.want.Group][w.Name]
		w.ID = old.ID
		if len(it.change.Fields) > 1 || it.change.Fields[0] != "enabled" {
			changed := workflowSpec(w) != workflowSpec(old)
			if changed && old.Enabled {
				w.NextFireAt = next
			}
			if _, err := r.a.UpdateWorkflow(w, changed); err != nil {
				return err
			}
		}
		if it.want.Workflow.Enabled != old.Enabled {
			if err := r.a.SetWorkflowEnabled(w.ID, it.want.Workflow.Enabled, next); err != nil {
				return err
			}
		}
	}
	return nil
}
