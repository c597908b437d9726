package server

import (
	"context"
	"errors"
	"fmt"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/auth"
)

// executorKey is the context key of the auth.Executor a RegistryService
// call comes from.
type executorKey struct{}

// executorOf returns who the RegistryService call of ctx comes from.
func executorOf(ctx context.Context) auth.Executor {
	e, _ := ctx.Value(executorKey{}).(auth.Executor)
	return e
}

// requireExecutorToken refuses RegistryService calls that carry neither
// the global executor token nor a group's own ("Authorization: Bearer
// <token>", read by auth.Bearer as every credential of the admin is), and
// tells the handler which one a call carries: the handlers check that the
// token may act for the app, or the runs, the call names.
func requireExecutorToken(tokens *auth.ExecutorTokens) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			got, _ := auth.Bearer(req.Header().Get("Authorization"))
			e, ok := tokens.Identify(got)
			if !ok {
				return nil, connect.NewError(connect.CodeUnauthenticated, errors.New(
					"missing or wrong executor access token: send \"Authorization: Bearer <token>\" with the admin's executor token "+
						"(sdk.Config.AccessToken; CARILLON_TOKEN for examples/executor), which an ADMIN reads with: carillon executor-token; "+
						"or the group's own token (carillon group token ID)"))
			}
			return next(context.WithValue(ctx, executorKey{}, e), req)
		}
	}
}

// checkApp refuses a registry call for app by an executor whose token may
// not act for it.
func (s *Server) checkApp(ctx context.Context, app string) error {
	if s.tokens().MayServeApp(executorOf(ctx), app) {
		return nil
	}
	return connect.NewError(connect.CodePermissionDenied, fmt.Errorf(
		"this access token may not serve app %q: the app's group has a token of its own, or the token is another group's", app))
}

// tokens returns the executor tokens the trigger sends and this server checks.
func (s *Server) tokens() *auth.ExecutorTokens { return s.cfg.Trigger.ExecutorTokens() }

// loadGroupTokens reloads the groups' own executor tokens after a change.
func (s *Server) loadGroupTokens(ctx context.Context) error {
	ts, err := s.cfg.Store.Groups.Tokens(ctx)
	if err != nil {
		return s.toConnect(err)
	}
	s.tokens().Set(ts)
	return nil
}
