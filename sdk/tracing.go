package sdk

import (
	"context"

	"connectrpc.com/connect"
	"connectrpc.com/otelconnect"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// tracerName names the SDK's tracer (its instrumentation scope).
const tracerName = "github.com/carillonhq/carillon/sdk"

// traceContext is the W3C trace context format of RunRequest.trace_context
// and of the calls' headers.
var traceContext = propagation.TraceContext{}

// runTracer makes a run's span, the child of the admin's fire span that
// RunRequest.trace_context names. The zero runTracer (no
// Config.TracerProvider) makes none.
type runTracer struct {
	tracer trace.Tracer
}

func newRunTracer(tp trace.TracerProvider) runTracer {
	if tp == nil {
		return runTracer{}
	}
	return runTracer{tracer: tp.Tracer(tracerName)}
}

// noSpan is the span of a run without a tracer: it records nothing.
var noSpan = trace.SpanFromContext(context.Background())

// start returns ctx with run r's span "carillon.run", and the span; without
// a tracer, ctx as it is and a span that records nothing.
func (t runTracer) start(ctx context.Context, r *run) (context.Context, trace.Span) {
	if t.tracer == nil {
		return ctx, noSpan
	}
	if len(r.traceContext) > 0 {
		ctx = traceContext.Extract(ctx, propagation.MapCarrier(r.traceContext))
	}
	return t.tracer.Start(ctx, "carillon.run", trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
		attribute.Int64("carillon.run_id", r.id), attribute.Int64("carillon.job_id", r.jobID),
		attribute.String("carillon.handler", r.metricName())))
}

// end ends a run's span with its status.
func endRunSpan(span trace.Span, status carillonv1.RunStatus, msg string) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("carillon.status", statusName(status)))
	if status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
		span.SetStatus(codes.Error, msg)
	}
	span.End()
}

// traceInterceptor is the server interceptor that traces the admin's
// calls to this executor, trusting the trace context they carry (the
// admin's fire span), or nil without a TracerProvider.
func traceInterceptor(tp trace.TracerProvider) (connect.Interceptor, error) {
	if tp == nil {
		return nil, nil
	}
	return otelconnect.NewInterceptor(otelconnect.WithTracerProvider(tp), otelconnect.WithPropagator(traceContext),
		otelconnect.WithTrustRemote(), otelconnect.WithoutMetrics())
}
