package sdk

import (
	"context"
	"crypto/subtle"
	"errors"
	"strings"

	"connectrpc.com/connect"
)

// errBadToken refuses a call without the right access token.
var errBadToken = errors.New("sdk: missing or wrong access token")

// sendBearer adds "Authorization: Bearer <token>" to every outgoing call.
func sendBearer(token string) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+token)
			return next(ctx, req)
		}
	}
}

// requireBearer refuses incoming calls whose bearer token is not token,
// comparing in constant time.
func requireBearer(token string) connect.UnaryInterceptorFunc {
	want := []byte(token)
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			got, ok := bearer(req.Header().Get("Authorization"))
			if !ok || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
				return nil, connect.NewError(connect.CodeUnauthenticated, errBadToken)
			}
			return next(ctx, req)
		}
	}
}

// bearer extracts the token of an "Authorization: Bearer <token>" header;
// the scheme is case-insensitive.
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}
