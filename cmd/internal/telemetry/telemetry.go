// Package telemetry sets up the bot's OpenTelemetry traces (issue 28,
// docs/telemetry.md): the tracer provider, its OTLP/HTTP exporter (the
// OTel exporter's core with a client of our own, client.go), the
// spans around the model and the chat platforms' API calls, and the flush
// on exit. It is the only package that imports the OpenTelemetry SDK; the
// agent takes a trace.Tracer through its Deps.
//
// Tracing is off unless telemetry.otlp_endpoint or one of the standard
// OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// variables is set, and OTEL_SDK_DISABLED is not true. Off, Start returns
// a Telemetry whose Tracer is nil: no exporter, no goroutine, and the
// agent's helpers return at once.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/countersign/countersign/agent"
)

// Config is the telemetry section:
//
//	telemetry:
//	  otlp_endpoint: http://localhost:4318   # an OTLP/HTTP receiver; traces go to its /v1/traces
type Config struct {
	// OTLPEndpoint is the base URL of an OTLP/HTTP receiver (a collector,
	// Jaeger, Tempo...); the spans are sent to its /v1/traces, as with
	// OTEL_EXPORTER_OTLP_ENDPOINT, which it overrides. Empty: the
	// standard OTEL_EXPORTER_OTLP_* variables decide.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
}

// Validate checks the section; its error names the key and the fix.
func (c Config) Validate() error {
	if c.OTLPEndpoint == "" {
		return nil
	}
	u, err := url.Parse(c.OTLPEndpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("telemetry.otlp_endpoint %q: want the http:// or https:// base URL of an OTLP/HTTP receiver, such as http://localhost:4318 (traces go to its /v1/traces)", c.OTLPEndpoint)
	}
	return nil
}

// The standard variables that turn tracing on or off.
const (
	envEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envDisabled       = "OTEL_SDK_DISABLED"
	envTracesExporter = "OTEL_TRACES_EXPORTER"
)

// Enabled reports whether c and the environment turn tracing on.
func (c Config) Enabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv(envDisabled)), "true") ||
		strings.EqualFold(strings.TrimSpace(getenv(envTracesExporter)), "none") {
		return false
	}
	return c.OTLPEndpoint != "" || getenv(envEndpoint) != "" || getenv(envTracesEndpoint) != ""
}

// serviceName is the service's name in its traces when OTEL_SERVICE_NAME
// (or service.name in OTEL_RESOURCE_ATTRIBUTES) does not give another.
const serviceName = "countersign"

// shutdownTimeout bounds the flush of the spans still queued on exit: an
// unreachable receiver costs the exit at most this long.
const shutdownTimeout = 5 * time.Second

// Telemetry is the process's tracing: a tracer provider exporting over
// OTLP/HTTP, or nothing (tracing off).
type Telemetry struct {
	provider *sdktrace.TracerProvider // nil: off
	tracer   trace.Tracer
}

// Start sets up tracing as c and the environment say; off, it returns a
// Telemetry that does nothing. Export failures are logged once as a
// warning on log (and once more as information when they stop); spans
// that cannot be sent are dropped, and no turn ever waits for an export.
func Start(c Config, getenv func(string) string, version string, log *slog.Logger) (*Telemetry, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if !c.Enabled(getenv) {
		return &Telemetry{}, nil
	}
	ec, err := readExportConfig(c, getenv)
	if err != nil {
		return nil, err
	}
	exp, err := otlptrace.New(context.Background(), newClient(ec, log))
	if err != nil {
		return nil, fmt.Errorf("telemetry: make the OTLP exporter: %w", err)
	}
	res, err := resource.Merge(
		resource.NewSchemaless(semconv.ServiceName(serviceName), semconv.ServiceVersion(version)),
		resource.Environment(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: read OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		// Batched: a turn only queues its spans; a full queue drops them.
		sdktrace.WithBatcher(&warnOnce{SpanExporter: exp, log: log, endpoint: ec.url}),
	)
	log.Info("tracing on: spans go over OTLP/HTTP", "endpoint", ec.url)
	return &Telemetry{provider: tp, tracer: tp.Tracer("github.com/countersign/countersign")}, nil
}

// Tracer is what the agent makes its spans with; nil when tracing is off.
func (t *Telemetry) Tracer() trace.Tracer { return t.tracer }

// Model returns m with a span around each model request (gen_ai.*
// attributes); m itself when tracing is off or there is no model.
func (t *Telemetry) Model(m agent.Model, model string) agent.Model {
	if t.tracer == nil || m == nil {
		return m
	}
	return tracedModel{next: m, tracer: t.tracer, model: model}
}

// Transport returns the chat platform's HTTP transport with a span around
// each API call; nil (the default transport) when tracing is off.
func (t *Telemetry) Transport(platform string) http.RoundTripper {
	if t.tracer == nil {
		return nil
	}
	return &chatTransport{next: http.DefaultTransport, tracer: t.tracer, platform: platform}
}

// Shutdown sends the spans still queued, waiting at most shutdownTimeout,
// and stops the exporter. A failure is logged, never fatal.
func (t *Telemetry) Shutdown(log *slog.Logger) {
	if t.provider == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := t.provider.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.Warn("tracing: flushing the last spans on exit", "error", err)
	}
}
