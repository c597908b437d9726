package sdkotel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk"
	"github.com/carillonhq/carillon/sdk/sdkotel"
	"github.com/carillonhq/carillon/sdk/sdktest"
)

// TestTracing: a run's span continues the admin's trace context, its
// handler's context carries it, its status is the run's, its log names
// its trace, and the admin's call gets a server span (admin/tracing_test.go
// checks, end to end, that it is in the fire's trace).
func TestTracing(t *testing.T) {
	t.Parallel()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	interceptor, err := sdkotel.Interceptor(tp)
	if err != nil {
		t.Fatal(err)
	}
	admin := sdktest.NewAdmin(t, "")
	ex := sdktest.Start(t, sdk.Config{AdminURLs: []string{admin.URL}, Interceptors: []connect.Interceptor{interceptor}}, func(ex *sdk.Executor) {
		ex.Observe(sdkotel.Observer(tp))
		ex.HandleFunc("traced", func(ctx context.Context, _ *sdk.Job) error {
			if !trace.SpanContextFromContext(ctx).IsValid() {
				return errors.New("the handler's context carries no span")
			}
			return errors.New("asked to fail")
		})
	})
	// The admin's fire span, as RunRequest.trace_context carries it.
	fireCtx, fire := sdktrace.NewTracerProvider().Tracer("admin").Start(context.Background(), "carillon.fire")
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(fireCtx, carrier)
	fire.End()
	res := admin.Run(t, &carillonv1.RunRequest{RunId: 1, JobId: 7, Handler: "traced", TraceContext: carrier})
	if res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_FAILED || res.GetMessage() != "asked to fail" {
		t.Fatalf("result %v %q, want FAILED by the handler (its context had a span)", res.GetStatus(), res.GetMessage())
	}
	traceID := fire.SpanContext().TraceID()
	var run, server bool
	for _, s := range spans.GetSpans() {
		switch {
		case s.Name == "carillon.run":
			run = true
			if s.Parent.SpanID() != fire.SpanContext().SpanID() || s.SpanContext.TraceID() != traceID {
				t.Errorf("run span: trace %s parent %s, want the fire span's trace %s and id %s",
					s.SpanContext.TraceID(), s.Parent.SpanID(), traceID, fire.SpanContext().SpanID())
			}
			if s.Status.Description != "asked to fail" {
				t.Errorf("run span status %v, want the run's failure", s.Status)
			}
		case strings.HasSuffix(s.Name, "/Run"):
			server = true
		}
	}
	if !run || !server {
		t.Errorf("run span found %v, server span of the call found %v; spans: %v", run, server, spans.GetSpans())
	}
	if log := ex.Log(t, 1); !strings.Contains(log, "(trace "+traceID.String()+")") {
		t.Errorf("run log does not name trace %s:\n%s", traceID, log)
	}
}
