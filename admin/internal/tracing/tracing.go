// Package tracing sets up the admin's OpenTelemetry tracing from the
// standard OTEL_* environment variables, and puts trace ids in its log.
//
// Tracing is opt-in: it is on when an OTLP endpoint is configured
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or
// OTEL_TRACES_EXPORTER=otlp, and off when OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none. Spans are exported over OTLP/HTTP (protobuf);
// the exporter reads its endpoint, headers, timeout and TLS settings from
// the OTEL_EXPORTER_OTLP_* variables, the sampler from OTEL_TRACES_SAMPLER
// and OTEL_TRACES_SAMPLER_ARG (default: parentbased_always_on), the
// service name from OTEL_SERVICE_NAME (default: the name given to
// FromEnv) and attributes from OTEL_RESOURCE_ATTRIBUTES.
package tracing

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// ServiceNameDefault is the admin's service.name unless OTEL_SERVICE_NAME
// says otherwise.
const ServiceNameDefault = "carillon-admin"

// Enabled says whether the environment asks for tracing (see the package
// documentation); getenv reads it.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	switch strings.ToLower(getenv("OTEL_TRACES_EXPORTER")) {
	case "none":
		return false
	case "otlp":
		return true
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// FromEnv returns the tracer provider the OTEL_* environment configures,
// with service name service unless OTEL_SERVICE_NAME is set, and the
// function that flushes and stops it; or nil and a no-op when the
// environment does not ask for tracing.
func FromEnv(ctx context.Context, service string) (trace.TracerProvider, func(context.Context) error, error) {
	if !Enabled(os.Getenv) {
		return nil, func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(),
		resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(service)))
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: resource: %w", err)
	}
	// The environment (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) wins.
	env, err := resource.New(ctx, resource.WithFromEnv())
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: resource from the environment: %w", err)
	}
	if res, err = resource.Merge(res, env); err != nil {
		return nil, nil, fmt.Errorf("tracing: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}
