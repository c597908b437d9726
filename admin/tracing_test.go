package admin_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/internal/admintest"
	"github.com/carillonhq/carillon/admin/internal/tracing"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk"
	"github.com/carillonhq/carillon/sdk/sdkotel"
)

// TestTracing: with tracing on in both processes (each with its own tracer
// provider and in-memory exporter, as two processes would have), a fire's
// span in the admin is the parent of the run's span in the executor, the
// RPC's client and server spans are in the same trace, and the trace id
// is in the admin's log and in the run's log.
func TestTracing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	adminSpans, execSpans := tracetest.NewInMemoryExporter(), tracetest.NewInMemoryExporter()
	adminTP := sdktrace.NewTracerProvider(sdktrace.WithSyncer(adminSpans))
	execTP := sdktrace.NewTracerProvider(sdktrace.WithSyncer(execSpans))
	var adminLog testkit.LogBuffer
	logger := slog.New(tracing.LogHandler{Handler: slog.NewTextHandler(&adminLog, nil)})
	a := startAdminWith(t, admin.Config{TracerProvider: adminTP, Logger: logger}, http.DefaultClient)
	c := newClients(a.URL, http.DefaultClient)

	traced, err := sdkotel.Interceptor(execTP)
	if err != nil {
		t.Fatal(err)
	}
	admintest.StartExecutor(t, sdk.Config{AdminURLs: []string{a.URL}, AppName: "traced", AccessToken: token,
		Interceptors: []connect.Interceptor{traced}}, func(ex *sdk.Executor) {
		ex.Observe(sdkotel.Observer(execTP))
		ex.HandleFunc("spanned", func(ctx context.Context, job *sdk.Job) error {
			if !trace.SpanContextFromContext(ctx).IsValid() {
				return errors.New("the handler's context carries no span")
			}
			return nil
		})
	})

	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "traced"}})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, a.URL, 10*time.Second, func() error {
		res, err := c.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: g.Group.Id})
		if err != nil {
			return err
		}
		if len(res.Group.Addresses) != 1 {
			return fmt.Errorf("group addresses %v, want one", res.Group.Addresses)
		}
		return nil
	})
	job := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "traced", Handler: "spanned", Enabled: true,
		Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "* * * * * ?"}})
	var run *carillonv1.Run
	eventually(t, a.URL, 15*time.Second, func() error {
		for _, r := range listRuns(t, c, job.Id) {
			switch r.Status {
			case carillonv1.RunStatus_RUN_STATUS_SUCCEEDED:
				run = r
				return nil
			case carillonv1.RunStatus_RUN_STATUS_FAILED:
				t.Fatalf("run %d failed: %s", r.Id, r.Message)
			}
		}
		return errors.New("no run succeeded yet")
	})

	// The run's span in the executor, and the fire span it is the child of.
	var runSpan, fireSpan tracetest.SpanStub
	for _, s := range execSpans.GetSpans() {
		if s.Name == "carillon.run" && hasAttr(s, "carillon.run_id", fmt.Sprint(run.Id)) {
			runSpan = s
		}
	}
	if !runSpan.SpanContext.IsValid() {
		t.Fatalf("no carillon.run span of run %d among the executor's spans: %v", run.Id, spanNames(execSpans.GetSpans()))
	}
	eventually(t, a.URL, 5*time.Second, func() error { // the fire span ends just after the call returns
		for _, s := range adminSpans.GetSpans() {
			if s.Name == "carillon.fire" && hasAttr(s, "carillon.run_id", fmt.Sprint(run.Id)) {
				fireSpan = s
				return nil
			}
		}
		return fmt.Errorf("no carillon.fire span of run %d among the admin's spans: %v", run.Id, spanNames(adminSpans.GetSpans()))
	})
	traceID := fireSpan.SpanContext.TraceID()
	if runSpan.Parent.SpanID() != fireSpan.SpanContext.SpanID() || runSpan.SpanContext.TraceID() != traceID {
		t.Errorf("run span: trace %s parent %s; want the fire span's trace %s and id %s",
			runSpan.SpanContext.TraceID(), runSpan.Parent.SpanID(), traceID, fireSpan.SpanContext.SpanID())
	}
	// The call's client span (admin) and server span (executor) are in the
	// fire's trace.
	var client, server bool
	for _, s := range adminSpans.GetSpans() {
		client = client || (s.SpanKind == trace.SpanKindClient && s.SpanContext.TraceID() == traceID &&
			strings.HasPrefix(s.Name, "carillon.v1.ExecutorService/Run"))
	}
	for _, s := range execSpans.GetSpans() {
		server = server || (s.SpanKind == trace.SpanKindServer && s.SpanContext.TraceID() == traceID &&
			strings.HasPrefix(s.Name, "carillon.v1.ExecutorService/Run"))
	}
	if !client || !server {
		t.Errorf("the fire's trace %s has client span %v, server span %v; want both (admin: %v; executor: %v)",
			traceID, client, server, spanNames(adminSpans.GetSpans()), spanNames(execSpans.GetSpans()))
	}
	// The trace id in both processes' log lines: the admin's log, the run's log.
	if want := "trace_id=" + traceID.String(); !strings.Contains(adminLog.String(), want) {
		t.Errorf("the admin's log has no line with %s", want)
	}
	page, err := c.run.ReadRunLog(ctx, &carillonv1.ReadRunLogRequest{RunId: run.Id, FromLine: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("----- run %d started (trace %s)", run.Id, traceID); !strings.Contains(page.Content, want) {
		t.Errorf("run log = %q, want a line %q", page.Content, want)
	}
}

func hasAttr(s tracetest.SpanStub, key, value string) bool {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key && kv.Value.String() == value {
			return true
		}
	}
	return false
}

func spanNames(spans tracetest.SpanStubs) []string {
	names := make([]string, len(spans))
	for i, s := range spans {
		names[i] = s.Name
	}
	return names
}
