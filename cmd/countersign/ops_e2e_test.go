package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/cmd/internal/ops"
	"github.com/countersign/countersign/internal/testenv"
)

// opsConfigFile writes a configuration that turns ops on, on a port the
// system picks (the banner says which).
func opsConfigFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "countersign.yaml")
	if err := os.WriteFile(path, []byte("ops:\n  listen: 127.0.0.1:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// scrape reads /metrics as Prometheus would.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics = %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v", err)
	}
	return fams
}

// total adds a family's counter and gauge values and histogram counts,
// over the series whose labels include want.
func total(f *dto.MetricFamily, want map[string]string) float64 {
	var sum float64
next:
	for _, s := range f.GetMetric() {
		for _, l := range s.GetLabel() {
			if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
				continue next
			}
		}
		sum += s.GetCounter().GetValue() + s.GetGauge().GetValue() + float64(s.GetHistogram().GetSampleCount())
	}
	return sum
}

// TestRunServesMetrics is issue 13's "done when" for metrics: after the
// README's walkthrough (a read that runs at once, a card, a refused own
// approval, an approval by a second person), with a model, /metrics shows
// every metric, non-zero where the walkthrough used it.
func TestRunServesMetrics(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"tmp_a", "tmp_b", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := agenttest.NewServer(t,
		agenttest.Calls(agenttest.Call("call-1", "execute_command", `{"command":"rm -rf ./tmp_*","risk_level":"high"}`)),
		agenttest.Text("Removed tmp_a and tmp_b; keep.txt is untouched."),
	)
	t.Setenv(DefaultRedisURLEnv, "")
	in, out, done := startRun(t, dir, opsConfigFile(t), "OPENAI_BASE_URL", srv.BaseURL(), "OPENAI_MODEL", "test-model")
	say := func(line string) {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	base := "http://" + waitFor(t, out, regexp.MustCompile(`ops: http://(127\.0\.0\.1:\d+)`))
	if code, body := get(t, base+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz = %d with memory, the terminal and a model that answers:\n%s", code, body)
	}

	say("!run ls")
	waitFor(t, out, regexp.MustCompile(`keep\.txt\s+tmp_a\s+tmp_b`))
	say("clean up the temp files")
	id := waitFor(t, out, regexp.MustCompile(`approve ([a-z0-9]{20,})`))
	say("approve " + id)
	waitFor(t, out, regexp.MustCompile(`You cannot approve`))
	say("/as bob")
	say("approve " + id)
	waitFor(t, out, regexp.MustCompile(`keep\.txt is untouched`))

	fams := scrape(t, base)
	for _, name := range ops.NewMetrics(nil, slog.New(slog.DiscardHandler)).Names() {
		if name == "countersign_agent_calls_total" {
			continue // its series are the gateway's agents: none here (ops.Metrics.Agents)
		}
		if _, ok := fams[name]; !ok {
			t.Errorf("/metrics has no %s", name)
		}
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64 // at least
	}{
		{"countersign_assessments_total", map[string]string{"tool": "execute_command", "decision": "auto", "rule": "whitelist"}, 1},
		{"countersign_assessments_total", map[string]string{"tool": "execute_command", "decision": "confirm"}, 1},
		{"countersign_approvals_total", map[string]string{"outcome": "approved"}, 1},
		{"countersign_approval_clicks_total", map[string]string{"outcome": "refused"}, 1},
		{"countersign_approval_clicks_total", map[string]string{"outcome": "approved"}, 1},
		{"countersign_approval_decision_seconds", map[string]string{"outcome": "approved"}, 1},
		{"countersign_tool_run_duration_seconds", map[string]string{"tool": "execute_command", "status": "ok"}, 2},
		{"countersign_model_request_duration_seconds", nil, 2},
		{"countersign_model_tokens_total", map[string]string{"kind": "prompt"}, 2},
		{"countersign_model_tokens_total", map[string]string{"kind": "completion"}, 2},
		{"countersign_chat_api_calls_total", map[string]string{"platform": "terminal", "op": "post"}, 1},
		{"countersign_chat_api_calls_total", map[string]string{"platform": "terminal", "op": "update"}, 1},
		{"countersign_chat_api_calls_total", map[string]string{"platform": "terminal", "op": "notify"}, 1},
		{"countersign_event_ack_seconds", map[string]string{"platform": "terminal"}, 4}, // /as is the terminal's own
		{"countersign_store_operation_seconds", map[string]string{"op": "audit"}, 5},
		{"countersign_store_operation_seconds", map[string]string{"op": "approve"}, 1}, // every approval is counted (issue 19)
		{"countersign_store_operation_seconds", map[string]string{"op": "first_delivery"}, 1},
	} {
		f, ok := fams[c.name]
		if !ok {
			continue // reported above
		}
		if got := total(f, c.labels); got < c.want {
			t.Errorf("%s%v = %v, want at least %v", c.name, c.labels, got, c.want)
		}
	}
	// Nothing failed in the walkthrough: the failure counts are there, at zero.
	for _, name := range []string{"countersign_model_errors_total", "countersign_chat_api_errors_total",
		"countersign_chat_rate_limits_total", "countersign_chat_rate_limit_wait_seconds_total", "countersign_store_errors_total"} {
		if f, ok := fams[name]; ok && total(f, nil) != 0 {
			t.Errorf("%s = %v after a walkthrough where nothing failed", name, total(f, nil))
		}
	}
	if code, _ := get(t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d", code)
	}

	in.Close()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the ops server still answers after run returned")
	}
}

// TestRunWithoutOpsServesNothing: ops is off by default, and the banner
// names no address.
func TestRunWithoutOpsServesNothing(t *testing.T) {
	t.Setenv(DefaultRedisURLEnv, "")
	in, out, done := startRun(t, t.TempDir(), "")
	waitFor(t, out, regexp.MustCompile(`approvals: memory`))
	in.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "ops: http") {
		t.Errorf("ops is on without ops.listen:\n%s", out)
	}
}

func TestRunRefusesABadOpsAddress(t *testing.T) {
	t.Setenv(DefaultRedisURLEnv, "")
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("ops:\n  listen: 127.0.0.1:99999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, done := startRun(t, t.TempDir(), path)
	if err := <-done; err == nil || !strings.Contains(err.Error(), "ops.listen") {
		t.Fatalf("run = %v, want an error naming ops.listen", err)
	}
}

// tcpProxy forwards connections to a server until stop, which closes the
// listener and every connection: the server is gone for the client.
type tcpProxy struct {
	ln    net.Listener
	to    string
	mu    sync.Mutex
	conns []net.Conn
}

func newTCPProxy(t *testing.T, to string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, to: to}
	go p.serve()
	t.Cleanup(p.stop)
	return p
}

func (p *tcpProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.to)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(s, c); s.Close() }()
		go func() { _, _ = io.Copy(c, s); c.Close() }()
	}
}

func (p *tcpProxy) stop() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestReadyzWhenRedisGoes: with the approvals in the real Redis, /readyz
// is ready, and says the store is not once Redis cannot be reached, while
// /healthz still answers.
func TestReadyzWhenRedisGoes(t *testing.T) {
	u, err := url.Parse(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := newTCPProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	t.Setenv(DefaultRedisURLEnv, u.String())
	in, out, done := startRun(t, t.TempDir(), opsConfigFile(t))
	base := "http://" + waitFor(t, out, regexp.MustCompile(`ops: http://(127\.0\.0\.1:\d+)`))
	waitFor(t, out, regexp.MustCompile(`approvals: redis`))
	if code, body := get(t, base+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz = %d with Redis up:\n%s", code, body)
	}

	proxy.stop()
	var code int
	var body string
	testenv.Within(10*time.Second, func() bool {
		code, body = get(t, base+"/readyz")
		return code == http.StatusServiceUnavailable
	})
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "store:") {
		t.Fatalf("/readyz = %d with Redis gone, want 503 naming the store:\n%s", code, body)
	}
	if strings.Contains(body, "adapter") || strings.Contains(body, "model") {
		t.Errorf("/readyz names checks that did not fail:\n%s", body)
	}
	if code, _ := get(t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d: the process still runs", code)
	}
	in.Close()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return at the end of input")
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
