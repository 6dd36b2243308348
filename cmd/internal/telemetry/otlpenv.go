package telemetry

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// exportConfig is where and how the spans are sent: what the OTLP
// exporter specification's options say, read once at start from the key
// and the standard OTEL_EXPORTER_OTLP_* variables. Each option has a
// general variable and a traces-only one (…_TRACES_…), which replaces it.
type exportConfig struct {
	url     string // the traces URL, such as http://localhost:4318/v1/traces
	headers map[string]string
	gzip    bool
	timeout time.Duration
	tls     *tls.Config // nil: Go's defaults (the system's roots)
}

// defaultTimeout is an export's time limit when OTEL_EXPORTER_OTLP_TIMEOUT
// does not say (the specification's 10 s).
const defaultTimeout = 10 * time.Second

// tracesPath is appended to a base URL (the key, OTEL_EXPORTER_OTLP_ENDPOINT).
const tracesPath = "/v1/traces"

// readExportConfig reads the exporter's options. Each bad value is an
// error that names its variable and says what it wants; a header's value
// (an API key, often) is never repeated in it.
func readExportConfig(c Config, getenv func(string) string) (exportConfig, error) {
	// opt is a traces-only variable's value, else the general one's, and
	// which of the two it came from.
	opt := func(name string) (string, string) {
		traces := "OTEL_EXPORTER_OTLP_TRACES_" + name
		if v := strings.TrimSpace(getenv(traces)); v != "" {
			return v, traces
		}
		general := "OTEL_EXPORTER_OTLP_" + name
		return strings.TrimSpace(getenv(general)), general
	}
	var ec exportConfig
	var err error
	if ec.url, err = tracesEndpoint(c, getenv); err != nil {
		return ec, err
	}
	if v, name := opt("PROTOCOL"); v != "" && v != "http/protobuf" {
		return ec, fmt.Errorf("%s=%q: countersign sends traces only as http/protobuf (OTLP over HTTP); unset it or set it to http/protobuf", name, v)
	}
	if v, name := opt("HEADERS"); v != "" {
		if ec.headers, err = parseHeaders(v); err != nil {
			return ec, fmt.Errorf("%s: %w", name, err)
		}
	}
	switch v, name := opt("COMPRESSION"); v {
	case "", "none":
	case "gzip":
		ec.gzip = true
	default:
		return ec, fmt.Errorf("%s=%q: want gzip or none", name, v)
	}
	ec.timeout = defaultTimeout
	if v, name := opt("TIMEOUT"); v != "" {
		ms, err := strconv.ParseUint(v, 10, 32)
		if err != nil || ms == 0 {
			return ec, fmt.Errorf("%s=%q: want an export's time limit in milliseconds, such as 10000 (the default)", name, v)
		}
		ec.timeout = time.Duration(ms) * time.Millisecond
	}
	ec.tls, err = readTLS(opt)
	return ec, err
}

// tracesEndpoint is the traces URL. The key and OTEL_EXPORTER_OTLP_ENDPOINT
// are base URLs, to whose path /v1/traces is appended (the specification's
// "Endpoint URLs for OTLP/HTTP"); OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is the
// traces URL itself, used as is. The key wins over both variables.
func tracesEndpoint(c Config, getenv func(string) string) (string, error) {
	if c.OTLPEndpoint != "" { // checked by Validate
		return joinTraces(c.OTLPEndpoint), nil
	}
	for _, name := range []string{envTracesEndpoint, envEndpoint} {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			example := "http://localhost:4318"
			if name == envTracesEndpoint {
				example += tracesPath
			}
			return "", fmt.Errorf("%s=%q: want an http:// or https:// URL, such as %s", name, v, example)
		}
		if name == envTracesEndpoint {
			return v, nil
		}
		return joinTraces(v), nil
	}
	return "", fmt.Errorf("telemetry: no OTLP endpoint (telemetry.otlp_endpoint, %s or %s)", envEndpoint, envTracesEndpoint)
}

// joinTraces appends /v1/traces to a base URL's path, with one slash
// between them, keeping the rest of the URL.
func joinTraces(base string) string {
	u, err := url.Parse(base)
	if err != nil { // checked before; keep the text as it is
		return strings.TrimSuffix(base, "/") + tracesPath
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + tracesPath
	u.RawPath = ""
	return u.String()
}

// parseHeaders reads the specification's header list: key=value pairs
// separated by commas (W3C Baggage's form), each value percent-decoded.
func parseHeaders(list string) (map[string]string, error) {
	out := map[string]string{}
	for i, pair := range strings.Split(list, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || !validHeaderName(k) {
			return nil, fmt.Errorf("entry %d is not a key=value pair with a header name as its key (want, for example, x-api-key=abc123,x-team=ops)", i+1)
		}
		dec, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("the value of %s is not percent-encoded text (a %% must be followed by two hex digits)", k)
		}
		out[k] = dec
	}
	return out, nil
}

// validHeaderName reports whether s is an HTTP field name (RFC 9110's token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r >= 0x7f || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

// readTLS reads the certificate options: the receiver's CA (…_CERTIFICATE)
// and the client's own certificate and key for mutual TLS, each a PEM file.
// None set: nil, Go's defaults.
func readTLS(opt func(string) (string, string)) (*tls.Config, error) {
	ca, caName := opt("CERTIFICATE")
	cert, certName := opt("CLIENT_CERTIFICATE")
	key, keyName := opt("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: read the receiver's CA certificate: %w", caName, err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s=%q: no PEM certificate in it", caName, ca)
		}
	}
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("%s and %s: set both (the client's certificate and its key, PEM files) or neither", certName, keyName)
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s and %s: load the client's certificate and key: %w", certName, keyName, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
