package telemetry

import (
	"context"
	"log/slog"
	"sync"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// warnOnce is the exporter as the batch processor sees it: a failed
// export drops its spans and is said once, as a warning; the failures
// after it are not said again until an export succeeds, which is said
// once too. It returns no error to the processor, so nothing reaches
// OpenTelemetry's global error handler (which would print every one).
type warnOnce struct {
	sdktrace.SpanExporter
	log      *slog.Logger
	endpoint string

	mu      sync.Mutex
	failing bool
}

// ExportSpans sends spans, or drops them and warns the first time.
func (w *warnOnce) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := w.SpanExporter.ExportSpans(ctx, spans)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err != nil && !w.failing:
		w.failing = true
		w.log.Warn("tracing: the OTLP receiver cannot be reached; spans are dropped until it can (said once)",
			"endpoint", w.endpoint, "dropped", len(spans), "error", err)
	case err == nil && w.failing:
		w.failing = false
		w.log.Info("tracing: the OTLP receiver takes spans again", "endpoint", w.endpoint)
	}
	return nil
}
