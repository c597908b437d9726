package server

import (
	"context"

	"github.com/carillonhq/carillon/admin/internal/auth"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// rpc is one procedure's row in rpcs: everything the server checks before
// and around its handler.
type rpc struct {
	// access is who may call it at all (access.go).
	access access
	// audit writes a successful call to the audit log (audit.go).
	audit bool
	// validate checks what the request's buf.validate rules (shape.go),
	// checked before it, cannot say: control characters, an id that an
	// update requires, one field against another; bad input is
	// invalid_argument naming the field and the rule, and changes nothing.
	// Nil: nothing more to check.
	validate func(req any) error
	// handShape: validate alone checks the request, not its buf.validate
	// rules (for the executors' hot path, where it costs less).
	handShape bool
	// name renames the path of a field of req that broke a buf.validate
	// rule ("jobs[3].handler"), for the caller's words
	// ("jobs[3] (source id 12).handler"). Nil: the path as it is.
	name func(req any, field string) string
	// check applies group permissions once the role class passed. Nil:
	// none apply.
	check func(ctx context.Context, s *Server, p *auth.Principal, req any) error
	// scope narrows a List's results to the caller's groups (scope.go).
	// Nil: the call shows nothing outside what check allowed.
	scope scopeFunc
}

// rule is a row written with its request type, so that its functions
// take the request as it is; row makes it an rpc.
type rule[Req any] struct {
	access    access
	audit     bool
	validate  func(r *Req) error
	handShape bool
	name      func(r *Req, field string) string
	check     func(ctx context.Context, s *Server, p *auth.Principal, r *Req) error
	scope     scopeFunc
}

func (r rule[Req]) row() rpc {
	out := rpc{access: r.access, audit: r.audit, scope: r.scope, handShape: r.handShape}
	if v := r.validate; v != nil {
		out.validate = func(req any) error { return v(req.(*Req)) }
	}
	if n := r.name; n != nil {
		out.name = func(req any, field string) string { return n(req.(*Req), field) }
	}
	if c := r.check; c != nil {
		out.check = func(ctx context.Context, s *Server, p *auth.Principal, req any) error {
			return c(ctx, s, p, req.(*Req))
		}
	}
	return out
}

// nameFor returns the renaming of r.name for req, or nil.
func (r rpc) nameFor(req any) func(field string) string {
	if r.name == nil {
		return nil
	}
	return func(field string) string { return r.name(req, field) }
}

// rpcs has one row per RPC of every Carillon service: its access rule,
// validation, group check, scope and audit. Adding an RPC is adding its
// row. A management procedure missing here is refused (fail closed), and a
// test requires every RPC to be listed.
var rpcs = map[string]rpc{
	carillonv1connect.GroupServiceCreateGroupProcedure: rule[carillonv1.CreateGroupRequest]{access: accessAdmin, audit: true,
		validate: func(r *carillonv1.CreateGroupRequest) error {
			return checkGroupText(r.Group)
		},
	}.row(),
	carillonv1connect.GroupServiceGetGroupProcedure: rule[carillonv1.GetGroupRequest]{access: accessRead,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.GetGroupRequest) error {
			return readGroup(p, "id", r.Id)

		},
	}.row(),
	carillonv1connect.GroupServiceListGroupsProcedure: rule[carillonv1.ListGroupsRequest]{access: accessRead,
		scope: scopeListGroups,
	}.row(),
	carillonv1connect.GroupServiceUpdateGroupProcedure: rule[carillonv1.UpdateGroupRequest]{access: accessAdmin, audit: true,
		validate: func(r *carillonv1.UpdateGroupRequest) error {
			if err := positiveID("group.id", r.GetGroup().GetId()); err != nil {
				return err
			}
			return checkGroupText(r.Group)
		},
	}.row(),
	carillonv1connect.GroupServiceDeleteGroupProcedure:      rule[carillonv1.DeleteGroupRequest]{access: accessAdmin, audit: true}.row(),
	carillonv1connect.GroupServiceRotateGroupTokenProcedure: rule[carillonv1.RotateGroupTokenRequest]{access: accessAdmin, audit: true}.row(),
	carillonv1connect.GroupServiceClearGroupTokenProcedure:  rule[carillonv1.ClearGroupTokenRequest]{access: accessAdmin, audit: true}.row(),
	// Pausing is a MEMBER's too, for the groups they change jobs of.
	carillonv1connect.GroupServicePauseGroupProcedure: rule[carillonv1.PauseGroupRequest]{access: accessWrite, audit: true,
		check: func(_ context.Context, _ *Server, p *auth.Principal, r *carillonv1.PauseGroupRequest) error {
			return writeGroup(p, "id", r.Id)
		},
	}.row(),
	carillonv1connect.GroupServiceResumeGroupProcedure: rule[carillonv1.ResumeGroupRequest]{access: accessWrite, audit: true,
		check: func(_ context.Context, _ *Server, p *auth.Principal, r *carillonv1.ResumeGroupRequest) error {
			return writeGroup(p, "id", r.Id)
		},
	}.row(),
	carillonv1connect.JobServiceCreateJobProcedure: rule[carillonv1.CreateJobRequest]{access: accessWrite, audit: true,
		validate: func(r *carillonv1.CreateJobRequest) error {
			return checkJobText(r.Job)
		},
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.CreateJobRequest) error {
			j := r.GetJob()
			if err := writeGroup(p, "job.group_id", j.GetGroupId()); err != nil {
				return err
			}
			return s.writeChildren(ctx, p, j.GetChildJobIds())

		},
	}.row(),
	carillonv1connect.JobServiceImportJobsProcedure: rule[carillonv1.ImportJobsRequest]{access: accessAdmin, audit: true,
		validate: checkImportLimits, name: importName,
	}.row(),
	carillonv1connect.JobServiceGetJobProcedure: rule[carillonv1.GetJobRequest]{access: accessRead,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.GetJobRequest) error {
			return s.jobAccess(ctx, p, "id", r.Id, false)

		},
	}.row(),
	carillonv1connect.JobServiceListJobsProcedure: rule[carillonv1.ListJobsRequest]{access: accessRead,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.ListJobsRequest) error {
			return readGroup(p, "group_id", r.GroupId) // otherwise scoped

		},
		scope: scopeListJobs,
	}.row(),
	carillonv1connect.JobServiceUpdateJobProcedure: rule[carillonv1.UpdateJobRequest]{access: accessWrite, audit: true,
		validate: func(r *carillonv1.UpdateJobRequest) error {
			if err := positiveID("job.id", r.GetJob().GetId()); err != nil {
				return err
			}
			return checkJobText(r.Job)
		},
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.UpdateJobRequest) error {
			if err := s.jobAccess(ctx, p, "job.id", r.GetJob().GetId(), true); err != nil {
				return err
			}
			paths := r.GetUpdateMask().GetPaths()
			masked := func(name string) bool { return len(paths) == 0 || containsString(paths, name) }
			if masked("group_id") {
				if err := writeGroup(p, "job.group_id", r.GetJob().GetGroupId()); err != nil {
					return err
				}
			}
			if masked("child_job_ids") {
				return s.writeChildren(ctx, p, r.GetJob().GetChildJobIds())
			}
			return nil

		},
	}.row(),
	carillonv1connect.JobServiceDeleteJobProcedure: rule[carillonv1.DeleteJobRequest]{access: accessWrite, audit: true,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.DeleteJobRequest) error {
			return s.jobAccess(ctx, p, "id", r.Id, true)

		},
	}.row(),
	carillonv1connect.JobServiceStartJobProcedure: rule[carillonv1.StartJobRequest]{access: accessWrite, audit: true,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.StartJobRequest) error {
			return s.jobAccess(ctx, p, "id", r.Id, true)

		},
	}.row(),
	carillonv1connect.JobServiceStopJobProcedure: rule[carillonv1.StopJobRequest]{access: accessWrite, audit: true,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.StopJobRequest) error {
			return s.jobAccess(ctx, p, "id", r.Id, true)

		},
	}.row(),
	carillonv1connect.JobServiceStartJobsProcedure: rule[carillonv1.StartJobsRequest]{access: accessWrite, audit: true,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.StartJobsRequest) error {
			return s.jobsAccess(ctx, p, r.Ids)
		},
	}.row(),
	carillonv1connect.JobServiceStopJobsProcedure: rule[carillonv1.StopJobsRequest]{access: accessWrite, audit: true,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.StopJobsRequest) error {
			return s.jobsAccess(ctx, p, r.Ids)
		},
	}.row(),
	carillonv1connect.JobServiceTriggerJobProcedure: rule[carillonv1.TriggerJobRequest]{access: accessWrite, audit: true,
		validate: func(r *carillonv1.TriggerJobRequest) error {
			if err := checkContent("param", r.GetParam()); err != nil {
				return err
			}
			return checkAddresses("addresses", r.Addresses)
		},
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.TriggerJobRequest) error {
			return s.jobAccess(ctx, p, "job_id", r.JobId, true)

		},
	}.row(),
	carillonv1connect.JobServiceBackfillJobProcedure: rule[carillonv1.BackfillJobRequest]{access: accessWrite, audit: true, // as TriggerJob
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.BackfillJobRequest) error {
			return s.jobAccess(ctx, p, "job_id", r.JobId, true)
		},
	}.row(),
	carillonv1connect.JobServicePreviewScheduleProcedure: rule[carillonv1.PreviewScheduleRequest]{access: accessSelf}.row(), // touches no job
	carillonv1connect.RunServiceListRunsProcedure: rule[carillonv1.ListRunsRequest]{access: accessRead,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.ListRunsRequest) error {
			if err := readGroup(p, "group_id", r.GroupId); err != nil {
				return err
			}
			return s.jobAccess(ctx, p, "job_id", r.JobId, false) // and scoped

		},
		scope: scopeListRuns,
	}.row(),
	carillonv1connect.RunServiceGetRunProcedure: rule[carillonv1.GetRunRequest]{access: accessRead,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.GetRunRequest) error {
			return s.runAccess(ctx, p, "id", r.Id, false)

		},
	}.row(),
	carillonv1connect.RunServiceReadRunLogProcedure: rule[carillonv1.ReadRunLogRequest]{access: accessRead,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.ReadRunLogRequest) error {
			return s.runAccess(ctx, p, "run_id", r.RunId, false)

		},
	}.row(),
	carillonv1connect.RunServiceKillRunProcedure: rule[carillonv1.KillRunRequest]{access: accessWrite, audit: true,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.KillRunRequest) error {
			return s.runAccess(ctx, p, "run_id", r.RunId, true)

		},
	}.row(),
	carillonv1connect.RunServiceDeleteRunsProcedure: rule[carillonv1.DeleteRunsRequest]{access: accessWrite, audit: true,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.DeleteRunsRequest) error {
			if p.Admin() {
				return nil
			}
			// A job may have moved between groups, so its runs can lie in
			// several: a MEMBER deletes within one of their groups.
			if r.GroupId == 0 {
				return denied("group_id", "a MEMBER must name one of their groups (%s) to delete runs", groupList(p.Groups))
			}
			return writeGroup(p, "group_id", r.GroupId)

		},
	}.row(),
	carillonv1connect.ReportServiceGetDashboardProcedure: rule[carillonv1.GetDashboardRequest]{access: accessRead,
		validate: func(r *carillonv1.GetDashboardRequest) error {
			if r.From != nil && r.To != nil && r.From.AsTime().After(r.To.AsTime()) {
				return invalid("from", "must not be after to")
			}
			return nil
		},
	}.row(),
	carillonv1connect.UserServiceLoginProcedure:          rule[carillonv1.LoginRequest]{access: accessOpen, audit: true}.row(),
	carillonv1connect.UserServiceLogoutProcedure:         rule[carillonv1.LogoutRequest]{access: accessSelf, audit: true}.row(),
	carillonv1connect.UserServiceGetCurrentUserProcedure: rule[carillonv1.GetCurrentUserRequest]{access: accessSelf}.row(),
	carillonv1connect.UserServiceChangePasswordProcedure: rule[carillonv1.ChangePasswordRequest]{access: accessSelf, audit: true}.row(),
	carillonv1connect.UserServiceCreateUserProcedure: rule[carillonv1.CreateUserRequest]{access: accessAdmin, audit: true,
		validate: func(r *carillonv1.CreateUserRequest) error {
			if r.GetUser().GetUsername() == "" {
				return invalid("user.username", "required")
			}
			return nil
		},
	}.row(),
	carillonv1connect.UserServiceGetUserProcedure:   rule[carillonv1.GetUserRequest]{access: accessAdmin}.row(),
	carillonv1connect.UserServiceListUsersProcedure: rule[carillonv1.ListUsersRequest]{access: accessAdmin}.row(),
	carillonv1connect.UserServiceUpdateUserProcedure: rule[carillonv1.UpdateUserRequest]{access: accessAdmin, audit: true,
		validate: func(r *carillonv1.UpdateUserRequest) error {
			return positiveID("user.id", r.GetUser().GetId())
		},
	}.row(),
	carillonv1connect.UserServiceDeleteUserProcedure: rule[carillonv1.DeleteUserRequest]{access: accessAdmin, audit: true}.row(),
	carillonv1connect.UserServiceCreateApiTokenProcedure: rule[carillonv1.CreateApiTokenRequest]{access: accessSelf, audit: true,
		validate: func(r *carillonv1.CreateApiTokenRequest) error {
			return checkName("name", r.Name)
		},
	}.row(),
	carillonv1connect.UserServiceListApiTokensProcedure: rule[carillonv1.ListApiTokensRequest]{access: accessSelf,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.ListApiTokensRequest) error {
			if (r.AllUsers || (r.UserId != 0 && r.UserId != p.UserID)) && !p.Admin() {
				return denied("user_id", "only an ADMIN lists another user's API tokens")
			}
			return nil

		},
	}.row(),
	carillonv1connect.UserServiceRevokeApiTokenProcedure: rule[carillonv1.RevokeApiTokenRequest]{access: accessSelf, audit: true}.row(), // ownership checked by the handler
	carillonv1connect.UserServiceListAuditLogProcedure: rule[carillonv1.ListAuditLogRequest]{access: accessAdmin,
		validate: func(r *carillonv1.ListAuditLogRequest) error {
			if r.From != nil && r.To != nil && !r.From.AsTime().Before(r.To.AsTime()) {
				return invalid("to", "must be after from")
			}
			return nil
		},
	}.row(),
	carillonv1connect.UserServiceUnlockUserProcedure:       rule[carillonv1.UnlockUserRequest]{access: accessAdmin, audit: true}.row(),
	carillonv1connect.UserServiceGetExecutorTokenProcedure: rule[carillonv1.GetExecutorTokenRequest]{access: accessAdmin, audit: true}.row(),
	// Calendars are admin-wide: every signed-in user reads them (a job's
	// form lists them), only an ADMIN changes them.
	carillonv1connect.CalendarServiceCreateCalendarProcedure: rule[carillonv1.CreateCalendarRequest]{access: accessAdmin, audit: true}.row(),
	carillonv1connect.CalendarServiceGetCalendarProcedure:    rule[carillonv1.GetCalendarRequest]{access: accessSelf}.row(),
	carillonv1connect.CalendarServiceListCalendarsProcedure:  rule[carillonv1.ListCalendarsRequest]{access: accessSelf}.row(),
	carillonv1connect.CalendarServiceUpdateCalendarProcedure: rule[carillonv1.UpdateCalendarRequest]{access: accessAdmin, audit: true,
		validate: func(r *carillonv1.UpdateCalendarRequest) error {
			return positiveID("calendar.id", r.GetCalendar().GetId())
		},
	}.row(),
	carillonv1connect.CalendarServiceDeleteCalendarProcedure: rule[carillonv1.DeleteCalendarRequest]{access: accessAdmin, audit: true}.row(),
	// Apply checks each change against the caller's role and groups
	// itself (apply.go): an ADMIN's for groups and calendars, a MEMBER's of
	// the group for jobs; unchanged items need nothing.
	carillonv1connect.ApplyServiceApplyProcedure: rule[carillonv1.ApplyRequest]{access: accessWrite, audit: true, name: applyName}.row(),
	// Export shows the groups the caller may read (apply.go).
	carillonv1connect.ApplyServiceExportProcedure: rule[carillonv1.ExportRequest]{access: accessRead}.row(),
	carillonv1connect.WorkflowServiceCreateWorkflowProcedure: rule[carillonv1.CreateWorkflowRequest]{access: accessWrite, audit: true,
		validate: func(r *carillonv1.CreateWorkflowRequest) error {
			return checkWorkflowLimits(r.Workflow)
		},
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.CreateWorkflowRequest) error {
			if err := writeGroup(p, "workflow.group_id", r.GetWorkflow().GetGroupId()); err != nil {
				return err
			}
			return s.writeNodeJobs(ctx, p, nodesOfProto(r.GetWorkflow().GetNodes()), "workflow")
		},
	}.row(),
	carillonv1connect.WorkflowServiceGetWorkflowProcedure: rule[carillonv1.GetWorkflowRequest]{access: accessRead,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.GetWorkflowRequest) error {
			return s.workflowAccess(ctx, p, "id", r.Id, false)
		},
	}.row(),
	carillonv1connect.WorkflowServiceListWorkflowsProcedure: rule[carillonv1.ListWorkflowsRequest]{access: accessRead,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.ListWorkflowsRequest) error {
			return readGroup(p, "group_id", r.GroupId) // otherwise scoped
		},
		scope: scopeListWorkflows,
	}.row(),
	carillonv1connect.WorkflowServiceUpdateWorkflowProcedure: rule[carillonv1.UpdateWorkflowRequest]{access: accessWrite, audit: true,
		validate: func(r *carillonv1.UpdateWorkflowRequest) error {
			if r.Workflow == nil {
				return invalid("workflow", "required")
			}
			if err := positiveID("workflow.id", r.Workflow.Id); err != nil {
				return err
			}
			return checkWorkflowLimits(r.Workflow)
		},
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.UpdateWorkflowRequest) error {
			if err := s.workflowAccess(ctx, p, "workflow.id", r.GetWorkflow().GetId(), true); err != nil {
				return err
			}
			paths := r.GetUpdateMask().GetPaths()
			if len(paths) == 0 || containsString(paths, "group_id") {
				if err := writeGroup(p, "workflow.group_id", r.GetWorkflow().GetGroupId()); err != nil {
					return err
				}
			}
			if workflowNodesChanged(paths) {
				return s.writeNodeJobs(ctx, p, nodesOfProto(r.GetWorkflow().GetNodes()), "workflow")
			}
			return nil
		},
	}.row(),
	carillonv1connect.WorkflowServiceDeleteWorkflowProcedure: workflowWriteRow[carillonv1.DeleteWorkflowRequest]((*carillonv1.DeleteWorkflowRequest).GetId),
	carillonv1connect.WorkflowServiceStartWorkflowProcedure:  workflowWriteRow[carillonv1.StartWorkflowRequest]((*carillonv1.StartWorkflowRequest).GetId),
	carillonv1connect.WorkflowServiceStopWorkflowProcedure:   workflowWriteRow[carillonv1.StopWorkflowRequest]((*carillonv1.StopWorkflowRequest).GetId),
	carillonv1connect.WorkflowServiceTriggerWorkflowProcedure: rule[carillonv1.TriggerWorkflowRequest]{access: accessWrite, audit: true,
		validate: func(r *carillonv1.TriggerWorkflowRequest) error {
			return checkContent("param", r.GetParam())
		},
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.TriggerWorkflowRequest) error {
			return s.workflowAccess(ctx, p, "workflow_id", r.WorkflowId, true)
		},
	}.row(),
	carillonv1connect.WorkflowServiceBackfillWorkflowProcedure: rule[carillonv1.BackfillWorkflowRequest]{access: accessWrite, audit: true, // as TriggerWorkflow
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.BackfillWorkflowRequest) error {
			return s.workflowAccess(ctx, p, "workflow_id", r.WorkflowId, true)
		},
	}.row(),
	carillonv1connect.WorkflowServiceGetWorkflowRunProcedure: rule[carillonv1.GetWorkflowRunRequest]{access: accessRead,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.GetWorkflowRunRequest) error {
			return s.workflowRunAccess(ctx, p, "workflow_run_id", r.WorkflowRunId, false)
		},
	}.row(),
	carillonv1connect.WorkflowServiceListWorkflowRunsProcedure: rule[carillonv1.ListWorkflowRunsRequest]{access: accessRead,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *carillonv1.ListWorkflowRunsRequest) error {
			return s.workflowAccess(ctx, p, "workflow_id", r.WorkflowId, false) // otherwise scoped by the handler
		},
	}.row(),
	carillonv1connect.WorkflowServiceRetryWorkflowRunProcedure:  workflowRunWriteRow[carillonv1.RetryWorkflowRunRequest]((*carillonv1.RetryWorkflowRunRequest).GetWorkflowRunId),
	carillonv1connect.WorkflowServiceCancelWorkflowRunProcedure: workflowRunWriteRow[carillonv1.CancelWorkflowRunRequest]((*carillonv1.CancelWorkflowRunRequest).GetWorkflowRunId),
	carillonv1connect.RegistryServiceRegisterProcedure:          rule[carillonv1.RegisterRequest]{access: accessExecutor}.row(),
	carillonv1connect.RegistryServiceDeregisterProcedure:        rule[carillonv1.DeregisterRequest]{access: accessExecutor}.row(),
	// The executors' hot path: a check of its length costs less than the
	// rules' walk of every result (BenchmarkReportResultsShape), and a bad
	// result is refused alone, in its outcome (registry.go).
	carillonv1connect.RegistryServiceReportResultsProcedure: rule[carillonv1.ReportResultsRequest]{access: accessExecutor, handShape: true,
		validate: func(r *carillonv1.ReportResultsRequest) error {
			if len(r.Results) > maxResults {
				return invalid("results", "at most %d per batch, got %d", maxResults, len(r.Results))
			}
			return nil
		},
	}.row(),
}

// workflowWriteRow is the row of an RPC that changes the workflow its
// request names by id (field "id"): audited, for whoever may write the
// workflow (workflowAccess).
func workflowWriteRow[Req any](id func(*Req) int64) rpc {
	return rule[Req]{access: accessWrite, audit: true,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *Req) error {
			return s.workflowAccess(ctx, p, "id", id(r), true)
		},
	}.row()
}

// workflowRunWriteRow is the row of an RPC that changes the workflow run
// its request names (field "workflow_run_id"), for whoever may write its
// workflow.
func workflowRunWriteRow[Req any](id func(*Req) int64) rpc {
	return rule[Req]{access: accessWrite, audit: true,
		check: func(ctx context.Context, s *Server, p *auth.Principal, r *Req) error {
			return s.workflowRunAccess(ctx, p, "workflow_run_id", id(r), true)
		},
	}.row()
}
