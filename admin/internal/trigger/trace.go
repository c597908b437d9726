package trigger

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the trigger's tracer (its instrumentation scope).
const tracerName = "github.com/carillonhq/carillon/admin/internal/trigger"

// traceContext is the W3C format of RunRequest.trace_context.
var traceContext = propagation.TraceContext{}

// startSpan starts planned fire f's span, "carillon.fire", from the
// preparation of its call (just after its claim and routing) to its
// dispatch, when tracer is not nil (the trigger traces); else it leaves
// f.span nil.
func startSpan(tracer trace.Tracer, f *fire) {
	if tracer == nil {
		return
	}
	_, f.span = tracer.Start(context.Background(), "carillon.fire", trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(
			attribute.Int64("carillon.run_id", f.id), attribute.Int64("carillon.job_id", f.job.ID),
			attribute.String("carillon.trigger_type", f.triggerType.String()),
			attribute.String("carillon.scheduled_at", f.scheduledAt.UTC().Format("2006-01-02T15:04:05.000Z07:00")),
			attribute.String("carillon.executor", f.address)))
}

// spanContext returns ctx with f's span, if any.
func (f *fire) spanContext(ctx context.Context) context.Context {
	if f.span == nil {
		return ctx
	}
	return trace.ContextWithSpan(ctx, f.span)
}

// traceCarrier returns the trace context of f's span for its RunRequest,
// or nil when there is none (or it is not sampled).
func (f *fire) traceCarrier() map[string]string {
	if f.span == nil || !f.span.SpanContext().IsSampled() {
		return nil
	}
	carrier := propagation.MapCarrier{}
	traceContext.Inject(trace.ContextWithSpan(context.Background(), f.span), carrier)
	return carrier
}

// endSpan ends f's span: dispatched, or failed with err, or not sent
// for the reason skipped (not "").
func (f *fire) endSpan(err error, skipped string) {
	if f.span == nil {
		return
	}
	switch {
	case skipped != "":
		f.span.AddEvent("skipped: " + skipped)
	case err != nil:
		f.span.SetStatus(codes.Error, err.Error())
	}
	f.span.End()
}
