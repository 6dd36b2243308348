package ops

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/agent/llm"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/approvaltest"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/internal/testenv"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// series finds the series of family name whose labels include want, in
// what m's registry gathers now. ok is false when there is none.
func series(t *testing.T, m *Metrics, name string, want map[string]string) (*dto.Metric, bool) {
	t.Helper()
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, s := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range s.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue next
				}
			}
			return s, true
		}
	}
	return nil, false
}

// value is a counter's or gauge's value, or a histogram's count; 0 when
// the series does not exist.
func value(t *testing.T, m *Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	s, ok := series(t, m, name, labels)
	switch {
	case !ok:
		return 0
	case s.Counter != nil:
		return s.Counter.GetValue()
	case s.Gauge != nil:
		return s.Gauge.GetValue()
	case s.Histogram != nil:
		return float64(s.Histogram.GetSampleCount())
	}
	t.Fatalf("%s: a series of an unexpected type", name)
	return 0
}

// histogramSum is a histogram series' sum of observations.
func histogramSum(t *testing.T, m *Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	s, ok := series(t, m, name, labels)
	if !ok || s.Histogram == nil {
		t.Fatalf("no histogram %s %v", name, labels)
	}
	return s.Histogram.GetSampleSum()
}

// The metered store keeps the store contract.
func TestMeteredStoreKeepsTheContract(t *testing.T) {
	m := NewMetrics(nil, quietLog())
	var mu sync.Mutex
	stores := map[string]*memstore.Store{}
	approvaltest.Run(t, func(t *testing.T, ns string) approval.Store {
		mu.Lock()
		defer mu.Unlock()
		s, ok := stores[ns]
		if !ok {
			s = memstore.New(memstore.Options{Logger: quietLog()})
			stores[ns] = s
		}
		return m.MeterStore(s)
	})
	if value(t, m, "countersign_store_operation_seconds", map[string]string{"op": "decide"}) == 0 {
		t.Errorf("the suite's decisions were not timed")
	}
}

func TestMeteredStoreDedupes(t *testing.T) {
	m := NewMetrics(nil, quietLog())
	d := m.MeterStore(memstore.New(memstore.Options{Logger: quietLog()}))
	first, err := d.FirstDelivery(context.Background(), "term:1", time.Minute)
	if err != nil || !first {
		t.Fatalf("FirstDelivery = %v, %v; want true", first, err)
	}
	if again, _ := d.FirstDelivery(context.Background(), "term:1", time.Minute); again {
		t.Error("a second delivery is reported as the first")
	}
	if n := value(t, m, "countersign_store_operation_seconds", map[string]string{"op": "first_delivery"}); n != 2 {
		t.Errorf("first_delivery timed %v times, want 2", n)
	}
}

// failingStore fails every audit record and every Get.
type failingStore struct{ approval.Store }

func (failingStore) Audit(context.Context, approval.Event) error {
	return errors.New("redis: connection refused")
}

func (failingStore) Get(context.Context, string) (*approval.Approval, error) {
	return nil, errors.New("redis: connection refused")
}

// Audit events that the store wrote become the approval metrics; one it
// could not write counts nowhere.
func TestAuditEventsBecomeMetrics(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := NewMetrics([]string{"execute_command"}, quietLog())
	s := m.MeterStore(memstore.New(memstore.Options{Logger: quietLog()}))
	ctx := context.Background()
	audit := func(e approval.Event) {
		t.Helper()
		if err := s.Audit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	audit(approval.Event{At: t0, Kind: approval.KindAssessment, Tool: "execute_command", Decision: approval.DecisionAuto, Rule: "whitelist"})
	audit(approval.Event{At: t0, Kind: approval.KindAssessment, Tool: "made_up_tool", Decision: approval.DecisionConfirm, Rule: "default"})
	audit(approval.Event{At: t0, Kind: approval.KindAssessment, Actor: "agent:ci-bot", Tool: "execute_command", Decision: approval.DecisionConfirm, Rule: "danger"})
	audit(approval.Event{At: t0, Kind: approval.KindCard, ApprovalID: "a1", Tool: "execute_command"})
	audit(approval.Event{At: t0.Add(5 * time.Second), Kind: approval.KindCard, ApprovalID: "a1"}) // posted again: keeps its first time
	audit(approval.Event{At: t0.Add(10 * time.Second), Kind: approval.KindRefusedClick, ApprovalID: "a1", Outcome: approval.OutcomeRefused})
	audit(approval.Event{At: t0.Add(30 * time.Second), Kind: approval.KindClick, ApprovalID: "a1", Decision: approval.DecisionApprove, Outcome: "approved"})
	audit(approval.Event{At: t0.Add(40 * time.Second), Kind: approval.KindClick, ApprovalID: "a1", Decision: approval.DecisionCancel, Outcome: approval.OutcomeLost})
	audit(approval.Event{At: t0, Kind: approval.KindCard, ApprovalID: "a2"})
	audit(approval.Event{At: t0.Add(time.Hour), Kind: approval.KindClick, ApprovalID: "a2", Decision: approval.DecisionApprove, Outcome: "expired"})
	audit(approval.Event{At: t0.Add(time.Hour), Kind: approval.KindExpiry, ApprovalID: "a2", Outcome: "expired"})
	audit(approval.Event{At: t0, Kind: approval.KindExecution, Tool: "execute_command", Decision: approval.DecisionApproved, Outcome: "ok", DurationMS: 1500})
	audit(approval.Event{At: t0, Kind: approval.KindExecution, Tool: "execute_command", Decision: approval.DecisionRecovered, Outcome: "interrupted"})

	failing := m.MeterStore(failingStore{memstore.New(memstore.Options{Logger: quietLog()})})
	if err := failing.Audit(ctx, approval.Event{Kind: approval.KindAssessment, Tool: "execute_command", Decision: approval.DecisionBlock, Rule: "absurd"}); err == nil {
		t.Fatal("the failing store's audit succeeded")
	}

	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"countersign_assessments_total", map[string]string{"tool": "execute_command", "decision": "auto", "rule": "whitelist"}, 1},
		{"countersign_assessments_total", map[string]string{"tool": "other", "decision": "confirm", "rule": "default"}, 1},
		{"countersign_assessments_total", map[string]string{"decision": "block"}, 0}, // its record failed
		{"countersign_agent_calls_total", map[string]string{"agent": "ci-bot", "decision": "confirm"}, 1},
		{"countersign_agent_calls_total", map[string]string{"decision": "auto"}, 0}, // a person's call is no agent's
		{"countersign_approval_clicks_total", map[string]string{"outcome": "refused"}, 1},
		{"countersign_approval_clicks_total", map[string]string{"outcome": "approved"}, 1},
		{"countersign_approval_clicks_total", map[string]string{"outcome": "lost"}, 1},
		{"countersign_approval_clicks_total", map[string]string{"outcome": "expired"}, 1},
		{"countersign_approvals_total", map[string]string{"outcome": "approved"}, 1},
		{"countersign_approvals_total", map[string]string{"outcome": "expired"}, 1}, // once, not for the click too
		{"countersign_approvals_total", map[string]string{"outcome": "cancelled"}, 0},
		{"countersign_approval_decision_seconds", map[string]string{"outcome": "approved"}, 1},
		{"countersign_approval_decision_seconds", map[string]string{"outcome": "expired"}, 1},
		{"countersign_tool_run_duration_seconds", map[string]string{"tool": "execute_command", "status": "ok"}, 1},
		{"countersign_tool_run_duration_seconds", map[string]string{"status": "interrupted"}, 0},
		{"countersign_store_errors_total", map[string]string{"op": "audit"}, 1},
	} {
		if got := value(t, m, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := histogramSum(t, m, "countersign_approval_decision_seconds", map[string]string{"outcome": "approved"}); got != 30 {
		t.Errorf("card to approval took %vs, want 30 (from the first card)", got)
	}
	if got := histogramSum(t, m, "countersign_approval_decision_seconds", map[string]string{"outcome": "expired"}); got != 3600 {
		t.Errorf("card to expiry took %vs, want 3600", got)
	}
	if got := histogramSum(t, m, "countersign_tool_run_duration_seconds", map[string]string{"status": "ok"}); got != 1.5 {
		t.Errorf("run took %vs, want 1.5", got)
	}
}

func TestCardTimesAreBounded(t *testing.T) {
	var c cardTimes
	c.init(3)
	t0 := time.Unix(0, 0)
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		c.put(id, t0.Add(time.Duration(i)*time.Second))
	}
	if len(c.at) != 3 {
		t.Fatalf("kept %d cards, want 3", len(c.at))
	}
	if _, ok := c.take("a"); ok {
		t.Error("the oldest card was not forgotten")
	}
	if at, ok := c.take("e"); !ok || !at.Equal(t0.Add(4*time.Second)) {
		t.Errorf("the newest card = %v, %v", at, ok)
	}
	if _, ok := c.take("e"); ok {
		t.Error("a card is taken twice")
	}
	for i := range 100 { // taken ids do not pile up in the order
		id := string(rune('A' + i%26))
		c.put(id+"x", t0)
		c.take(id + "x")
	}
	if len(c.order) > 6 {
		t.Errorf("the order holds %d ids for a bound of 3", len(c.order))
	}
}

// countingStore is a store whose CountPending answers what the test says.
type countingStore struct {
	approval.Store
	n   int
	err error
}

func (s countingStore) CountPending(_ context.Context, platform, channel string) (int, error) {
	if platform != "" || channel != "" {
		return 0, errors.New("the gauge must count every platform and channel")
	}
	return s.n, s.err
}

func TestPendingGauge(t *testing.T) {
	mem := memstore.New(memstore.Options{Logger: quietLog()})
	for _, tc := range []struct {
		name    string
		store   approval.Store
		present bool
		want    float64
	}{
		{"store that counts", countingStore{Store: mem, n: 7}, true, 7},
		{"count that fails", countingStore{Store: mem, err: errors.New("down")}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMetrics(nil, quietLog())
			m.MeterStore(tc.store)
			_, present := series(t, m, "countersign_pending_approvals", nil)
			if present != tc.present {
				t.Fatalf("gauge present = %v, want %v", present, tc.present)
			}
			if got := value(t, m, "countersign_pending_approvals", nil); got != tc.want {
				t.Errorf("pending = %v, want %v", got, tc.want)
			}
		})
	}
}

// fakeModel answers with a scripted response or error.
type fakeModel struct {
	resp agent.Response
	err  error
}

func (f fakeModel) Complete(ctx context.Context, _ agent.Request) (agent.Response, error) {
	if err := ctx.Err(); err != nil {
		return agent.Response{}, err
	}
	return f.resp, f.err
}

func TestMeteredModel(t *testing.T) {
	m := NewMetrics(nil, quietLog())
	if m.MeterModel(nil) != nil {
		t.Fatal("no model became a model: the bot would think one is configured")
	}
	ctx := context.Background()
	ok := m.MeterModel(fakeModel{resp: agent.Response{Usage: agent.Usage{PromptTokens: 120, CompletionTokens: 30}}})
	for range 2 {
		if _, err := ok.Complete(ctx, agent.Request{}); err != nil {
			t.Fatal(err)
		}
	}
	// A permanent error as the real client classes it: a 401.
	srv := agenttest.NewServer(t, agenttest.Error(http.StatusUnauthorized, nil))
	client, err := llm.New(llm.Config{BaseURL: srv.BaseURL(), Model: "m", APIKey: "sk-wrong", MaxAttempts: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.MeterModel(client).Complete(ctx, agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}); err == nil {
		t.Fatal("a 401 was not an error")
	}
	if _, err := m.MeterModel(fakeModel{err: errors.New("503 after 4 attempts")}).Complete(ctx, agent.Request{}); err == nil {
		t.Fatal("no error")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ok.Complete(cancelled, agent.Request{}); err == nil {
		t.Fatal("no error")
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"countersign_model_request_duration_seconds", nil, 5},
		{"countersign_model_tokens_total", map[string]string{"kind": "prompt"}, 240},
		{"countersign_model_tokens_total", map[string]string{"kind": "completion"}, 60},
		{"countersign_model_errors_total", map[string]string{"kind": "permanent"}, 1},
		{"countersign_model_errors_total", map[string]string{"kind": "transient"}, 1},
		{"countersign_model_errors_total", map[string]string{"kind": "cancelled"}, 1},
	} {
		if got := value(t, m, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// plainAdapter declares no extra, whatever the adapter it holds has.
type plainAdapter struct{ adapters.Adapter }

func (plainAdapter) Extras() adapters.Extras { return adapters.Extras{} }

// limitedAdapter fails its calls: Post with a rate limit, Update with
// another error.
type limitedAdapter struct{ adapters.Adapter }

func (limitedAdapter) Post(context.Context, adapters.Place, adapters.Content) (string, error) {
	return "", &adapters.RateLimitError{RetryAfter: 1500 * time.Millisecond}
}

func (limitedAdapter) Update(context.Context, adapters.Place, string, adapters.Content) error {
	return adapters.ErrGone
}

func TestMeteredAdapter(t *testing.T) {
	m := NewMetrics(nil, quietLog())
	fake := adaptertest.NewFake("slack")
	ad := m.MeterAdapter(fake)
	if !adapters.HasButtons(ad) {
		t.Fatal("the metered Fake has no buttons: the bot would fall back to typed decisions")
	}
	if adapters.HasButtons(m.MeterAdapter(plainAdapter{adaptertest.NewFake("discord")})) {
		t.Fatal("an adapter without buttons got them through the wrapper")
	}
	ctx := context.Background()
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	ref, err := ad.Post(ctx, place, adapters.Content{Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ad.Update(ctx, place, ref, adapters.Content{Text: "hello again"}); err != nil {
		t.Fatal(err)
	}
	if err := ad.Notify(ctx, adapters.Notice{Place: place, User: adapters.User{ID: "U1"}, Text: "psst"}); err != nil {
		t.Fatal(err)
	}

	limited := m.MeterAdapter(limitedAdapter{adaptertest.NewFake("discord")})
	_, err = limited.Post(ctx, place, adapters.Content{Text: "x"})
	if d, ok := adapters.RetryAfter(err); !ok || d != 1500*time.Millisecond {
		t.Fatalf("the rate limit did not come through the wrapper: %v", err)
	}
	if err := limited.Update(ctx, place, "r", adapters.Content{}); !errors.Is(err, adapters.ErrGone) {
		t.Fatalf("ErrGone did not come through the wrapper: %v", err)
	}

	// Events: the handler the bot gave is called, and timed.
	var got atomic.Int32
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() {
		ran <- ad.Run(runCtx, adapters.HandlerFunc(func(context.Context, adapters.Event) { got.Add(1) }))
	}()
	fake.Say(t, adapters.User{ID: "U1"}, place, "hi")
	fake.Say(t, adapters.User{ID: "U1"}, place, "hi again")
	// Run may see the cancel before the events it has not read yet: wait
	// for both to reach the handler before stopping it.
	testenv.Within(5*time.Second, func() bool { return got.Load() >= 2 })
	stop()
	<-ran
	if got.Load() != 2 {
		t.Fatalf("the bot's handler got %d events, want 2", got.Load())
	}

	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"countersign_chat_api_calls_total", map[string]string{"platform": "slack", "op": "post"}, 1},
		{"countersign_chat_api_calls_total", map[string]string{"platform": "slack", "op": "update"}, 1},
		{"countersign_chat_api_calls_total", map[string]string{"platform": "slack", "op": "notify"}, 1},
		{"countersign_chat_api_errors_total", map[string]string{"platform": "slack"}, 0},
		{"countersign_chat_api_errors_total", map[string]string{"platform": "discord", "op": "post"}, 1},
		{"countersign_chat_api_errors_total", map[string]string{"platform": "discord", "op": "update"}, 1},
		{"countersign_chat_rate_limits_total", map[string]string{"platform": "discord", "op": "post"}, 1},
		{"countersign_chat_rate_limits_total", map[string]string{"platform": "discord", "op": "update"}, 0},
		{"countersign_chat_rate_limit_wait_seconds_total", map[string]string{"platform": "discord"}, 1.5},
		{"countersign_event_ack_seconds", map[string]string{"platform": "slack"}, 2},
	} {
		if got := value(t, m, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// linkAdapter is an adapter that says whether it is connected.
type linkAdapter struct {
	adapters.Adapter
	up bool
}

func (l linkAdapter) Connected() bool { return l.up }

func (l linkAdapter) Extras() adapters.Extras { return adapters.Extras{Link: l} }

func TestReadyz(t *testing.T) {
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String() + "/v1"
	closed.Close()
	upURL := "http://" + up.Addr().String() + "/v1"

	mem := memstore.New(memstore.Options{Logger: quietLog()})
	term := plainAdapter{adaptertest.NewFake("terminal")}
	for _, tc := range []struct {
		name     string
		store    approval.Store
		ads      []adapters.Adapter
		modelURL string
		want     int
		names    []string // what the body must name
	}{
		{"all well, no model", mem, []adapters.Adapter{term}, "", http.StatusOK, []string{"ready"}},
		{"all well, model up", mem, []adapters.Adapter{term, linkAdapter{adaptertest.NewFake("slack"), true}}, upURL, http.StatusOK, []string{"ready"}},
		{"store down", failingStore{mem}, []adapters.Adapter{term}, "", http.StatusServiceUnavailable, []string{"store: does not answer"}},
		{"adapter down", mem, []adapters.Adapter{term, linkAdapter{adaptertest.NewFake("slack"), false}}, "", http.StatusServiceUnavailable, []string{"adapter slack: not connected"}},
		{"model down", mem, []adapters.Adapter{term}, closedURL, http.StatusServiceUnavailable, []string{"model: cannot reach " + closed.Addr().String()}},
		{"all down", failingStore{mem}, []adapters.Adapter{linkAdapter{adaptertest.NewFake("discord"), false}}, closedURL, http.StatusServiceUnavailable,
			[]string{"store:", "adapter discord", "model:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewServer(NewMetrics(nil, quietLog()), tc.store, tc.ads, tc.modelURL, quietLog())
			srv := httptest.NewServer(o.Handler())
			defer srv.Close()
			code, body := get(t, srv.URL+"/readyz")
			if code != tc.want {
				t.Errorf("/readyz = %d, want %d; body:\n%s", code, tc.want, body)
			}
			for _, n := range tc.names {
				if !strings.Contains(body, n) {
					t.Errorf("/readyz does not say %q:\n%s", n, body)
				}
			}
			if code, _ := get(t, srv.URL+"/healthz"); code != http.StatusOK {
				t.Errorf("/healthz = %d while the process runs", code)
			}
		})
	}
}

// A load balancer's probes do not each dial the model server.
func TestReadyzReusesTheModelDial(t *testing.T) {
	var dials atomic.Int32
	o := NewServer(NewMetrics(nil, quietLog()), memstore.New(memstore.Options{Logger: quietLog()}), nil, "https://api.example.test/v1", quietLog())
	o.dial = func(_ context.Context, _, addr string) (net.Conn, error) {
		dials.Add(1)
		if addr != "api.example.test:443" {
			t.Errorf("dialled %s, want the host at the https port", addr)
		}
		a, b := net.Pipe()
		b.Close()
		return a, nil
	}
	for range 5 {
		if fails := o.check(context.Background()); len(fails) > 0 {
			t.Fatalf("not ready: %v", fails)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("5 checks dialled %d times, want 1 within %s", n, modelCheckTTL)
	}
	o.modelAt = o.modelAt.Add(-modelCheckTTL) // the answer is old now
	o.check(context.Background())
	if n := dials.Load(); n != 2 {
		t.Errorf("an old answer was reused: %d dials", n)
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

// dashboardPanel is what the test reads of a Grafana panel.
type dashboardPanel struct {
	Title   string           `json:"title"`
	Type    string           `json:"type"`
	Panels  []dashboardPanel `json:"panels"` // a row's panels, when collapsed
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// TestDashboardShowsEveryMetric: every metric a panel of
// configs/grafana-dashboard.json asks for exists, and every countersign_
// metric is on some panel.
func TestDashboardShowsEveryMetric(t *testing.T) {
	data, err := os.ReadFile("../../../configs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []dashboardPanel `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	m := NewMetrics(nil, quietLog())
	metricName := regexp.MustCompile(`\bcountersign_[a-z0-9_]+`)
	shown := map[string]bool{}
	var walk func([]dashboardPanel)
	walk = func(ps []dashboardPanel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			n := 0
			for _, tg := range p.Targets {
				for _, name := range metricName.FindAllString(tg.Expr, -1) {
					n++
					base := name // a histogram's series are its name and a suffix
					for _, suffix := range []string{"_bucket", "_sum", "_count"} {
						if b, ok := strings.CutSuffix(name, suffix); ok && !slices.Contains(m.names, name) && slices.Contains(m.names, b) {
							base = b
						}
					}
					if !slices.Contains(m.names, base) {
						t.Errorf("panel %q asks for %s, which the bot does not export", p.Title, name)
					}
					shown[base] = true
				}
			}
			if n == 0 {
				t.Errorf("panel %q shows no countersign_ metric", p.Title)
			}
		}
	}
	walk(d.Panels)
	for _, n := range m.names {
		if !shown[n] {
			t.Errorf("%s is on no panel of the dashboard", n)
		}
	}
	if len(m.names) < 15 {
		t.Fatalf("only %d metrics registered: %v", len(m.names), m.names)
	}
}

// Every operation the store wrapper times is one whose error count starts
// at zero, so that the list in metrics.go cannot drift from store.go.
func TestStoreOpsListed(t *testing.T) {
	src, err := os.ReadFile("store.go")
	if err != nil {
		t.Fatal(err)
	}
	timed := regexp.MustCompile(`\.done\("([a-z_]+)"`).FindAllStringSubmatch(string(src), -1)
	if len(timed) < 20 {
		t.Fatalf("found %d timed operations in store.go; the pattern is broken", len(timed))
	}
	var ops []string
	for _, m := range timed {
		ops = append(ops, m[1])
		if !slices.Contains(storeOps, m[1]) {
			t.Errorf("store.go times %q, which storeOps does not list", m[1])
		}
	}
	for _, op := range storeOps {
		if !slices.Contains(ops, op) {
			t.Errorf("storeOps lists %q, which store.go never times", op)
		}
	}
}

// storeTimings is how many times each store operation has been timed,
// read from the histogram alone (a scrape would count pending approvals).
func storeTimings(t *testing.T, m *Metrics) map[string]uint64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 100)
	go func() {
		m.storeLatency.Collect(ch)
		close(ch)
	}()
	n := map[string]uint64{}
	for metric := range ch {
		var d dto.Metric
		if err := metric.Write(&d); err != nil {
			t.Fatal(err)
		}
		for _, l := range d.GetLabel() {
			if l.GetName() == "op" {
				n[l.GetValue()] = d.GetHistogram().GetSampleCount()
			}
		}
	}
	return n
}

// TestMeteredStoreTimesEveryMethod: each method of approval.Store, the
// ones added after this test was written too, is timed once per call
// under an operation name of its own that storeOps lists (Close, which
// does no work worth timing, excepted), so that a method cannot be left
// unmetered or metered under another's name.
func TestMeteredStoreTimesEveryMethod(t *testing.T) {
	m := NewMetrics(nil, quietLog())
	s := m.MeterStore(memstore.New(memstore.Options{Logger: quietLog()}))
	owner := map[string]string{} // op → the method timed under it
	var was map[string]uint64
	approvaltest.CallEach(t, s, func(string) { was = storeTimings(t, m) }, func(name string, panicked any) {
		if panicked != nil {
			t.Fatalf("%s panicked on zero arguments: %v", name, panicked)
		}
		var timed []string
		for op, n := range storeTimings(t, m) {
			if n != was[op] {
				timed = append(timed, op)
			}
		}
		switch {
		case name == "Close":
			if len(timed) != 0 {
				t.Errorf("Close timed %v", timed)
			}
			return
		case len(timed) != 1:
			t.Errorf("%s timed %d operations %v, want 1", name, len(timed), timed)
			return
		}
		op := timed[0]
		if prev, ok := owner[op]; ok {
			t.Errorf("%s is timed as %q, which %s is timed as too", name, op, prev)
		}
		owner[op] = name
		if !slices.Contains(storeOps, op) {
			t.Errorf("%s is timed as %q, which storeOps does not list (its error count would not start at zero)", name, op)
		}
	})
	if len(owner) != len(storeOps) {
		t.Errorf("%d methods timed, storeOps lists %d operations", len(owner), len(storeOps))
	}
}

// nilStore has no store behind it: any method that reaches it panics.
type nilStore struct{ approval.Store }

// TestMeteredStoreForwardsEveryMethod: each method of approval.Store
// (the count of approvals, the inbox journal and the MCP pins among them),
// Close too, reaches the wrapped store (approvaltest, above, checks what
// they answer).
func TestMeteredStoreForwardsEveryMethod(t *testing.T) {
	s := NewMetrics(nil, quietLog()).MeterStore(nilStore{})
	approvaltest.CallEach(t, s, func(string) {}, func(name string, panicked any) {
		switch err, _ := panicked.(error); {
		case panicked == nil:
			t.Errorf("%s answered without asking the wrapped store", name)
		case err == nil || !strings.Contains(err.Error(), "nil pointer"):
			t.Errorf("%s panicked before it reached the wrapped store: %v", name, panicked)
		}
	})
}

// losingAdapter is an adapter that has given up n sends.
type losingAdapter struct {
	adapters.Adapter
	n uint64
}

func (l losingAdapter) Undelivered() uint64 { return l.n }

func (l losingAdapter) Extras() adapters.Extras { return adapters.Extras{Undelivered: l} }

func TestUndeliveredSends(t *testing.T) {
	m := NewMetrics(nil, quietLog())
	m.MeterAdapter(losingAdapter{adaptertest.NewFake("slack"), 3})
	m.MeterAdapter(plainAdapter{adaptertest.NewFake("terminal")})
	for platform, want := range map[string]float64{"slack": 3, "terminal": 0} {
		if got := value(t, m, "countersign_chat_undelivered_total", map[string]string{"platform": platform}); got != want {
			t.Errorf("countersign_chat_undelivered_total{platform=%q} = %v, want %v", platform, got, want)
		}
	}
}

// The gateway's agents show from the start, at zero, for every decision.
func TestAgentsStartAtZero(t *testing.T) {
	m := NewMetrics(nil, quietLog())
	m.Agents([]string{"ci-bot"})
	for _, d := range []string{"auto", "confirm", "block"} {
		if got := value(t, m, "countersign_agent_calls_total", map[string]string{"agent": "ci-bot", "decision": d}); got != 0 {
			t.Errorf("ci-bot %s = %v, want 0", d, got)
		}
	}
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range fams {
		if f.GetName() == "countersign_agent_calls_total" {
			n = len(f.GetMetric())
		}
	}
	if n != 3 {
		t.Fatalf("%d series of countersign_agent_calls_total, want 3", n)
	}
}
