package agent_test

import (
	"go.opentelemetry.io/otel/trace"

	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/agent/llm"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/approval/redisstore"
	"github.com/countersign/countersign/internal/testenv"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/shelltool"
)

// clock is the injected clock every agent and store of a test shares.
type clock = testenv.Clock

func newClock() *clock { return testenv.NewClock(time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)) }

// backend opens store clients over one shared backend: each call to open
// gives a new client (Redis) or the one store (memory).
type backend struct {
	name string
	open func(t testing.TB, c *clock) func() approval.Store
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var memoryBackend = backend{"memory", func(t testing.TB, c *clock) func() approval.Store {
	s := memstore.New(memstore.Options{Now: c.Now, Logger: quiet})
	t.Cleanup(func() { _ = s.Close() })
	return func() approval.Store { return s }
}}

var redisBackend = backend{"redis", func(t testing.TB, c *clock) func() approval.Store {
	url := testenv.RedisURL(t)
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	prefix := "agenttest-" + randomHex()
	return func() approval.Store {
		s := redisstore.New(redis.NewClient(opt), redisstore.Options{Prefix: prefix, Now: c.Now, Logger: quiet})
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
}}

var backends = []backend{memoryBackend, redisBackend}

func randomHex() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// env is one test's world: a temp dir the shell tool works in, the fake
// model server, the recording sink, the real policy and a store backend.
type env struct {
	t     testing.TB
	root  string
	srv   *agenttest.Server
	sink  *agenttest.Sink
	clock *clock
	open  func() approval.Store
	reg   *tools.Registry
	job   *jobTool
	pol   *risk.Policy
	cfg   agent.Config
	// shown: the calls that run without a card are shown in the
	// conversation (Deps.Quiet false); most tests count only the model's
	// replies, so it is off unless a test turns it on.
	shown bool
	// tracer, when set, makes the agent's spans (Deps.Tracer).
	tracer trace.Tracer
}

var (
	alice = approval.User{ID: "U1", Name: "Alice"}
	bob   = approval.User{ID: "U2", Name: "Bob"}
	conv  = approval.Conversation{Platform: "test", Channel: "C1", Thread: "T1"}
)

func newEnv(t *testing.T, b backend, script ...agenttest.Reply) *env {
	t.Helper()
	return newEnvTB(t, b, script...)
}

func newEnvTB(t testing.TB, b backend, script ...agenttest.Reply) *env {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh, err := shelltool.New(shelltool.Config{Root: root, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("shelltool.New: %v", err)
	}
	job := &jobTool{}
	reg, err := tools.NewRegistry(sh, job)
	if err != nil {
		t.Fatalf("NewRegistry: %v", err)
	}
	pol, err := risk.New(risk.Config{})
	if err != nil {
		t.Fatalf("risk.New: %v", err)
	}
	c := newClock()
	return &env{
		t: t, root: root, srv: agenttest.NewServer(t, script...), sink: &agenttest.Sink{},
		clock: c, open: b.open(t, c), reg: reg, job: job, pol: pol,
	}
}

// model is a real llm client on the fake server.
func (e *env) model() agent.Model {
	m, err := llm.New(llm.Config{BaseURL: e.srv.BaseURL(), Model: "test-model", Backoff: time.Millisecond, MaxBackoff: time.Millisecond, MaxAttempts: 2}, nil)
	if err != nil {
		e.t.Fatalf("llm.New: %v", err)
	}
	return m
}

// agent returns a new agent (a replica) over store.
func (e *env) agent(store approval.Store) *agent.Agent {
	e.t.Helper()
	a, err := agent.New(e.cfg, agent.Deps{
		Model: e.model(), Tools: e.reg, Policy: e.pol, Store: store, Sink: e.sink, Now: e.clock.Now, Log: quiet,
		Quiet: func(approval.Conversation) bool { return !e.shown }, Tracer: e.tracer,
	})
	if err != nil {
		e.t.Fatalf("agent.New: %v", err)
	}
	return a
}

func (e *env) file(name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(e.root, name))
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b), true
}

// toolResults decodes the tool messages of a request, in order.
func toolResults(t *testing.T, req agenttest.ChatRequest) []tools.Result {
	t.Helper()
	var out []tools.Result
	for _, m := range req.Messages {
		if m.Role != "tool" {
			continue
		}
		var r tools.Result
		if err := json.Unmarshal([]byte(m.Content), &r); err != nil {
			t.Fatalf("tool message %s is not a result: %v\n%s", m.ToolCallID, err, m.Content)
		}
		out = append(out, r)
	}
	return out
}

// resumedResult returns the one tool result the model got when the turn
// resumed: there must be exactly two model requests, the second with one
// result.
func resumedResult(t *testing.T, e *env) tools.Result {
	t.Helper()
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2: the turn resumes exactly once", len(reqs))
	}
	res := toolResults(t, reqs[1])
	if len(res) != 1 {
		t.Fatalf("%d tool results, want 1", len(res))
	}
	return res[0]
}

func statuses(rs []tools.Result) []tools.Status {
	out := make([]tools.Status, len(rs))
	for i, r := range rs {
		out[i] = r.Status
	}
	return out
}

// approve approves approval id as who the way every Approve click does in
// production (agent.Approve: one vote, one approval needed), and reports
// the decision.
func approve(ctx context.Context, a *agent.Agent, id string, who approval.User) (approval.DecideResult, error) {
	r, err := a.Approve(ctx, id, approval.Vote{By: who, Need: 1})
	return r.DecideResult, err
}

// failingAudit is a store whose audit log can be made to fail.
type failingAudit struct {
	approval.Store
	fail atomic.Bool
}

func (f *failingAudit) Audit(ctx context.Context, e approval.Event) error {
	if f.fail.Load() {
		return errors.New("audit stream unavailable")
	}
	return f.Store.Audit(ctx, e)
}

func events(t *testing.T, s approval.Store, kind approval.Kind) []approval.Event {
	t.Helper()
	all, err := s.AuditLog(context.Background(), 1000)
	if err != nil {
		t.Fatalf("AuditLog: %v", err)
	}
	var out []approval.Event
	for _, e := range all {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// hookStore runs a hook before SaveTurn, to put a decision in the gap
// between creating approvals and saving their turn.
type hookStore struct {
	approval.Store
	beforeSaveTurn func(t *approval.Turn)
}

func (h *hookStore) SaveTurn(ctx context.Context, t *approval.Turn) error {
	if h.beforeSaveTurn != nil {
		h.beforeSaveTurn(t)
	}
	return h.Store.SaveTurn(ctx, t)
}

// jobTool is a hand-written tool that records how it is run, reports
// progress at once, and can be held: Run waits on release, Preview on
// previewGate (ignoring its context, like a badly behaved tool).
type jobTool struct {
	release     chan struct{}
	previewGate chan struct{}
	started     chan struct{} // when set, Run sends on it as it starts

	mu   sync.Mutex
	runs []bool // AutoRun of each run
}

var (
	_ tools.Tool      = (*jobTool)(nil)
	_ tools.Previewer = (*jobTool)(nil)
)

func (j *jobTool) Name() string        { return "run_job" }
func (j *jobTool) Description() string { return "Runs a named batch job." }
func (j *jobTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"job":{"type":"string"}},"required":["job"]}`)
}

func (j *jobTool) Run(ctx context.Context, args json.RawMessage, opts tools.RunOptions) tools.Result {
	j.mu.Lock()
	j.runs = append(j.runs, opts.AutoRun)
	j.mu.Unlock()
	if j.started != nil {
		j.started <- struct{}{}
	}
	if opts.Progress != nil {
		opts.Progress(tools.Progress{ElapsedMS: 1, Tail: "step 1 of 2"})
	}
	if j.release != nil {
		<-j.release
	}
	return tools.Result{Status: tools.StatusOK, Executed: true, Stdout: "job done"}
}

func (j *jobTool) Preview(ctx context.Context, args json.RawMessage) tools.Preview {
	if j.previewGate != nil {
		<-j.previewGate
	}
	return tools.Preview{Summary: "would start the job"}
}

func (j *jobTool) Runs() []bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]bool(nil), j.runs...)
}

// ttlStore records the TTLs conversations are saved with.
type ttlStore struct {
	approval.Store
	mu   sync.Mutex
	ttls []time.Duration
}

func (s *ttlStore) SaveConversation(ctx context.Context, key string, data []byte, ttl time.Duration) error {
	s.mu.Lock()
	s.ttls = append(s.ttls, ttl)
	s.mu.Unlock()
	return s.Store.SaveConversation(ctx, key, data, ttl)
}
