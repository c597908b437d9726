package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// access is the role class of a procedure: who may call it at all. Group
// permissions come on top, per procedure (rule.check).
type access int

const (
	// accessOpen needs no credential (Login only).
	accessOpen access = iota
	// accessSelf needs any user: the caller acts on themselves.
	accessSelf
	// accessRead is for every role; a MEMBER only within their groups.
	accessRead
	// accessWrite is for ADMIN and MEMBER (within their groups); never VIEWER.
	accessWrite
	// accessAdmin is for ADMIN only.
	accessAdmin
)

func (a access) String() string {
	return [...]string{"open", "any user", "read", "write", "ADMIN"}[a]
}

// allows reports whether role may call a procedure of class a.
func (a access) allows(role auth.Role) bool {
	switch a {
	case accessOpen, accessSelf, accessRead:
		return role.Valid()
	case accessWrite:
		return role == auth.RoleAdmin || role == auth.RoleMember
	case accessAdmin:
		return role == auth.RoleAdmin
	}
	return false
}

// rule is how one management procedure is authorized and audited.
type rule struct {
	access access
	// audit writes a successful call to the audit log.
	audit bool
	// check applies group permissions once the role class passed; the
	// request is the procedure's request message. Nil: none apply.
	check func(ctx context.Context, s *Server, p *auth.Principal, req any) error
}

// rules authorizes every procedure of the management services. A procedure
// missing here is refused (fail closed), and a test requires every RPC of
// these services to be listed.
var rules = map[string]rule{
	carillonv1connect.GroupServiceCreateGroupProcedure: {access: accessAdmin, audit: true},
	carillonv1connect.GroupServiceGetGroupProcedure: {access: accessRead, check: func(_ context.Context, _ *Server, p *auth.Principal, req any) error {
		return readGroup(p, "id", req.(*carillonv1.GetGroupRequest).Id)
	}},
	carillonv1connect.GroupServiceListGroupsProcedure:       {access: accessRead}, // filtered by scopedGroupService
	carillonv1connect.GroupServiceUpdateGroupProcedure:      {access: accessAdmin, audit: true},
	carillonv1connect.GroupServiceDeleteGroupProcedure:      {access: accessAdmin, audit: true},
	carillonv1connect.GroupServiceRotateGroupTokenProcedure: {access: accessAdmin, audit: true},
	carillonv1connect.GroupServiceClearGroupTokenProcedure:  {access: accessAdmin, audit: true},

	carillonv1connect.JobServiceCreateJobProcedure: {access: accessWrite, audit: true, check: func(ctx context.Context, s *Server, p *auth.Principal, req any) error {
		j := req.(*carillonv1.CreateJobRequest).GetJob()
		if err := writeGroup(p, "job.group_id", j.GetGroupId()); err != nil {
			return err
		}
		return s.writeChildren(ctx, p, j.GetChildJobIds())
	}},
	carillonv1connect.JobServiceGetJobProcedure: {access: accessRead, check: func(ctx context.Context, s *Server, p *auth.Principal, req any) error {
		return s.jobAccess(ctx, p, "id", req.(*carillonv1.GetJobRequest).Id, false)
	}},
	carillonv1connect.JobServiceListJobsProcedure: {access: accessRead, check: func(_ context.Context, _ *Server, p *auth.Principal, req any) error {
		return readGroup(p, "group_id", req.(*carillonv1.ListJobsRequest).GroupId) // otherwise filtered by scopedJobService
	}},
	carillonv1connect.JobServiceUpdateJobProcedure: {access: accessWrite, audit: true, check: func(ctx context.Context, s *Server, p *auth.Principal, req any) error {
		r := req.(*carillonv1.UpdateJobRequest)
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
	}},
	carillonv1connect.JobServiceDeleteJobProcedure: {access: accessWrite, audit: true, check: func(ctx context.Context, s *Server, p *auth.Principal, req any) error {
		return s.jobAccess(ctx, p, "id", req.(*carillonv1.DeleteJobRequest).Id, true)
	}},
	carillonv1connect.JobServiceStartJobProcedure: {access: accessWrite, audit: true, check: func(ctx context.Context, s *Server, p *auth.Principal, req any) error {
		return s.jobAccess(ctx, p, "id", req.(*carillonv1.StartJobRequest).Id, true)
	}},
	carillonv1connect.JobServiceStopJobProcedure: {access: accessWrite, audit: true, check: func(ctx context.Context, s *Server, p *auth.Principal, req any) error {
		return s.jobAccess(ctx, p, "id", req.(*carillonv1.StopJobRequest).Id, true)
	}},
	carillonv1connect.JobServiceTriggerJobProcedure: {access: accessWrite, audit: true, check: func(ctx context.Context, s *Server, p *auth.Principal, req any) error {
		return s.jobAccess(ctx, p, "job_id", req.(*carillonv1.TriggerJobRequest).JobId, true)
	}},
	carillonv1connect.JobServicePreviewScheduleProcedure: {access: accessSelf}, // touches no job

	carillonv1connect.RunServiceListRunsProcedure: {access: accessRead, check: func(ctx context.Context, s *Server, p *auth.Principal, req any) error {
		r := req.(*carillonv1.ListRunsRequest)
		if err := readGroup(p, "group_id", r.GroupId); err != nil {
			return err
		}
		return s.jobAccess(ctx, p, "job_id", r.JobId, false) // and filtered by scopedRunService
	}},
	carillonv1connect.RunServiceGetRunProcedure: {access: accessRead, check: func(ctx context.Context, s *Server, p *auth.Principal, req any) error {
		return s.runAccess(ctx, p, "id", req.(*carillonv1.GetRunRequest).Id, false)
	}},
	carillonv1connect.RunServiceReadRunLogProcedure: {access: accessRead, check: func(ctx context.Context, s *Server, p *auth.Principal, req any) error {
		return s.runAccess(ctx, p, "run_id", req.(*carillonv1.ReadRunLogRequest).RunId, false)
	}},
	carillonv1connect.RunServiceKillRunProcedure: {access: accessWrite, audit: true, check: func(ctx context.Context, s *Server, p *auth.Principal, req any) error {
		return s.runAccess(ctx, p, "run_id", req.(*carillonv1.KillRunRequest).RunId, true)
	}},
	carillonv1connect.RunServiceDeleteRunsProcedure: {access: accessWrite, audit: true, check: func(ctx context.Context, s *Server, p *auth.Principal, req any) error {
		r := req.(*carillonv1.DeleteRunsRequest)
		if p.Admin() {
			return nil
		}
		// A job may have moved between groups, so its runs can lie in
		// several: a MEMBER deletes within one of their groups.
		if r.GroupId == 0 {
			return denied("group_id", "a MEMBER must name one of their groups (%s) to delete runs", groupList(p.Groups))
		}
		return writeGroup(p, "group_id", r.GroupId)
	}},

	// The dashboard's counts are global: no job or run is shown.
	carillonv1connect.ReportServiceGetDashboardProcedure: {access: accessRead},

	carillonv1connect.UserServiceLoginProcedure:          {access: accessOpen, audit: true},
	carillonv1connect.UserServiceLogoutProcedure:         {access: accessSelf, audit: true},
	carillonv1connect.UserServiceGetCurrentUserProcedure: {access: accessSelf},
	carillonv1connect.UserServiceChangePasswordProcedure: {access: accessSelf, audit: true},
	carillonv1connect.UserServiceCreateUserProcedure:     {access: accessAdmin, audit: true},
	carillonv1connect.UserServiceGetUserProcedure:        {access: accessAdmin},
	carillonv1connect.UserServiceListUsersProcedure:      {access: accessAdmin},
	carillonv1connect.UserServiceUpdateUserProcedure:     {access: accessAdmin, audit: true},
	carillonv1connect.UserServiceDeleteUserProcedure:     {access: accessAdmin, audit: true},
	carillonv1connect.UserServiceCreateApiTokenProcedure: {access: accessSelf, audit: true},
	carillonv1connect.UserServiceListApiTokensProcedure: {access: accessSelf, check: func(_ context.Context, _ *Server, p *auth.Principal, req any) error {
		r := req.(*carillonv1.ListApiTokensRequest)
		if (r.AllUsers || (r.UserId != 0 && r.UserId != p.UserID)) && !p.Admin() {
			return denied("user_id", "only an ADMIN lists another user's API tokens")
		}
		return nil
	}},
	carillonv1connect.UserServiceRevokeApiTokenProcedure:   {access: accessSelf, audit: true}, // ownership checked by the handler
	carillonv1connect.UserServiceListAuditLogProcedure:     {access: accessAdmin},
	carillonv1connect.UserServiceUnlockUserProcedure:       {access: accessAdmin, audit: true},
	carillonv1connect.UserServiceGetExecutorTokenProcedure: {access: accessAdmin, audit: true},
}

// denied returns a permission_denied error naming the field and the rule.
func denied(field, format string, args ...any) error {
	return connect.NewError(connect.CodePermissionDenied, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
}

func groupList(ids []int64) string {
	if len(ids) == 0 {
		return "none granted"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return "groups " + strings.Join(parts, ", ")
}

// readGroup and writeGroup check a group id of a request; ids of 0 or less
// are left to validation.
func readGroup(p *auth.Principal, field string, id int64) error {
	if id > 0 && !p.CanRead(id) {
		return denied(field, "group %d is not one of yours (%s)", id, groupList(p.Groups))
	}
	return nil
}

func writeGroup(p *auth.Principal, field string, id int64) error {
	if id > 0 && !p.CanWrite(id) {
		if p.Role == auth.RoleViewer {
			return denied(field, "a VIEWER changes nothing")
		}
		return denied(field, "group %d is not one of yours (%s)", id, groupList(p.Groups))
	}
	return nil
}

// jobAccess checks p's permission on the group of the job with the given
// id. A job that does not exist is left to the handler (not_found).
func (s *Server) jobAccess(ctx context.Context, p *auth.Principal, field string, id int64, write bool) error {
	if id <= 0 || p.Admin() || (!write && p.Role == auth.RoleViewer) {
		return nil
	}
	j, err := s.cfg.Store.Job(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return s.toConnect(err)
	}
	if write {
		return writeGroup(p, field, j.GroupID)
	}
	return readGroup(p, field, j.GroupID)
}

// runAccess checks p's permission on the group of the run with the given id.
func (s *Server) runAccess(ctx context.Context, p *auth.Principal, field string, id int64, write bool) error {
	if id <= 0 || p.Admin() || (!write && p.Role == auth.RoleViewer) {
		return nil
	}
	r, err := s.cfg.Store.Run(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return s.toConnect(err)
	}
	if write {
		return writeGroup(p, field, r.GroupID)
	}
	return readGroup(p, field, r.GroupID)
}

// writeChildren requires p to operate the group of every child job: a
// child fires when its parent succeeds, so naming one is operating it.
func (s *Server) writeChildren(ctx context.Context, p *auth.Principal, ids []int64) error {
	for i, id := range ids {
		if err := s.jobAccess(ctx, p, fmt.Sprintf("job.child_job_ids[%d]", i), id, true); err != nil {
			return err
		}
	}
	return nil
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// errNoCredential and the messages below say what to send instead.
const (
	msgNoCredential = "this RPC needs a credential: send \"Authorization: Bearer <token>\" with a session token " +
		"(UserService/Login, or `carillon login`) or an API token (UserService/CreateApiToken)"
	msgBadCredential = "unknown, expired or revoked credential, or its user is disabled: log in again or use another API token"
	msgNotUserToken  = "that is not a user credential (the executor access token is only for RegistryService): " +
		"send a session token or an API token"
)

// authenticate returns the Principal of the request's bearer credential.
func (s *Server) authenticate(ctx context.Context, header string) (*auth.Principal, error) {
	token, ok := auth.Bearer(header)
	if !ok {
		return nil, connect.NewError(connect.CodeUnauthenticated, errors.New(msgNoCredential))
	}
	kind, ok := auth.KindOf(token)
	if !ok {
		return nil, connect.NewError(connect.CodeUnauthenticated, errors.New(msgNotUserToken))
	}
	p, err := s.cfg.Store.Principal(ctx, kind, auth.HashToken(token), s.cfg.NowFunc())
	if errors.Is(err, store.ErrNotFound) {
		return nil, connect.NewError(connect.CodeUnauthenticated, errors.New(msgBadCredential))
	}
	if err != nil {
		return nil, s.toConnect(err)
	}
	return &p, nil
}

// authInterceptor authenticates every call of the management services,
// authorizes it by rules, and writes audited calls to the audit log.
type authInterceptor struct{ s *Server }

func (i authInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		proc := req.Spec().Procedure
		r, ok := rules[proc]
		if !ok {
			return nil, connect.NewError(connect.CodePermissionDenied, fmt.Errorf("%s has no authorization rule", proc))
		}
		var p *auth.Principal
		if r.access != accessOpen {
			cred, err := credential(req.Header())
			if err != nil {
				return nil, err
			}
			if p, err = i.s.authenticate(ctx, cred); err != nil {
				return nil, err
			}
			if !r.access.allows(p.Role) {
				return nil, connect.NewError(connect.CodePermissionDenied,
					fmt.Errorf("%s is for %s; %s is %s", procName(proc), r.access, p.Username, p.Role))
			}
			ctx = auth.NewContext(ctx, p)
		}
		if err := validate(req.Any()); err != nil {
			return nil, err
		}
		if r.check != nil {
			if err := r.check(ctx, i.s, p, req.Any()); err != nil {
				return nil, err
			}
		}
		var audit *store.AuditPending
		if r.audit {
			ctx, audit = store.WithAudit(ctx, i.s.auditEntry(p, proc, req))
		}
		res, err := next(ctx, req)
		if err == nil && audit != nil {
			i.s.completeAudit(ctx, audit, proc, req, res)
		}
		return res, err
	}
}

// WrapStreamingClient is not used: the admin is not a client here.
func (authInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler refuses streaming calls: no management RPC streams,
// and one that did would need its own rule.
func (authInterceptor) WrapStreamingHandler(connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(_ context.Context, conn connect.StreamingHandlerConn) error {
		return connect.NewError(connect.CodePermissionDenied, fmt.Errorf("%s has no authorization rule", conn.Spec().Procedure))
	}
}

// procName turns "/carillon.v1.JobService/UpdateJob" into "JobService.UpdateJob".
func procName(proc string) string {
	svc, method, _ := strings.Cut(strings.TrimPrefix(proc, "/"), "/")
	return strings.TrimPrefix(svc, "carillon.v1.") + "." + method
}

// maxAuditDetail bounds the request JSON kept in an audit entry.
const maxAuditDetail = 8 << 10

// secretFields are removed from requests before they are audited.
var secretFields = map[protoreflect.Name]bool{"password": true, "old_password": true, "new_password": true, "token": true}

// auditEntry is the audit record of a management call about to run: who,
// what, when. The call's first write transaction stores it with its change
// (store.WithAudit), so a change is never without its record.
func (s *Server) auditEntry(p *auth.Principal, proc string, req connect.AnyRequest) store.AuditEntry {
	e := store.AuditEntry{At: s.cfg.NowFunc(), Action: procName(proc), Peer: req.Peer().Addr}
	if p != nil {
		e.UserID, e.Username = p.UserID, p.Username
	}
	if lr, ok := req.Any().(*carillonv1.LoginRequest); ok {
		e.Username = lr.GetUsername() // its id comes with the response
	}
	if m, ok := req.Any().(proto.Message); ok {
		m = proto.Clone(m)
		redact(m.ProtoReflect())
		if tj, ok := m.(*carillonv1.TriggerJobRequest); ok && tj.Param != nil {
			// A run's param may carry secrets the job's stored param does
			// not: its length is enough to tell an override happened.
			tj.Param = proto.String(fmt.Sprintf("(%d bytes, not recorded)", len(tj.GetParam())))
		}
		b, _ := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
		e.Detail = truncate(string(b), maxAuditDetail)
		e.Target = auditTarget(proc, m, nil)
	}
	return e
}

// completeAudit completes the record of a call that succeeded with what
// only its response says (the id of what it created; who logged in), or
// writes it now if the call changed nothing through a transaction. A
// failure here is logged: the change and its record are stored already.
func (s *Server) completeAudit(ctx context.Context, a *store.AuditPending, proc string, req connect.AnyRequest, res connect.AnyResponse) {
	err := s.cfg.Store.CompleteAudit(ctx, a, func(e *store.AuditEntry) {
		if m, ok := req.Any().(proto.Message); ok {
			e.Target = auditTarget(proc, m, res.Any())
		}
		if lr, ok := res.Any().(*carillonv1.LoginResponse); ok {
			e.UserID, e.Username = lr.GetUser().GetId(), lr.GetUser().GetUsername()
		}
	})
	if err != nil {
		s.cfg.Logger.Error("server: audit log", slog.String("action", procName(proc)), slog.Any("err", err))
	}
}

func redact(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case secretFields[fd.Name()]:
			m.Clear(fd)
		case fd.Message() != nil && !fd.IsList() && !fd.IsMap():
			redact(v.Message())
		}
		return true
	})
}

// verbs start the method names whose rest names the target's kind.
var verbs = []string{"Create", "Get", "Update", "Delete", "Start", "Stop", "Trigger", "Kill", "Revoke", "Read"}

// auditTarget names what a call changed, e.g. "job 7": an id in the
// response's message (a created job), else the request's.
func auditTarget(proc string, req proto.Message, res any) string {
	if m, ok := res.(proto.Message); ok {
		if t := messageTarget(m.ProtoReflect()); t != "" {
			return t
		}
	}
	if t := messageTarget(req.ProtoReflect()); t != "" {
		return t
	}
	r := req.ProtoReflect()
	if fd := r.Descriptor().Fields().ByName("id"); fd != nil && fd.Kind() == protoreflect.Int64Kind {
		_, method, _ := strings.Cut(procName(proc), ".")
		for _, v := range verbs {
			if rest, ok := strings.CutPrefix(method, v); ok {
				return snake(rest) + " " + fmt.Sprint(r.Get(fd).Int())
			}
		}
	}
	return ""
}

// messageTarget finds "<kind> <id>" in a message: a field like job_id, or a
// message field (job, group, user, api_token) with an id.
func messageTarget(m protoreflect.Message) string {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.IsList() || fd.IsMap() || !m.Has(fd) {
			continue
		}
		if fd.Message() != nil {
			sub := m.Get(fd).Message()
			if idf := sub.Descriptor().Fields().ByName("id"); idf != nil && idf.Kind() == protoreflect.Int64Kind && sub.Get(idf).Int() != 0 {
				return string(fd.Name()) + " " + fmt.Sprint(sub.Get(idf).Int())
			}
			continue
		}
		if kind, ok := strings.CutSuffix(string(fd.Name()), "_id"); ok && fd.Kind() == protoreflect.Int64Kind {
			return kind + " " + fmt.Sprint(m.Get(fd).Int())
		}
	}
	return ""
}

// snake turns "ApiToken" into "api_token".
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
