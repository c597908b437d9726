package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/workflow"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// workflowService implements carillonv1connect.WorkflowServiceHandler.
type workflowService struct{ *Server }

// workflowOutputFields cannot be set by CreateWorkflow or UpdateWorkflow;
// enabled changes through StartWorkflow and StopWorkflow.
var workflowOutputFields = []string{"id", "enabled", "last_fire_at", "next_fire_at", "created_at", "updated_at"}

// checkWorkflow validates a workflow from a request and fills its
// defaults: a schedule, strategies, and nodes that form a DAG (package
// workflow), each naming a job. That the jobs exist is checkNodeJobs'.
func checkWorkflow(w *carillonv1.Workflow) error {
	if w == nil {
		return invalid("workflow", "required")
	}
	if w.GroupId <= 0 {
		return invalid("workflow.group_id", "required: the id of the group the workflow belongs to")
	}
	if w.Name == "" {
		return invalid("workflow.name", "required")
	}
	if w.Schedule == nil || w.Schedule.Type == carillonv1.ScheduleType_SCHEDULE_TYPE_UNSPECIFIED {
		tz := w.GetSchedule().GetTimeZone()
		w.Schedule = &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE, TimeZone: tz}
	}
	if err := schedule.Check(specOf(w.Schedule)); err != nil {
		return invalidSchedule("workflow.schedule", err)
	}
	nodes := make([]workflow.Node, len(w.Nodes))
	for i, n := range w.Nodes {
		if n.JobId <= 0 {
			return invalid(fmt.Sprintf("workflow.nodes[%d].job_id", i), "node %q: required: the id of the job the node runs", n.Key)
		}
		nodes[i] = workflow.Node{Key: n.Key, DependsOn: n.DependsOn}
	}
	if err := workflow.Check(nodes); err != nil {
		var ne *workflow.NodeError
		if errors.As(err, &ne) {
			return invalid(fmt.Sprintf("workflow.nodes[%d].%s", ne.Index, ne.Field), "node %q: %v", ne.Key, ne.Err)
		}
		return invalid("workflow.nodes", "%v", err)
	}
	if err := checkAlarms("workflow", w.AlarmEmails, w.AlarmWebhookUrl); err != nil {
		return err
	}
	if w.MisfireStrategy == carillonv1.MisfireStrategy_MISFIRE_STRATEGY_UNSPECIFIED {
		w.MisfireStrategy = carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING
	}
	if w.BlockStrategy == carillonv1.BlockStrategy_BLOCK_STRATEGY_UNSPECIFIED {
		w.BlockStrategy = carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL
	}
	return nil
}

// checkNodeJobs requires every node's job to exist (invalid_argument
// naming the node), and a node's param override of a job whose param is a
// template to be one.
func (s workflowService) checkNodeJobs(ctx context.Context, w *carillonv1.Workflow) error {
	for i, n := range w.Nodes {
		j, err := s.cfg.Store.Jobs.Get(ctx, n.JobId)
		if errors.Is(err, store.ErrNotFound) {
			return invalid(fmt.Sprintf("workflow.nodes[%d].job_id", i), "node %q: job %d does not exist", n.Key, n.JobId)
		} else if err != nil {
			return s.toConnect(err)
		}
		if n.Param != nil {
			if err := checkParamTemplate(fmt.Sprintf("workflow.nodes[%d].param", i), *n.Param, j.TimeZone, j.ParamTemplate); err != nil {
				return err
			}
		}
	}
	return nil
}

// workflowAccess checks p's permission on the group of workflow id and,
// to write it, on every node's job (a MEMBER may change, start or trigger
// a workflow only if they may trigger each of its jobs). A workflow that
// does not exist is left to the handler (not_found).
func (s *Server) workflowAccess(ctx context.Context, p *auth.Principal, field string, id int64, write bool) error {
	if id <= 0 || p.Admin() || (!write && p.Role == auth.RoleViewer) {
		return nil
	}
	w, err := s.cfg.Store.Workflows.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return s.toConnect(err)
	}
	if !write {
		return readGroup(p, field, w.GroupID)
	}
	if err := writeGroup(p, field, w.GroupID); err != nil {
		return err
	}
	return s.writeNodeJobs(ctx, p, w.Nodes, field)
}

// writeNodeJobs requires p to operate the group of every node's job.
func (s *Server) writeNodeJobs(ctx context.Context, p *auth.Principal, nodes []store.WorkflowNode, field string) error {
	for i, n := range nodes {
		if err := s.jobAccess(ctx, p, fmt.Sprintf("%s: nodes[%d] (%q).job_id", field, i, n.Key), n.JobID, true); err != nil {
			return err
		}
	}
	return nil
}

// workflowRunAccess checks p's permission on workflow run id's workflow.
func (s *Server) workflowRunAccess(ctx context.Context, p *auth.Principal, field string, id int64, write bool) error {
	if id <= 0 || p.Admin() || (!write && p.Role == auth.RoleViewer) {
		return nil
	}
	wr, err := s.cfg.Store.Workflows.Run(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return s.toConnect(err)
	}
	return s.workflowAccess(ctx, p, field, wr.WorkflowID, write)
}

// nodesOfProto are the nodes of w as the store keeps them.
func nodesOfProto(ns []*carillonv1.WorkflowNode) []store.WorkflowNode {
	out := make([]store.WorkflowNode, len(ns))
	for i, n := range ns {
		out[i] = store.WorkflowNode{Key: n.Key, JobID: n.JobId, DependsOn: n.DependsOn, Param: n.Param}
	}
	return out
}

func workflowFromProto(w *carillonv1.Workflow) store.Workflow {
	sc := w.GetSchedule()
	return store.Workflow{
		ID: w.Id, GroupID: w.GroupId, Name: w.Name, Description: w.Description, ScheduleType: sc.GetType(), Cron: sc.GetCron(),
		IntervalSeconds: sc.GetIntervalSeconds(), TimeZone: sc.GetTimeZone(), MisfireStrategy: w.MisfireStrategy,
		BlockStrategy: w.BlockStrategy, Enabled: w.Enabled, Nodes: nodesOfProto(w.Nodes),
		AlarmEmails: w.AlarmEmails, AlarmWebhookURL: w.AlarmWebhookUrl,
	}
}

func workflowToProto(w store.Workflow) *carillonv1.Workflow {
	out := &carillonv1.Workflow{
		Id: w.ID, GroupId: w.GroupID, Name: w.Name, Description: w.Description,
		Schedule: &carillonv1.Schedule{Type: w.ScheduleType, Cron: w.Cron, IntervalSeconds: w.IntervalSeconds, TimeZone: w.TimeZone},
		Enabled:  w.Enabled, MisfireStrategy: w.MisfireStrategy, BlockStrategy: w.BlockStrategy,
		LastFireAt: ts(w.LastFireAt), NextFireAt: ts(w.NextFireAt), CreatedAt: ts(w.CreatedAt), UpdatedAt: ts(w.UpdatedAt),
		AlarmEmails: w.AlarmEmails, AlarmWebhookUrl: w.AlarmWebhookURL,
	}
	for _, n := range w.Nodes {
		out.Nodes = append(out.Nodes, &carillonv1.WorkflowNode{Key: n.Key, JobId: n.JobID, DependsOn: n.DependsOn, Param: n.Param})
	}
	return out
}

func workflowRunToProto(wr store.WorkflowRun) *carillonv1.WorkflowRun {
	out := &carillonv1.WorkflowRun{
		Id: wr.ID, WorkflowId: wr.WorkflowID, Status: wr.Status, ScheduledAt: ts(wr.ScheduledAt), TriggerType: wr.TriggerType,
		Param: wr.Param, Message: wr.Message, CreatedAt: ts(wr.CreatedAt), StartedAt: ts(wr.StartedAt), FinishedAt: ts(wr.FinishedAt),
		Attempt: wr.Attempt, AlarmStatus: wr.AlarmStatus, AlarmMessage: wr.AlarmMessage,
	}
	for _, n := range wr.Nodes {
		out.Nodes = append(out.Nodes, &carillonv1.WorkflowNodeRun{
			Key: n.Key, RunId: n.RunID, Status: n.Status, JobId: n.JobID, DependsOn: n.DependsOn, Message: n.Message,
			Attempt: n.Attempt, StartedAt: ts(n.StartedAt), FinishedAt: ts(n.FinishedAt),
		})
	}
	return out
}

func (s workflowService) CreateWorkflow(ctx context.Context, req *carillonv1.CreateWorkflowRequest) (*carillonv1.CreateWorkflowResponse, error) {
	if err := checkWorkflow(req.Workflow); err != nil {
		return nil, err
	}
	if err := s.checkNodeJobs(ctx, req.Workflow); err != nil {
		return nil, err
	}
	if err := s.checkWebhook(ctx, "workflow.alarm_webhook_url", req.Workflow.AlarmWebhookUrl, ""); err != nil {
		return nil, err
	}
	now := s.cfg.NowFunc()
	w := workflowFromProto(req.Workflow)
	w.ID = 0
	next, err := s.firstInstant(schedule.Spec{Type: w.ScheduleType, Cron: w.Cron, IntervalSeconds: w.IntervalSeconds, TimeZone: w.TimeZone}, now, "workflow")
	if err != nil {
		return nil, err
	}
	if req.Workflow.Enabled {
		w.Enabled, w.NextFireAt = true, next
	}
	if w, err = s.cfg.Store.Workflows.Create(ctx, w, now); err != nil {
		return nil, s.toConnect(err)
	}
	s.cfg.WakeFunc()
	return &carillonv1.CreateWorkflowResponse{Workflow: workflowToProto(w)}, nil
}

func (s workflowService) GetWorkflow(ctx context.Context, req *carillonv1.GetWorkflowRequest) (*carillonv1.GetWorkflowResponse, error) {
	w, err := s.cfg.Store.Workflows.Get(ctx, req.Id)
	if err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.GetWorkflowResponse{Workflow: workflowToProto(w)}, nil
}

func (s workflowService) ListWorkflows(ctx context.Context, req *carillonv1.ListWorkflowsRequest) (*carillonv1.ListWorkflowsResponse, error) {
	size, after, err := paging(req.PageSize, req.PageToken)
	if err != nil {
		return nil, err
	}
	ws, err := s.cfg.Store.Workflows.List(ctx, store.WorkflowFilter{GroupID: req.GroupId, AfterID: after, Limit: size + 1})
	if err != nil {
		return nil, s.toConnect(err)
	}
	res := &carillonv1.ListWorkflowsResponse{}
	res.Workflows, res.NextPageToken = page(ws, size, workflowToProto, func(w store.Workflow) int64 { return w.ID })
	return res, nil
}

func (s workflowService) UpdateWorkflow(ctx context.Context, req *carillonv1.UpdateWorkflowRequest) (*carillonv1.UpdateWorkflowResponse, error) {
	if req.Workflow == nil {
		return nil, invalid("workflow", "required")
	}
	old, err := s.cfg.Store.Workflows.Get(ctx, req.Workflow.Id)
	if err != nil {
		return nil, s.toConnect(err)
	}
	merged := workflowToProto(old)
	if err := applyMask(merged, req.Workflow, req.UpdateMask, "workflow", workflowOutputFields); err != nil {
		return nil, err
	}
	if err := checkWorkflow(merged); err != nil {
		return nil, err
	}
	if err := s.checkNodeJobs(ctx, merged); err != nil {
		return nil, err
	}
	if err := s.checkWebhook(ctx, "workflow.alarm_webhook_url", merged.AlarmWebhookUrl, old.AlarmWebhookURL); err != nil {
		return nil, err
	}
	now := s.cfg.NowFunc()
	w := workflowFromProto(merged)
	spec := func(w store.Workflow) schedule.Spec {
		return schedule.Spec{Type: w.ScheduleType, Cron: w.Cron, IntervalSeconds: w.IntervalSeconds, TimeZone: w.TimeZone}
	}
	changed := spec(w) != spec(old)
	if changed {
		next, err := s.firstInstant(spec(w), now, "workflow")
		if err != nil {
			return nil, err
		}
		if old.Enabled {
			w.NextFireAt = next
		}
	}
	if w, err = s.cfg.Store.Workflows.Update(ctx, w, changed, now); err != nil {
		return nil, s.toConnect(err)
	}
	s.cfg.WakeFunc()
	return &carillonv1.UpdateWorkflowResponse{Workflow: workflowToProto(w)}, nil
}

func (s workflowService) DeleteWorkflow(ctx context.Context, req *carillonv1.DeleteWorkflowRequest) (*carillonv1.DeleteWorkflowResponse, error) {
	if err := s.cfg.Store.Workflows.Delete(ctx, req.Id); err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.DeleteWorkflowResponse{}, nil
}

func (s workflowService) StartWorkflow(ctx context.Context, req *carillonv1.StartWorkflowRequest) (*carillonv1.StartWorkflowResponse, error) {
	w, err := s.cfg.Store.Workflows.Get(ctx, req.Id)
	if err != nil {
		return nil, s.toConnect(err)
	}
	if !w.Enabled {
		now := s.cfg.NowFunc()
		next, err := s.firstInstant(schedule.Spec{Type: w.ScheduleType, Cron: w.Cron, IntervalSeconds: w.IntervalSeconds, TimeZone: w.TimeZone}, now, "workflow")
		if err != nil {
			return nil, err
		}
		if w, err = s.cfg.Store.Workflows.Start(ctx, req.Id, next, now); err != nil {
			return nil, s.toConnect(err)
		}
		s.cfg.WakeFunc()
	}
	return &carillonv1.StartWorkflowResponse{Workflow: workflowToProto(w)}, nil
}

func (s workflowService) StopWorkflow(ctx context.Context, req *carillonv1.StopWorkflowRequest) (*carillonv1.StopWorkflowResponse, error) {
	w, err := s.cfg.Store.Workflows.Stop(ctx, req.Id, s.cfg.NowFunc())
	if err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.StopWorkflowResponse{Workflow: workflowToProto(w)}, nil
}

func (s workflowService) TriggerWorkflow(ctx context.Context, req *carillonv1.TriggerWorkflowRequest) (*carillonv1.TriggerWorkflowResponse, error) {
	tt := carillonv1.TriggerType_TRIGGER_TYPE_MANUAL
	if p := auth.FromContext(ctx); p != nil && p.Credential == auth.CredentialAPIToken {
		tt = carillonv1.TriggerType_TRIGGER_TYPE_API // a program's call, not a person's
	}
	w, err := s.cfg.Store.Workflows.Get(ctx, req.WorkflowId)
	if err != nil {
		return nil, s.toConnect(err)
	}
	if err := s.refusePaused(ctx, w.GroupID, fmt.Sprintf("workflow %d", w.ID)); err != nil {
		return nil, err
	}
	ch, err := s.cfg.Store.Workflows.Trigger(ctx, req.WorkflowId, tt, req.Param, s.cfg.NowFunc())
	if err != nil {
		return nil, s.toConnect(err)
	}
	if err := s.cfg.Trigger.Carry(ctx, ch, "killed: its workflow run was covered by a later one (COVER_EARLY)"); err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.TriggerWorkflowResponse{WorkflowRunId: ch.WorkflowRunID}, nil
}

// BackfillWorkflow makes a workflow run for every instant the workflow's
// schedule has in [from, to), or, with dry_run, lists them.
func (s workflowService) BackfillWorkflow(ctx context.Context, req *carillonv1.BackfillWorkflowRequest) (*carillonv1.BackfillWorkflowResponse, error) {
	from, to, err := backfillRange(req.From, req.To)
	if err != nil {
		return nil, err
	}
	w, err := s.cfg.Store.Workflows.Get(ctx, req.WorkflowId)
	if err != nil {
		return nil, s.toConnect(err)
	}
	instants, err := backfillInstants(schedule.SpecOfWorkflow(w), from, to, "workflow_id", fmt.Sprintf("workflow %d", w.ID))
	if err != nil {
		return nil, err
	}
	res := &carillonv1.BackfillWorkflowResponse{Instants: timestamps(instants)}
	if req.DryRun || len(instants) == 0 {
		return res, nil
	}
	ch, ids, err := s.cfg.Store.Workflows.Backfill(ctx, w.ID, instants, s.cfg.NowFunc())
	if err != nil {
		return nil, s.toConnect(err)
	}
	if err := s.cfg.Trigger.Carry(ctx, ch, "killed: its workflow run was covered by a later one (COVER_EARLY)"); err != nil {
		return nil, s.toConnect(err)
	}
	res.WorkflowRunIds = ids
	return res, nil
}

func (s workflowService) GetWorkflowRun(ctx context.Context, req *carillonv1.GetWorkflowRunRequest) (*carillonv1.GetWorkflowRunResponse, error) {
	wr, err := s.cfg.Store.Workflows.Run(ctx, req.WorkflowRunId)
	if err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.GetWorkflowRunResponse{WorkflowRun: workflowRunToProto(wr)}, nil
}

func (s workflowService) ListWorkflowRuns(ctx context.Context, req *carillonv1.ListWorkflowRunsRequest) (*carillonv1.ListWorkflowRunsResponse, error) {
	size, before, err := paging(req.PageSize, req.PageToken)
	if err != nil {
		return nil, err
	}
	f := store.WorkflowRunFilter{WorkflowID: req.WorkflowId, Status: req.Status, BeforeID: before, Limit: size + 1}
	if all, groups := auth.FromContext(ctx).ReadScope(); !all && req.WorkflowId == 0 {
		f.GroupIDs = append([]int64{}, groups...) // a MEMBER sees their groups' workflows' runs
	}
	wrs, err := s.cfg.Store.Workflows.Runs(ctx, f)
	if err != nil {
		return nil, s.toConnect(err)
	}
	res := &carillonv1.ListWorkflowRunsResponse{}
	res.WorkflowRuns, res.NextPageToken = page(wrs, size, workflowRunToProto, func(wr store.WorkflowRun) int64 { return wr.ID })
	return res, nil
}

func (s workflowService) RetryWorkflowRun(ctx context.Context, req *carillonv1.RetryWorkflowRunRequest) (*carillonv1.RetryWorkflowRunResponse, error) {
	wr, err := s.changeRun(ctx, req.WorkflowRunId, s.cfg.Store.Workflows.RetryRun)
	if err != nil {
		return nil, err
	}
	return &carillonv1.RetryWorkflowRunResponse{WorkflowRun: wr}, nil
}

func (s workflowService) CancelWorkflowRun(ctx context.Context, req *carillonv1.CancelWorkflowRunRequest) (*carillonv1.CancelWorkflowRunResponse, error) {
	wr, err := s.changeRun(ctx, req.WorkflowRunId, s.cfg.Store.Workflows.CancelRun)
	if err != nil {
		return nil, err
	}
	return &carillonv1.CancelWorkflowRunResponse{WorkflowRun: wr}, nil
}

// changeRun applies change to workflow run id, hands on what it made
// (Trigger.Carry) and returns the workflow run as it is then.
func (s workflowService) changeRun(ctx context.Context, id int64,
	change func(ctx context.Context, id int64, now time.Time) (store.WorkflowChange, error),
) (*carillonv1.WorkflowRun, error) {
	ch, err := change(ctx, id, s.cfg.NowFunc())
	if err != nil {
		return nil, s.toConnect(err)
	}
	if err := s.cfg.Trigger.Carry(ctx, ch, fmt.Sprintf("killed: workflow run %d was cancelled", id)); err != nil {
		return nil, s.toConnect(err)
	}
	wr, err := s.cfg.Store.Workflows.Run(ctx, id)
	if err != nil {
		return nil, s.toConnect(err)
	}
	return workflowRunToProto(wr), nil
}

// workflowNodesChanged says whether a request's mask changes the nodes.
func workflowNodesChanged(paths []string) bool {
	return len(paths) == 0 || slices.Contains(paths, "nodes")
}

// checkWorkflowLimits checks a workflow's texts for characters they may
// not hold before anything reads it (the .proto's rules bound their
// lengths and counts); checkWorkflow checks the rest.
func checkWorkflowLimits(w *carillonv1.Workflow) error {
	if w == nil {
		return nil // the handler says it is required
	}
	if err := checkName("workflow.name", w.Name); err != nil {
		return err
	}
	if err := checkProse("workflow.description", w.Description); err != nil {
		return err
	}
	for i, n := range w.Nodes {
		if err := checkContent(fmt.Sprintf("workflow.nodes[%d].param", i), n.GetParam()); err != nil {
			return err
		}
	}
	return nil
}

// scopeListWorkflows lists the workflows of p's groups, by id.
func scopeListWorkflows(ctx context.Context, p *auth.Principal, req connect.AnyRequest, next connect.UnaryFunc) (connect.AnyResponse, error) {
	r := req.Any().(*carillonv1.ListWorkflowsRequest)
	all, groups := p.ReadScope()
	if all || r.GroupId != 0 { // a named group was checked by the row's check
		return next(ctx, req)
	}
	ws, more, err := perGroup(ctx, groups, r, r.PageSize, next,
		func(sub *carillonv1.ListWorkflowsRequest, g int64) { sub.GroupId = g },
		func(res *carillonv1.ListWorkflowsResponse) ([]*carillonv1.Workflow, bool) {
			return res.Workflows, res.NextPageToken != ""
		},
		func(a, b *carillonv1.Workflow) int { return cmp.Compare(a.Id, b.Id) })
	if err != nil {
		return nil, err
	}
	out := &carillonv1.ListWorkflowsResponse{Workflows: ws}
	if more {
		out.NextPageToken = strconv.FormatInt(ws[len(ws)-1].Id, 10)
	}
	return connect.NewResponse(out), nil
}
