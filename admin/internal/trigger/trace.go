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

// startFire starts the span of routed run s's fire, "carillon.fire", from
// the preparation of its call (just after its claim and routing) to its
// dispatch, when the trigger traces; else it leaves s.span nil.
func (t *Trigger) startFire(s *routed) {
	if t.tracer == nil {
		return
	}
	_, s.span = t.tracer.Start(context.Background(), "carillon.fire", trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(
			attribute.Int64("carillon.run_id", s.run.ID), attribute.Int64("carillon.job_id", s.job.ID),
			attribute.String("carillon.trigger_type", s.run.TriggerType.String()),
			attribute.String("carillon.scheduled_at", s.run.ScheduledAt.UTC().Format("2006-01-02T15:04:05.000Z07:00")),
			attribute.String("carillon.executor", s.address)))
}

// spanContext returns ctx with s's fire span, if any.
func (s routed) spanContext(ctx context.Context) context.Context {
	if s.span == nil {
		return ctx
	}
	return trace.ContextWithSpan(ctx, s.span)
}

// traceCarrier returns the trace context of s's fire span for its
// RunRequest, or nil when there is none (or it is not sampled).
func (s routed) traceCarrier() map[string]string {
	if s.span == nil || !s.span.SpanContext().IsSampled() {
		return nil
	}
	carrier := propagation.MapCarrier{}
	traceContext.Inject(trace.ContextWithSpan(context.Background(), s.span), carrier)
	return carrier
}

// endFire ends s's fire span: dispatched, or failed with err, or skipped
// (not sent: its job was stopped since the claim).
func endFire(s routed, err error, skipped bool) {
	if s.span == nil {
		return
	}
	switch {
	case skipped:
		s.span.AddEvent("skipped: the job was stopped or deleted before the instant")
	case err != nil:
		s.span.SetStatus(codes.Error, err.Error())
	}
	s.span.End()
}
