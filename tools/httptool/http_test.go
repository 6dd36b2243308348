package httptool

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/tools"
)

func newTool(t testing.TB, cfg Config) *Tool {
	t.Helper()
	tool, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { tool.Close() })
	return tool
}

// loopback allows the httptest servers, which listen on 127.0.0.1.
var loopback = Config{AllowCIDRs: []string{"127.0.0.1/32"}}

func do(t testing.TB, tool *Tool, method, url string, extra map[string]any) tools.Result {
	t.Helper()
	a := map[string]any{"method": method, "url": url}
	for k, v := range extra {
		a[k] = v
	}
	raw, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Run(context.Background(), raw, tools.RunOptions{})
}

// counting is a test server that counts the requests it gets.
func counting(t testing.TB, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestRequests(t *testing.T) {
	srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Set-Cookie", "session=secret")
		w.Header().Set("X-Test-Seen", r.Header.Get("X-Test"))
		if r.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
		}
		fmt.Fprintf(w, "%s %s ua=%s body=%s", r.Method, r.URL.Path, r.UserAgent(), body)
	})
	tool := newTool(t, loopback)
	tests := []struct {
		name   string
		method string
		path   string
		extra  map[string]any
		code   int
		body   string
	}{
		{name: "get", method: "GET", path: "/hello", code: 200, body: "GET /hello ua=countersign body="},
		{name: "lower-case method", method: "get", path: "/x", code: 200, body: "GET /x ua=countersign body="},
		{name: "post with body and headers", method: "POST", path: "/p",
			extra: map[string]any{"body": `{"a":1}`, "headers": map[string]string{"X-Test": "yes", "User-Agent": "me"}},
			code:  200, body: `POST /p ua=me body={"a":1}`},
		{name: "not found is still a response", method: "GET", path: "/missing", code: 404, body: "GET /missing ua=countersign body="},
		{name: "head has no body", method: "HEAD", path: "/h", code: 200},
		{name: "risk_level is accepted", method: "GET", path: "/r", extra: map[string]any{"risk_level": "low"}, code: 200, body: "GET /r ua=countersign body="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := do(t, tool, tt.method, srv.URL+tt.path, tt.extra)
			if res.Status != tools.StatusOK || !res.Executed || res.HTTPStatus != tt.code || res.Body != tt.body {
				t.Fatalf("got %s", res.JSON())
			}
			if res.Headers["Content-Type"] != "text/plain; charset=utf-8" {
				t.Errorf("headers %v lack Content-Type", res.Headers)
			}
			if _, ok := res.Headers["Set-Cookie"]; ok {
				t.Errorf("Set-Cookie is not a selected header: %v", res.Headers)
			}
		})
	}
}

func TestHTTPS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "secure")
	}))
	defer srv.Close()
	tool := newTool(t, loopback)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tool.transport.TLSClientConfig = &tls.Config{RootCAs: pool}
	if res := do(t, tool, "GET", srv.URL, nil); res.Status != tools.StatusOK || res.Body != "secure" {
		t.Fatalf("got %s", res.JSON())
	}
}

// The fence holds with the assessor bypassed: loopback is refused unless
// allowed, and the server never sees the request.
func TestLoopbackRefusedByDefault(t *testing.T) {
	srv, hits := counting(t, func(w http.ResponseWriter, r *http.Request) {})
	tool := newTool(t, Config{})
	res := do(t, tool, "GET", srv.URL, nil)
	if res.Status != tools.StatusDenied || res.Executed || !strings.Contains(res.Error, "private, loopback") {
		t.Fatalf("got %s", res.JSON())
	}
	if hits.Load() != 0 {
		t.Fatalf("the server got %d requests", hits.Load())
	}
}

func TestAllowHosts(t *testing.T) {
	srv, hits := counting(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	tool := newTool(t, Config{AllowHosts: []string{"LocalHost."}})
	if res := do(t, tool, "GET", fmt.Sprintf("http://localhost:%d/", port), nil); res.Status != tools.StatusOK || res.Body != "ok" {
		t.Fatalf("allowed host: %s", res.JSON())
	}
	if res := do(t, tool, "GET", fmt.Sprintf("http://127.0.0.1:%d/", port), nil); res.Status != tools.StatusDenied {
		t.Fatalf("the address of an allowed host is not itself allowed: %s", res.JSON())
	}
	if hits.Load() != 1 {
		t.Fatalf("the server got %d requests, want 1", hits.Load())
	}
}

// Metadata addresses are refused in every spelling, even with everything
// else allowed, by the dialer itself and before any packet is sent.
func TestMetadataIsAlwaysRefused(t *testing.T) {
	tool := newTool(t, Config{
		AllowCIDRs: []string{"0.0.0.0/0", "::/0"},
		AllowHosts: []string{"169.254.169.254", "metadata.google.internal"},
	})
	urls := []string{
		"http://169.254.169.254/latest/meta-data/",
		"http://2852039166/",
		"http://0xa9fea9fe/",
		"http://0xA9.0xFE.0xA9.0xFE/",
		"http://0251.0376.0251.0376/",
		"http://0251.254.169.254/",
		"http://169.254.43518/",
		"http://169.16689662/",
		"http://[::ffff:169.254.169.254]/",
		"http://[::ffff:a9fe:a9fe]/",
		"http://[0:0:0:0:0:ffff:a9fe:a9fe]:80/",
		"http://[64:ff9b::a9fe:a9fe]/",
		"http://[fd00:ec2::254]/latest/meta-data/",
		"http://[fe80::1]/",
		"http://[fe80::1%25eth0]/",
		"http://100.100.100.200/latest/meta-data/",
		"https://169.254.169.254/",
		"http://169.254.169.254:8080/",
		"http://0.0.0.0/",
		"http://0/",
		"http://[::]/",
	}
	for _, u := range urls {
		t.Run(u, func(t *testing.T) {
			start := time.Now()
			res := do(t, tool, "GET", u, nil)
			if res.Status != tools.StatusDenied || res.Executed || !strings.Contains(res.Error, "always refused") {
				t.Fatalf("got %s", res.JSON())
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("refusal took %v: it should not wait for the network", took)
			}
		})
	}
}

// The dialer refuses on its own: no URL check in front of it.
func TestDialerGuardRefusesDirectly(t *testing.T) {
	tool := newTool(t, Config{AllowCIDRs: []string{"0.0.0.0/0"}})
	d := tool.transport.DialContext
	for _, addr := range []string{"169.254.169.254:80", "2852039166:80", "[::ffff:a9fe:a9fe]:80"} {
		conn, err := d(context.Background(), "tcp", addr)
		if conn != nil {
			conn.Close()
		}
		var re *RefusedError
		if !errorsAs(err, &re) {
			t.Errorf("dial %s: %v, want a RefusedError", addr, err)
		}
	}
}

func TestRedirects(t *testing.T) {
	// A second server on another loopback address, which is not allowed.
	var otherHits atomic.Int64
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	if l, err := net.Listen("tcp", "127.0.0.2:0"); err == nil {
		other.Listener.Close()
		other.Listener = l
	}
	other.Start()
	defer other.Close()
	otherURL := other.URL
	if strings.Contains(otherURL, "127.0.0.1") {
		otherURL = "" // cannot listen on 127.0.0.2 here
	}

	var srv *httptest.Server
	srv, hits := counting(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/decimal":
			http.Redirect(w, r, "http://2852039166/", http.StatusFound)
		case "/other":
			http.Redirect(w, r, otherURL+"/", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/once":
			http.Redirect(w, r, "/final", http.StatusMovedPermanently)
		default:
			fmt.Fprint(w, "final")
		}
	})
	tool := newTool(t, Config{AllowCIDRs: []string{"127.0.0.1/32"}, MaxRedirects: 2})

	for _, path := range []string{"/metadata", "/decimal"} {
		res := do(t, tool, "GET", srv.URL+path, nil)
		if res.Status != tools.StatusError || !res.Executed || !strings.Contains(res.Error, "was not followed") || !strings.Contains(res.Error, "always refused") {
			t.Errorf("%s: got %s", path, res.JSON())
		}
	}
	if otherURL != "" {
		res := do(t, tool, "GET", srv.URL+"/other", nil)
		if res.Status != tools.StatusError || !strings.Contains(res.Error, "was not followed") {
			t.Errorf("redirect to an unallowed loopback address: %s", res.JSON())
		}
		if otherHits.Load() != 0 {
			t.Errorf("the unallowed server got %d requests", otherHits.Load())
		}
	} else {
		t.Log("skipping the 127.0.0.2 case: cannot listen there")
	}

	hits.Store(0)
	res := do(t, tool, "GET", srv.URL+"/loop", nil)
	if res.Status != tools.StatusError || !strings.Contains(res.Error, "stopped after 2 redirects") || hits.Load() != 3 {
		t.Errorf("redirect loop: %d requests, %s", hits.Load(), res.JSON())
	}

	res = do(t, tool, "GET", srv.URL+"/once", nil)
	var info map[string]any
	_ = json.Unmarshal(res.Data, &info)
	if res.Status != tools.StatusOK || res.Body != "final" || info["redirects"] != 1.0 || info["final_url"] != srv.URL+"/final" {
		t.Errorf("one redirect: %s", res.JSON())
	}

	none := newTool(t, Config{AllowCIDRs: []string{"127.0.0.1/32"}, MaxRedirects: -1})
	res = none.Run(context.Background(), json.RawMessage(`{"method":"GET","url":"`+srv.URL+`/once"}`), tools.RunOptions{})
	if res.Status != tools.StatusOK || res.HTTPStatus != http.StatusMovedPermanently || res.Headers["Location"] != "/final" {
		t.Errorf("redirects off: %s", res.JSON())
	}
}

func TestBodyCaps(t *testing.T) {
	big := strings.Repeat("x", 2<<20)
	srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			fmt.Fprint(w, big)
		case "/medium":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, strings.Repeat("é", 2500)) // 5,000 bytes
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			w.Write([]byte("caf\xe9"))
		}
	})
	tool := newTool(t, Config{AllowCIDRs: loopback.AllowCIDRs, MaxBodyText: 1001})
	tests := []struct {
		path      string
		bodyLen   int
		truncated bool
		note      string
	}{
		{path: "/big", bodyLen: 1001, truncated: true, note: "longer than 1,048,576 bytes; reading stopped there; only the first 1,001 bytes"},
		{path: "/medium", bodyLen: 1000, truncated: true, note: "the body was 5,000 bytes; only the first 1,000 are shown"},
		{path: "/png", bodyLen: 0, note: "the body is binary (image/png, 16 bytes read)"},
		{path: "/latin1", bodyLen: 4},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res := do(t, tool, "GET", srv.URL+tt.path, nil)
			if res.Status != tools.StatusOK || len(res.Body) != tt.bodyLen || res.Truncated != tt.truncated || !strings.Contains(res.Note, tt.note) {
				t.Fatalf("body %d bytes, truncated %v, note %q; want %d, %v, %q", len(res.Body), res.Truncated, res.Note, tt.bodyLen, tt.truncated, tt.note)
			}
		})
	}
	res := do(t, tool, "GET", srv.URL+"/png", nil)
	var info map[string]any
	_ = json.Unmarshal(res.Data, &info)
	if info["first_bytes"] != "89 50 4e 47 0d 0a 1a 0a 00 00 00 0d 49 48 44 52" {
		t.Errorf("binary summary %v", info)
	}
}

// No proxy is used, whatever the environment says: the request goes to the
// guard (and is refused) rather than to the proxy (which would answer).
func TestNoProxy(t *testing.T) {
	proxy, proxyHits := counting(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "via proxy") })
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY"} {
		t.Setenv(k, proxy.URL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	tool := newTool(t, loopback)
	res := do(t, tool, "GET", "http://10.255.255.1/", nil)
	if res.Status != tools.StatusDenied || proxyHits.Load() != 0 {
		t.Fatalf("proxy got %d requests; result %s", proxyHits.Load(), res.JSON())
	}
}

func TestTimeout(t *testing.T) {
	srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	tool := newTool(t, Config{AllowCIDRs: loopback.AllowCIDRs, Timeout: 300 * time.Millisecond})
	start := time.Now()
	res := do(t, tool, "GET", srv.URL, nil)
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("took %v with a 300ms limit", took)
	}
	if res.Status != tools.StatusError || !strings.Contains(res.Error, "timed out after 300ms") {
		t.Fatalf("got %s", res.JSON())
	}
}

func TestArgumentErrors(t *testing.T) {
	tool := newTool(t, Config{MaxRequestBytes: 4})
	tests := []struct {
		name, raw string
		status    tools.Status
		want      string
	}{
		{name: "no method", raw: `{"url":"http://x/"}`, status: tools.StatusError, want: `argument "method": is required`},
		{name: "bad method", raw: `{"method":"GE T","url":"http://x/"}`, status: tools.StatusError, want: `argument "method": "GE T" is not an HTTP method`},
		{name: "no url", raw: `{"method":"GET"}`, status: tools.StatusError, want: `argument "url": is required`},
		{name: "bad url", raw: `{"method":"GET","url":"http://[::1"}`, status: tools.StatusError, want: `argument "url": is not a URL`},
		{name: "no host", raw: `{"method":"GET","url":"http:///x"}`, status: tools.StatusError, want: `argument "url": has no host`},
		{name: "file scheme", raw: `{"method":"GET","url":"file:///etc/passwd"}`, status: tools.StatusDenied, want: `only http and https`},
		{name: "gopher scheme", raw: `{"method":"GET","url":"gopher://127.0.0.1:6379/_FLUSHALL"}`, status: tools.StatusDenied, want: `only http and https`},
		{name: "relative url", raw: `{"method":"GET","url":"/x"}`, status: tools.StatusDenied, want: `only http and https`},
		{name: "host header", raw: `{"method":"GET","url":"http://x/","headers":{"Host":"y"}}`, status: tools.StatusError, want: `Host is taken from the URL`},
		{name: "header injection", raw: `{"method":"GET","url":"http://x/","headers":{"X":"a\r\nB: c"}}`, status: tools.StatusError, want: `line break`},
		{name: "bad header name", raw: `{"method":"GET","url":"http://x/","headers":{"A B":"c"}}`, status: tools.StatusError, want: `not a header name`},
		{name: "headers not an object", raw: `{"method":"GET","url":"http://x/","headers":["a"]}`, status: tools.StatusError, want: `argument "headers": must be an object`},
		{name: "header value not a string", raw: `{"method":"GET","url":"http://x/","headers":{"a":1}}`, status: tools.StatusError, want: `must be a string`},
		{name: "body too big", raw: `{"method":"POST","url":"http://x/","body":"12345"}`, status: tools.StatusError, want: `argument "body": is 5 bytes; the limit is 4`},
		{name: "unknown argument", raw: `{"method":"GET","url":"http://x/","proxy":"http://p/"}`, status: tools.StatusError, want: `argument "proxy": is not an argument`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := tool.Run(context.Background(), json.RawMessage(tt.raw), tools.RunOptions{})
			if res.Status != tt.status || res.Executed || !strings.Contains(res.Error, tt.want) || !strings.Contains(res.Message, "did not run") {
				t.Fatalf("got %s, want %s with %q", res.JSON(), tt.status, tt.want)
			}
		})
	}
}

func TestPreview(t *testing.T) {
	srv, hits := counting(t, func(w http.ResponseWriter, r *http.Request) {})
	allowed := newTool(t, loopback)
	strict := newTool(t, Config{})
	tests := []struct {
		name    string
		tool    *Tool
		url     string
		items   []string
		summary string
		err     string
	}{
		{name: "allowed loopback", tool: allowed, url: srv.URL + "/x", items: []string{"127.0.0.1: allowed"}, summary: "resolves to 1 address; all allowed"},
		{name: "refused loopback", tool: strict, url: srv.URL, items: []string{"127.0.0.1: refused (private, loopback and reserved addresses are refused unless the operator allows them (allow_hosts, allow_cidrs))"}, summary: "all refused: the request would not be sent"},
		{name: "decimal metadata", tool: allowed, url: "http://2852039166/", items: []string{"169.254.169.254: refused (link-local and cloud metadata addresses are always refused)"}, summary: "DELETE http://2852039166/: 2852039166 resolves to 1 address; all refused"},
		{name: "bad scheme", tool: allowed, url: "ftp://x/", err: "only http and https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, _ := json.Marshal(map[string]string{"method": "DELETE", "url": tt.url})
			p := tt.tool.Preview(context.Background(), raw)
			if !strings.Contains(p.Err, tt.err) || (tt.err == "" && p.Err != "") {
				t.Fatalf("error %q, want %q", p.Err, tt.err)
			}
			if strings.Join(p.Items, "|") != strings.Join(tt.items, "|") || !strings.Contains(p.Summary, tt.summary) {
				t.Errorf("items %q summary %q; want %q, %q", p.Items, p.Summary, tt.items, tt.summary)
			}
		})
	}
	if hits.Load() != 0 {
		t.Errorf("a preview sent %d requests", hits.Load())
	}
}

func TestParseLegacyIPv4(t *testing.T) {
	tests := map[string]string{
		"2852039166":          "169.254.169.254",
		"0xa9fea9fe":          "169.254.169.254",
		"0XA9FEA9FE":          "169.254.169.254",
		"0251.0376.0251.0376": "169.254.169.254",
		"169.254.43518":       "169.254.169.254",
		"169.16689662":        "169.254.169.254",
		"127.1":               "127.0.0.1",
		"0":                   "0.0.0.0",
		"010.0.0.1":           "8.0.0.1",
		"4294967295":          "255.255.255.255",
		"4294967296":          "",
		"256.1.1.1":           "",
		"1.2.3.256":           "",
		"1.2.3.4.5":           "",
		"example.com":         "",
		"0x":                  "",
		"08":                  "",
		"1..2":                "",
		"":                    "",
		"-1":                  "",
		"+1":                  "",
		"1_000":               "",
	}
	for in, want := range tests {
		ip, ok := parseLegacyIPv4(in)
		got := ""
		if ok {
			got = ip.String()
		}
		if got != want {
			t.Errorf("parseLegacyIPv4(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGuardCheck(t *testing.T) {
	g, err := newGuard([]string{"status.internal"}, []string{"10.0.0.0/8", "::ffff:192.168.1.0/120", "fd12::1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host, ip string
		ok       bool
	}{
		{"example.com", "93.184.216.34", true},
		{"example.com", "2606:2800:220:1:248:1893:25c8:1946", true},
		{"x", "10.1.2.3", true},
		{"x", "192.168.1.7", true},
		{"x", "192.168.2.7", false},
		{"x", "fd12::1", true},
		{"x", "fd12::2", false},
		{"x", "127.0.0.1", false},
		{"x", "::1", false},
		{"status.internal", "172.16.0.5", true},
		{"status.internal", "169.254.169.254", false},
		{"x", "64:ff9b::a9fe:a9fe", false},
		{"x", "100.64.0.1", false},
		{"x", "224.0.0.1", false},
	}
	for _, tt := range tests {
		err := g.check(tt.host, netip.MustParseAddr(tt.ip))
		if (err == nil) != tt.ok {
			t.Errorf("check(%s, %s) = %v, want allowed=%v", tt.host, tt.ip, err, tt.ok)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "bad cidr", cfg: Config{AllowCIDRs: []string{"10.0.0.0/33"}}, want: "allow_cidrs"},
		{name: "bad host", cfg: Config{AllowHosts: []string{"http://x/"}}, want: "allow_hosts"},
		{name: "empty host", cfg: Config{AllowHosts: []string{""}}, want: "allow_hosts"},
		{name: "negative timeout", cfg: Config{Timeout: -1}, want: "timeout"},
		{name: "negative body cap", cfg: Config{MaxResponseBytes: -1}, want: "max_response_bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New error %v, want one naming %q", err, tt.want)
			}
		})
	}
}

// The effective configuration (what `countersign config check` prints)
// builds the same tool again: "no redirects" must not read back as "the
// default five".
func TestEffectiveConfigRoundTrips(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{name: "defaults", cfg: Config{}},
		{name: "no redirects", cfg: Config{MaxRedirects: -1}},
		{name: "two redirects", cfg: Config{MaxRedirects: 2, Timeout: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := newTool(t, tt.cfg).Config()
			again := newTool(t, first).Config()
			if !reflect.DeepEqual(first, again) {
				t.Errorf("effective config %+v builds a tool whose config is %+v", first, again)
			}
		})
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// DNS rebinding: the name resolves to a public address when the card is
// previewed, then to the metadata address when the request runs. The guard
// judges the address actually dialled, so the request is refused.
func TestDNSRebindingIsRefused(t *testing.T) {
	tool := newTool(t, Config{})
	var lookups atomic.Int64
	tool.dialer.lookup = func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		if host != "rebind.test" {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		if lookups.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
	}
	raw := json.RawMessage(`{"method":"GET","url":"http://rebind.test/latest/meta-data/"}`)
	p := tool.Preview(context.Background(), raw)
	if len(p.Items) != 1 || p.Items[0] != "93.184.216.34: allowed" {
		t.Fatalf("preview %+v", p)
	}
	res := tool.Run(context.Background(), raw, tools.RunOptions{})
	if res.Status != tools.StatusDenied || res.Executed || !strings.Contains(res.Error, "rebind.test (169.254.169.254)") {
		t.Fatalf("got %s", res.JSON())
	}
	if res := do(t, tool, "GET", "http://nxdomain.test/", nil); res.Status != tools.StatusError || res.Executed || !strings.Contains(res.Error, "could not be resolved") {
		t.Errorf("unknown host: %s", res.JSON())
	}
}

// A password in the URL's userinfo is sent (as Basic auth) but never shown:
// not in an argument error, a connection error or a redirect's refusal.
func TestURLPasswordNeverShown(t *testing.T) {
	const pw = "s3cretpw"
	srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://u:"+pw+"@169.254.169.254/x")
		w.WriteHeader(http.StatusFound)
	})
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	tool := newTool(t, loopback)
	for _, url := range []string{
		"http://user:" + pw + "@127.0.0.1:bad/x",
		"http://user:" + pw + "@127.0.0.1%zz/x",
		"http://user:" + pw + "@[::1/x",
		"http://user:" + pw + "@127.0.0.1:1/x",
		"http://user:" + pw + "@169.254.169.254/x",
		"http://user:" + pw + "@" + hostPort + "/redirect",
	} {
		res := do(t, tool, "GET", url, nil)
		if res.Status == tools.StatusOK || strings.Contains(res.JSON(), pw) {
			t.Errorf("%s: %s, want an error without the password", url, res.JSON())
		}
	}
}
