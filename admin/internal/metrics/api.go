package metrics

import (
	"context"

	"connectrpc.com/connect"
)

// Interceptor returns the Connect interceptor that counts the admin's API
// calls by procedure and code. Install it first (outermost), so that calls
// refused by authentication or validation are counted too. A nil
// *Metrics returns an interceptor that counts nothing.
func (m *Metrics) Interceptor() connect.Interceptor { return apiInterceptor{m} }

// apiInterceptor counts calls into m.api.
type apiInterceptor struct{ m *Metrics }

func (i apiInterceptor) count(procedure string, err error) {
	if i.m == nil {
		return
	}
	code := CodeOK
	if err != nil {
		code = connect.CodeOf(err).String()
	}
	i.m.api.WithLabelValues(procedure, code).Inc()
}

// WrapUnary implements connect.Interceptor.
func (i apiInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		res, err := next(ctx, req)
		if req.Spec().IsClient {
			return res, err
		}
		i.count(req.Spec().Procedure, err)
		return res, err
	}
}

// WrapStreamingClient implements connect.Interceptor: client calls are
// not counted.
func (i apiInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler implements connect.Interceptor.
func (i apiInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		err := next(ctx, conn)
		i.count(conn.Spec().Procedure, err)
		return err
	}
}
