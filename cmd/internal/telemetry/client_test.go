package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/countersign/countersign/cmd/internal/telemetry/otlptest"
)

// sendOne starts tracing with the variables kv, ends one span named name
// and flushes it.
func sendOne(t *testing.T, name string, kv ...string) {
	t.Helper()
	tel, err := Start(Config{}, env(kv...), "test", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	_, sp := tel.Tracer().Start(context.Background(), name)
	sp.End()
	tel.Shutdown(slog.New(slog.DiscardHandler))
}

// TestGzipAndHeadersReachTheReceiver: with gzip on, the receiver (which
// decodes the real ExportTraceServiceRequest) reads the gzipped body, and
// the headers arrive percent-decoded.
func TestGzipAndHeadersReachTheReceiver(t *testing.T) {
	rcv := otlptest.New(t)
	sendOne(t, "zipped", envEndpoint, rcv.URL(),
		"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip", "OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=k%3D1,x-team=ops")
	if len(rcv.Named("zipped")) != 1 {
		t.Fatalf("spans at the receiver: %+v, want the one named zipped", rcv.Spans())
	}
	h := rcv.Headers()[0]
	if h.Get("Content-Encoding") != "gzip" || h.Get("X-Api-Key") != "k=1" || h.Get("X-Team") != "ops" {
		t.Errorf("request headers = %v, want Content-Encoding gzip, X-Api-Key k=1, X-Team ops", h)
	}
}

// TestTracesEndpointIsUsedAsIs: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT gets no
// /v1/traces of its own.
func TestTracesEndpointIsUsedAsIs(t *testing.T) {
	rcv := otlptest.NewAt(t, "/otlp/spans")
	sendOne(t, "as-is", envTracesEndpoint, rcv.URL()+"/otlp/spans")
	if len(rcv.Named("as-is")) != 1 {
		t.Errorf("spans at /otlp/spans: %+v, want the one named as-is", rcv.Spans())
	}
}

// TestRefusedWarnsOnceNamingTheStatus: a non-2xx answer is an export error
// that names the status and the google.rpc.Status's message, said once
// however many batches are refused.
func TestRefusedWarnsOnceNamingTheStatus(t *testing.T) {
	rcv := otlptest.New(t)
	rcv.Refuse(503, "the collector is overloaded")
	var log bytes.Buffer
	w := &warnOnce{SpanExporter: exporter(t, rcv.URL()+"/v1/traces"), log: slog.New(slog.NewTextHandler(&log, nil)), endpoint: rcv.URL()}
	spans := tracetest.SpanStubs{{Name: "x"}}.Snapshots()
	for range 3 {
		_ = w.ExportSpans(context.Background(), spans)
	}
	if n := strings.Count(log.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings after three refused exports, want 1:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), "503 Service Unavailable: the collector is overloaded") {
		t.Errorf("the warning does not name the status and its message:\n%s", log.String())
	}
	if len(rcv.Headers()) != 3 {
		t.Errorf("%d requests, want 3 (one per batch, no retries)", len(rcv.Headers()))
	}
	rcv.Refuse(0, "")
	_ = w.ExportSpans(context.Background(), spans)
	if !strings.Contains(log.String(), "takes spans again") || len(rcv.Named("x")) != 1 {
		t.Errorf("after the refusals ended: spans %+v, log:\n%s", rcv.Spans(), log.String())
	}
}

// TestPartialSuccessIsSaidOnce: a 2xx answer that rejected some spans is
// no export error, and is logged once.
func TestPartialSuccessIsSaidOnce(t *testing.T) {
	rcv := otlptest.New(t)
	rcv.RejectSpans(1, "span name too long")
	var log bytes.Buffer
	c := newClient(exportConfig{url: rcv.URL() + "/v1/traces", timeout: defaultTimeout}, slog.New(slog.NewTextHandler(&log, nil)))
	for range 2 {
		if err := c.UploadTraces(context.Background(), nil); err != nil {
			t.Fatalf("UploadTraces = %v, want nil (a partial success)", err)
		}
	}
	if n := strings.Count(log.String(), "rejected=1"); n != 1 || !strings.Contains(log.String(), "span name too long") {
		t.Errorf("want one warning naming 1 rejected span and the receiver's message:\n%s", log.String())
	}
}

// TestTimeoutBoundsAnExport: an export to a receiver that never answers
// ends at OTEL_EXPORTER_OTLP_TIMEOUT.
func TestTimeoutBoundsAnExport(t *testing.T) {
	ec, err := readExportConfig(Config{}, env(envEndpoint, silent(t), "OTEL_EXPORTER_OTLP_TIMEOUT", "200"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = newClient(ec, slog.New(slog.DiscardHandler)).UploadTraces(context.Background(), nil)
	if d := time.Since(start); err == nil || d > 3*time.Second {
		t.Errorf("UploadTraces to a silent receiver = %v after %s, want an error after about 200ms", err, d)
	}
}

// TestCertificateTrustsTheReceiver: OTEL_EXPORTER_OTLP_CERTIFICATE is the
// CA a TLS receiver is checked against; without it, its certificate is
// not trusted and the span does not arrive.
func TestCertificateTrustsTheReceiver(t *testing.T) {
	rcv := otlptest.NewTLS(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, rcv.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	sendOne(t, "untrusted", envEndpoint, rcv.URL())
	sendOne(t, "trusted", envEndpoint, rcv.URL(), "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", ca)
	if len(rcv.Named("trusted")) != 1 || len(rcv.Named("untrusted")) != 0 {
		t.Errorf("spans at the TLS receiver: %+v, want only the one sent with its CA", rcv.Spans())
	}
}
