package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpClient is the OTLP exporter's client: each batch of spans, which
// otlptrace has already turned into OTLP's ResourceSpans, goes as one
// OTLP/HTTP request with a binary protobuf body. It stands in for
// otlptracehttp, whose generated collector package brings gRPC,
// grpc-gateway and genproto into the binary although nothing here speaks
// gRPC (docs/telemetry.md has the figures). A failed request is an error
// to the exporter (and warnOnce); it is not retried: the batch processor
// sends the next batch soon.
type otlpClient struct {
	cfg  exportConfig
	http *http.Client
	log  *slog.Logger

	partial sync.Once // a receiver's partial success is said once
}

var _ otlptrace.Client = (*otlpClient)(nil)

// maxAnswer bounds how much of a receiver's answer is read.
const maxAnswer = 64 << 10

// newClient makes the client of cfg.
func newClient(cfg exportConfig, log *slog.Logger) *otlpClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.tls != nil {
		tr.TLSClientConfig = cfg.tls
	}
	return &otlpClient{cfg: cfg, http: &http.Client{Transport: tr}, log: log}
}

// Start does nothing: a connection is made by the first export.
func (c *otlpClient) Start(context.Context) error { return nil }

// Stop closes the idle connections; an export under way ends on its own.
func (c *otlpClient) Stop(context.Context) error {
	c.http.CloseIdleConnections()
	return nil
}

// UploadTraces sends one batch, waiting at most the export's timeout.
func (c *otlpClient) UploadTraces(ctx context.Context, rs []*tracepb.ResourceSpans) error {
	// The body is an ExportTraceServiceRequest. Its one field,
	// `repeated ResourceSpans resource_spans = 1;` (opentelemetry-proto's
	// collector/trace/v1/trace_service.proto), is TracesData's one field
	// too (trace/v1/trace.proto), so the two have the same wire bytes;
	// TracesData's Go package needs no gRPC, the collector's does.
	body, err := proto.Marshal(&tracepb.TracesData{ResourceSpans: rs})
	if err != nil {
		return fmt.Errorf("encode spans: %w", err)
	}
	if c.cfg.gzip {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		_, _ = w.Write(body) // a bytes.Buffer takes everything
		if err := w.Close(); err != nil {
			return fmt.Errorf("gzip spans: %w", err)
		}
		body = z.Bytes()
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("export spans: %w", err)
	}
	req.Header.Set("User-Agent", "countersign")
	for k, v := range c.cfg.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", protobufType)
	if c.cfg.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("export spans: %w", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if resp.StatusCode/100 != 2 {
		return refused(resp, answer)
	}
	if err != nil {
		return nil // the spans were taken; only the answer was cut
	}
	if rejected, msg := partialSuccess(resp.Header.Get("Content-Type"), answer); rejected > 0 || msg != "" {
		c.partial.Do(func() {
			c.log.Warn("tracing: the OTLP receiver took a batch but rejected some of its spans (said once)",
				"endpoint", c.cfg.url, "rejected", rejected, "message", msg)
		})
	}
	return nil
}
