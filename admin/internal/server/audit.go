package server

import (
	"context"
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
)

// maxAuditDetail bounds the request JSON kept in an audit entry.
const maxAuditDetail = 8 << 10

// secretFields are removed from requests before they are audited.
var secretFields = map[protoreflect.Name]bool{"password": true, "old_password": true, "new_password": true, "token": true,
	"alarm_webhook_secret": true}

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
		// A run's param may carry secrets the job's stored param does
		// not: its length is enough to tell an override happened.
		switch tr := m.(type) {
		case *carillonv1.TriggerJobRequest:
			if tr.Param != nil {
				tr.Param = proto.String(fmt.Sprintf("(%d bytes, not recorded)", len(tr.GetParam())))
			}
		case *carillonv1.TriggerWorkflowRequest:
			if tr.Param != nil {
				tr.Param = proto.String(fmt.Sprintf("(%d bytes, not recorded)", len(tr.GetParam())))
			}
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
	err := s.cfg.Store.Audit.Complete(ctx, a, func(e *store.AuditEntry) {
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
		case fd.Message() != nil && fd.IsList(): // ImportJobsRequest.jobs
			for i := range v.List().Len() {
				redact(v.List().Get(i).Message())
			}
		case fd.Message() != nil && !fd.IsMap():
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
	_, method, _ := strings.Cut(procName(proc), ".")
	if fd := r.Descriptor().Fields().ByName("id"); fd != nil && fd.Kind() == protoreflect.Int64Kind {
		for _, v := range verbs {
			if rest, ok := strings.CutPrefix(method, v); ok {
				return snake(rest) + " " + fmt.Sprint(r.Get(fd).Int())
			}
		}
	}
	// A batch (StopJobs): "jobs 3, 4, 5".
	if fd := r.Descriptor().Fields().ByName("ids"); fd != nil && fd.IsList() && fd.Kind() == protoreflect.Int64Kind {
		for _, v := range verbs {
			if rest, ok := strings.CutPrefix(method, v); ok {
				list := r.Get(fd).List()
				ids := make([]string, list.Len())
				for i := range list.Len() {
					ids[i] = fmt.Sprint(list.Get(i).Int())
				}
				return snake(rest) + " " + strings.Join(ids, ", ")
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
