package telemetry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTracesEndpoint: the key and OTEL_EXPORTER_OTLP_ENDPOINT are base URLs
// that get /v1/traces; OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as is;
// the key wins, then the traces variable.
func TestTracesEndpoint(t *testing.T) {
	for _, tt := range []struct {
		name string
		key  string
		env  func(string) string
		want string
	}{
		{"the key", "http://c:4318", env(), "http://c:4318/v1/traces"},
		{"the key with a path and a slash", "https://c/base/", env(), "https://c/base/v1/traces"},
		{"the base variable", "", env(envEndpoint, "http://c:4318"), "http://c:4318/v1/traces"},
		{"the base variable with a slash", "", env(envEndpoint, "http://c:4318/"), "http://c:4318/v1/traces"},
		{"the base variable with a path", "", env(envEndpoint, "https://otlp.example.com/otlp"), "https://otlp.example.com/otlp/v1/traces"},
		{"the traces variable as is", "", env(envTracesEndpoint, "http://c:4318/custom/path"), "http://c:4318/custom/path"},
		{"the traces variable without a path", "", env(envTracesEndpoint, "http://c:4318"), "http://c:4318"},
		{"the traces variable over the base", "", env(envEndpoint, "http://a:4318", envTracesEndpoint, "http://b:4318/t"), "http://b:4318/t"},
		{"the key over both", "http://k:4318", env(envEndpoint, "http://a:4318", envTracesEndpoint, "http://b:4318/t"), "http://k:4318/v1/traces"},
	} {
		got, err := tracesEndpoint(Config{OTLPEndpoint: tt.key}, tt.env)
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

// TestParseHeaders: the specification's key=value list, values
// percent-decoded.
func TestParseHeaders(t *testing.T) {
	got, err := parseHeaders(" x-api-key = s%3Dcret%20one ,Authorization=Basic%20dXNlcjpwdw==,, x-team=ops")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"x-api-key": "s=cret one", "Authorization": "Basic dXNlcjpwdw==", "x-team": "ops"}
	if len(got) != len(want) {
		t.Errorf("headers = %q, want %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("header %s = %q, want %q", k, got[k], v)
		}
	}
}

// TestBadValuesNameTheirVariable: each unusable value stops the start with
// an error naming its variable, and a header's value (a secret, often) is
// not repeated.
func TestBadValuesNameTheirVariable(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{envEndpoint, "http://c:4318"}
	for _, tt := range []struct {
		env  []string
		want string
	}{
		{[]string{envEndpoint, "c:4318"}, envEndpoint},
		{[]string{envTracesEndpoint, "ftp://c/v1/traces"}, envTracesEndpoint},
		{[]string{"OTEL_EXPORTER_OTLP_TIMEOUT", "10s"}, "OTEL_EXPORTER_OTLP_TIMEOUT"},
		{[]string{"OTEL_EXPORTER_OTLP_TIMEOUT", "0"}, "OTEL_EXPORTER_OTLP_TIMEOUT"},
		{[]string{"OTEL_EXPORTER_OTLP_TIMEOUT", "5000", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "-1"}, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"},
		{[]string{"OTEL_EXPORTER_OTLP_COMPRESSION", "br"}, "OTEL_EXPORTER_OTLP_COMPRESSION"},
		{[]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"}, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"},
		{[]string{"OTEL_EXPORTER_OTLP_HEADERS", "x-api-key:topsecret"}, "OTEL_EXPORTER_OTLP_HEADERS"},
		{[]string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-api-key=top%zzsecret"}, "OTEL_EXPORTER_OTLP_TRACES_HEADERS"},
		{[]string{"OTEL_EXPORTER_OTLP_CERTIFICATE", filepath.Join(dir, "missing.pem")}, "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{[]string{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", notPEM}, "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE"},
		{[]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", notPEM}, "OTEL_EXPORTER_OTLP_CLIENT_KEY"},
	} {
		kv := tt.env
		if kv[0] != envEndpoint && kv[0] != envTracesEndpoint {
			kv = append(append([]string(nil), base...), kv...)
		}
		_, err := Start(Config{}, env(kv...), "test", nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: Start = %v, want an error naming %s", tt.env, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "topsecret") {
			t.Errorf("%q: the error repeats a header's value: %v", tt.env, err)
		}
	}
}

// TestExportOptions: the timeout in milliseconds (10 s unless said), the
// traces variables over the general ones, gzip.
func TestExportOptions(t *testing.T) {
	ec, err := readExportConfig(Config{OTLPEndpoint: "http://c:4318"}, env())
	if err != nil || ec.timeout != defaultTimeout || ec.gzip || ec.headers != nil || ec.tls != nil {
		t.Errorf("defaults = %+v, %v; want a 10s timeout and nothing else", ec, err)
	}
	ec, err = readExportConfig(Config{OTLPEndpoint: "http://c:4318"}, env(
		"OTEL_EXPORTER_OTLP_TIMEOUT", "5000", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "2500",
		"OTEL_EXPORTER_OTLP_COMPRESSION", "gzip",
		"OTEL_EXPORTER_OTLP_HEADERS", "a=1", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "b=2",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"))
	if err != nil {
		t.Fatal(err)
	}
	if ec.timeout != 2500*time.Millisecond || !ec.gzip || len(ec.headers) != 1 || ec.headers["b"] != "2" {
		t.Errorf("options = %+v; want a 2.5s timeout, gzip, and only the traces headers", ec)
	}
}
