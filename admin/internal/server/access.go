package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/store"
)

// access is the role class of a procedure: who may call it at all. Group
// permissions come on top, per procedure (rpc.check). This file also holds
// those group checks.
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
	// accessExecutor is for executors: RegistryService, which takes the
	// executor token (executorauth.go) and no user.
	accessExecutor
)

func (a access) String() string {
	return [...]string{"open", "any user", "read", "write", "ADMIN", "executors"}[a]
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
	j, err := s.cfg.Store.Jobs.Get(ctx, id)
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

// jobsAccess checks p's permission to change each job of ids (jobAccess),
// refusing the whole call at the first it may not change, naming it.
func (s *Server) jobsAccess(ctx context.Context, p *auth.Principal, ids []int64) error {
	for i, id := range ids {
		if err := s.jobAccess(ctx, p, fmt.Sprintf("ids[%d] (job %d)", i, id), id, true); err != nil {
			return err
		}
	}
	return nil
}

// runAccess checks p's permission on the group of the run with the given id.
func (s *Server) runAccess(ctx context.Context, p *auth.Principal, field string, id int64, write bool) error {
	if id <= 0 || p.Admin() || (!write && p.Role == auth.RoleViewer) {
		return nil
	}
	r, err := s.cfg.Store.Runs.Get(ctx, id)
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
