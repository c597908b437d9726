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
	p, err := s.cfg.Store.Auth.Principal(ctx, kind, auth.HashToken(token), s.cfg.NowFunc())
	if errors.Is(err, store.ErrNotFound) {
		return nil, connect.NewError(connect.CodeUnauthenticated, errors.New(msgBadCredential))
	}
	if err != nil {
		return nil, s.toConnect(err)
	}
	return &p, nil
}

// authInterceptor authenticates every call of the management services,
// and runs its row of rpcs: access, the request's shape (shape.go) and
// validation, group check, scope and audit.
type authInterceptor struct{ s *Server }

func (i authInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		proc := req.Spec().Procedure
		r, ok := rpcs[proc]
		if !ok || r.access == accessExecutor {
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
		if !r.handShape {
			if err := i.s.shape.check(req.Any(), r.nameFor(req.Any())); err != nil {
				return nil, err
			}
		}
		if r.validate != nil {
			if err := r.validate(req.Any()); err != nil {
				return nil, err
			}
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
		call := next
		if r.scope != nil {
			call = func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
				return r.scope(ctx, p, req, next)
			}
		}
		res, err := call(ctx, req)
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
