package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/countersign/countersign/cmd/internal/telemetry/otlptest"
	"github.com/countersign/countersign/internal/testenv"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// exporter is the OTLP exporter with our client, sending to url with the
// default options.
func exporter(t *testing.T, url string) *otlptrace.Exporter {
	t.Helper()
	exp, err := otlptrace.New(context.Background(), newClient(exportConfig{url: url, timeout: defaultTimeout}, slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	return exp
}

func TestValidateNamesTheKey(t *testing.T) {
	for _, tt := range []struct {
		endpoint string
		ok       bool
	}{
		{"", true},
		{"http://localhost:4318", true},
		{"https://otel.example.com/base/", true},
		{"localhost:4318", false},
		{"grpc://localhost:4317", false},
		{"http://", false},
		{"http://c:4318/?x=1", false},
		{"::not a url", false},
	} {
		err := Config{OTLPEndpoint: tt.endpoint}.Validate()
		switch {
		case tt.ok && err != nil:
			t.Errorf("%q: %v, want no error", tt.endpoint, err)
		case !tt.ok && (err == nil || !strings.Contains(err.Error(), "telemetry.otlp_endpoint")):
			t.Errorf("%q: %v, want an error naming telemetry.otlp_endpoint", tt.endpoint, err)
		}
	}
}

func TestEnabled(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  Config
		env  func(string) string
		want bool
	}{
		{"nothing set", Config{}, env(), false},
		{"the key", Config{OTLPEndpoint: "http://c:4318"}, env(), true},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", Config{}, env(envEndpoint, "http://c:4318"), true},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", Config{}, env(envTracesEndpoint, "http://c:4318/v1/traces"), true},
		{"OTEL_SDK_DISABLED wins", Config{OTLPEndpoint: "http://c:4318"}, env(envDisabled, "TRUE"), false},
		{"OTEL_TRACES_EXPORTER=none wins", Config{}, env(envEndpoint, "http://c:4318", envTracesExporter, "none"), false},
		{"only headers", Config{}, env("OTEL_EXPORTER_OTLP_HEADERS", "a=b"), false},
	} {
		if got := tt.cfg.Enabled(tt.env); got != tt.want {
			t.Errorf("%s: Enabled = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestOffIsNothing: off, Start makes no provider, and what it hands out
// is nothing: a nil tracer, the model and the default transport as given.
func TestOffIsNothing(t *testing.T) {
	tel, err := Start(Config{}, env(), "test", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if tel.provider != nil || tel.Tracer() != nil || tel.Transport("slack") != nil || tel.Model(nil, "m") != nil {
		t.Errorf("tracing off made something: %+v", tel)
	}
	tel.Shutdown(slog.New(slog.DiscardHandler)) // nothing to flush
}

// TestStartSendsToTheKeyAndServiceName: the key's URL gets /v1/traces,
// OTEL_SERVICE_NAME names the service, and Shutdown flushes.
func TestStartSendsToTheKeyAndServiceName(t *testing.T) {
	t.Setenv("OTEL_SERVICE_NAME", "cs-test")
	rcv := otlptest.New(t)
	tel, err := Start(Config{OTLPEndpoint: rcv.URL() + "/"}, env(), "v9", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	_, sp := tel.Tracer().Start(context.Background(), "one")
	sp.End()
	tel.Shutdown(slog.New(slog.DiscardHandler))
	got := rcv.Named("one")
	if len(got) != 1 {
		t.Fatalf("%d spans named one after Shutdown, want 1", len(got))
	}
	if got[0].Resource["service.name"] != "cs-test" || got[0].Resource["service.version"] != "v9" {
		t.Errorf("resource = %v, want service.name cs-test (OTEL_SERVICE_NAME) and service.version v9", got[0].Resource)
	}
}

// TestUnreachableWarnsOnce: every export to a receiver that is not there
// fails fast and is dropped, and only the first is said.
func TestUnreachableWarnsOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var log bytes.Buffer
	w := &warnOnce{SpanExporter: exporter(t, "http://"+addr+"/v1/traces"), log: slog.New(slog.NewTextHandler(&log, nil)), endpoint: addr}
	spans := tracetest.SpanStubs{{Name: "x"}}.Snapshots()
	for range 3 {
		start := time.Now()
		if err := w.ExportSpans(context.Background(), spans); err != nil {
			t.Fatalf("ExportSpans = %v, want nil (dropped)", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("an export to a closed port took %s", d)
		}
	}
	if n := strings.Count(log.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings after three failed exports, want 1:\n%s", n, log.String())
	}
	// Back: said once, and a later failure is said again.
	rcv := otlptest.New(t)
	w.SpanExporter = exporter(t, rcv.URL()+"/v1/traces")
	_ = w.ExportSpans(context.Background(), spans)
	if !strings.Contains(log.String(), "takes spans again") {
		t.Errorf("no word that the receiver is back:\n%s", log.String())
	}
	testenv.Eventually(t, 5*time.Second, func() bool { return len(rcv.Named("x")) == 1 }, "the span at the receiver")
}

// TestShutdownIsBounded: a receiver that never answers holds the exit
// no longer than shutdownTimeout.
func TestShutdownIsBounded(t *testing.T) {
	tel, err := Start(Config{OTLPEndpoint: silent(t)}, env(), "test", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	_, sp := tel.Tracer().Start(context.Background(), "stuck")
	sp.End()
	start := time.Now()
	tel.Shutdown(slog.New(slog.DiscardHandler))
	if d := time.Since(start); d > shutdownTimeout+2*time.Second {
		t.Errorf("Shutdown took %s with a silent receiver, want at most about %s", d, shutdownTimeout)
	}
}

// silent is the base URL of a receiver that accepts connections and never
// answers, closed when the test ends.
func silent(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return "http://" + ln.Addr().String()
}

func TestAPIMethod(t *testing.T) {
	for path, want := range map[string]string{
		"/api/chat.postMessage":                                              "chat.postMessage",
		"/api/v10/channels/123456789012345678/messages":                      "/channels/{id}/messages",
		"/api/v9/interactions/1234/" + strings.Repeat("a", 60) + "/callback": "/interactions/{id}/{id}/callback",
		"/chat.update": "chat.update",
	} {
		if got := apiMethod(path); got != want {
			t.Errorf("apiMethod(%q) = %q, want %q", path, got, want)
		}
	}
}

var _ sdktrace.SpanExporter = (*warnOnce)(nil)
