package client

import (
	"context"
	"net/http"

	"connectrpc.com/connect"
)

// defaultHTTPClient is New's http.Client when given none.
var defaultHTTPClient = http.DefaultClient

// WithToken returns a client option that sends token as
// "Authorization: Bearer <token>" on every call, unary and streaming. A
// session token (from UserService.Login, "carillon_s_…") and an API token
// ("carillon_t_…", from CreateApiToken or "carillon token create") both
// work. An empty token sends no header, so calls fail with
// unauthenticated, except Login.
//
// It works with any generated client of carillonv1connect too:
//
//	jobs := carillonv1connect.NewJobServiceClient(http.DefaultClient, url, client.WithToken(token))
func WithToken(token string) connect.ClientOption {
	return connect.WithInterceptors(bearer(token))
}

// bearer is the interceptor of WithToken.
type bearer string

func (b bearer) set(h http.Header) {
	if b != "" {
		h.Set("Authorization", "Bearer "+string(b))
	}
}

// WrapUnary implements connect.Interceptor.
func (b bearer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if req.Spec().IsClient {
			b.set(req.Header())
		}
		return next(ctx, req)
	}
}

// WrapStreamingClient implements connect.Interceptor.
func (b bearer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		b.set(conn.RequestHeader())
		return conn
	}
}

// WrapStreamingHandler implements connect.Interceptor; handlers are left
// alone.
func (b bearer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
