package tracing

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

func TestEnabled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, false},
		{map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false},
	} {
		if got := Enabled(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("Enabled(%v) = %v, want %v", tc.env, got, tc.want)
		}
	}
}

func TestFromEnvOff(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER"} {
		t.Setenv(k, "")
	}
	tp, stop, err := FromEnv(context.Background(), ServiceNameDefault)
	if err != nil || tp != nil {
		t.Fatalf("FromEnv without OTEL_* = %v, %v; want nil, nil", tp, err)
	}
	if err := stop(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestLogHandler(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(LogHandler{Handler: slog.NewTextHandler(&buf, nil)}).With("app", "x")
	tid, _ := trace.TraceIDFromHex("0123456789abcdef0123456789abcdef")
	sid, _ := trace.SpanIDFromHex("0123456789abcdef")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}))
	log.InfoContext(ctx, "sent")
	log.Info("plain")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "trace_id=0123456789abcdef0123456789abcdef span_id=0123456789abcdef") ||
		strings.Contains(lines[1], "trace_id") || !strings.Contains(lines[0], "app=x") {
		t.Errorf("log = %q: want the trace and span ids on the first line only", buf.String())
	}
}
