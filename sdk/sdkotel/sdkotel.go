// Package sdkotel traces the runs of a Carillon executor (package
// [github.com/carillonhq/carillon/sdk]) with OpenTelemetry. An executor
// that does not import it links no OpenTelemetry code.
//
// Each run gets a span "carillon.run" (the context its handler receives
// carries it), the child of the admin's span of the fire when the admin
// traces too (RunRequest.trace_context); the run log's first line names
// the trace id. The admin's calls get server spans
// (connectrpc.com/otelconnect, trusting the admin's trace context):
//
//	interceptor, err := sdkotel.Interceptor(tp)
//	...
//	cfg.Interceptors = append(cfg.Interceptors, interceptor)
//	ex, err := sdk.New(cfg)
//	...
//	ex.Observe(sdkotel.Observer(tp))
package sdkotel

import (
	"context"

	"connectrpc.com/connect"
	"connectrpc.com/otelconnect"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/carillonhq/carillon/sdk"
)

// tracerName names the tracer of the runs' spans (its instrumentation
// scope): the SDK's, as before tracing moved here.
const tracerName = "github.com/carillonhq/carillon/sdk"

// traceContext is the W3C trace context format of RunRequest.trace_context
// and of the calls' headers.
var traceContext = propagation.TraceContext{}

// Observer returns the [sdk.Observer] that gives each run a span from tp;
// add it with [sdk.Executor.Observe].
func Observer(tp trace.TracerProvider) sdk.Observer {
	return runTracer{tracer: tp.Tracer(tracerName)}
}

// Interceptor returns the server interceptor that traces the admin's calls
// to the executor, trusting the trace context they carry (the admin's fire
// span), for [sdk.Config].Interceptors.
func Interceptor(tp trace.TracerProvider) (connect.Interceptor, error) {
	return otelconnect.NewInterceptor(otelconnect.WithTracerProvider(tp), otelconnect.WithPropagator(traceContext),
		otelconnect.WithTrustRemote(), otelconnect.WithoutMetrics())
}

// runTracer makes a run's span, the child of the admin's fire span that
// RunRequest.trace_context names.
type runTracer struct {
	tracer trace.Tracer
}

// RunStarted returns ctx with the run's span "carillon.run", and a note
// naming its trace for the run's log.
func (t runTracer) RunStarted(ctx context.Context, run sdk.RunInfo) (context.Context, string) {
	if len(run.TraceContext) > 0 {
		ctx = traceContext.Extract(ctx, propagation.MapCarrier(run.TraceContext))
	}
	ctx, span := t.tracer.Start(ctx, "carillon.run", trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
		attribute.Int64("carillon.run_id", run.RunID), attribute.Int64("carillon.job_id", run.JobID),
		attribute.String("carillon.handler", run.Handler)))
	if sc := span.SpanContext(); sc.IsValid() {
		return ctx, "trace " + sc.TraceID().String()
	}
	return ctx, ""
}

// RunEnded ends the run's span with its status; a run that never started
// has none.
func (t runTracer) RunEnded(ctx context.Context, _ sdk.RunInfo, end sdk.RunEnd) {
	span := trace.SpanFromContext(ctx)
	if end.Started.IsZero() || !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("carillon.status", end.Status))
	if end.Status != "SUCCEEDED" {
		span.SetStatus(codes.Error, end.Message)
	}
	span.End()
}
