package agent_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// TestRunOptions: auto calls run with AutoRun (the read-only fences),
// approved calls without; the running card gets progress; the card carries
// the tool's preview.
func TestRunOptions(t *testing.T) {
	e := newEnv(t, memoryBackend,
		agenttest.Calls(
			agenttest.Call("c1", "run_job", `{"job":"report","risk_level":"low"}`),
			agenttest.Call("c2", "run_job", `{"job":"migrate"}`),
		),
		agenttest.Text("Both jobs ran."),
	)
	a := e.agent(e.open())
	if err := a.Handle(ctx, conv, alice, "run the jobs"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	cards := e.sink.Cards()
	if len(cards) != 1 || cards[0].ToolCallID != "c2" {
		t.Fatalf("cards = %+v, want c2 only", cards)
	}
	if p := cards[0].Preview; p == nil || p.Summary != "would start the job" {
		t.Errorf("card preview = %+v", p)
	}
	if _, err := approve(ctx, a, cards[0].ID, bob); err != nil {
		t.Fatalf("decision: %v", err)
	}
	if got := e.job.Runs(); len(got) != 2 || !got[0] || got[1] {
		t.Errorf("AutoRun of the runs = %v, want [true false]", got)
	}
	var progress *tools.Progress
	for _, u := range e.sink.Updates() {
		if u.Progress != nil {
			if u.Approval.State != approval.Running {
				t.Errorf("progress on a card in state %s", u.Approval.State)
			}
			if u.Approval.MessageRef != "card-1" {
				t.Errorf("progress update without the card reference: %q", u.Approval.MessageRef)
			}
			progress = u.Progress
		}
	}
	if progress == nil || progress.Tail != "step 1 of 2" {
		t.Errorf("progress = %+v, want the tool's", progress)
	}
}

func TestSlowPreviewDoesNotHoldTheCard(t *testing.T) {
	e := newEnv(t, memoryBackend, agenttest.Calls(agenttest.Call("c1", "run_job", `{"job":"x"}`)))
	e.job.previewGate = make(chan struct{})
	t.Cleanup(func() { close(e.job.previewGate) })
	e.cfg.PreviewTimeout = 50 * time.Millisecond
	start := time.Now()
	if err := e.agent(e.open()).Handle(ctx, conv, alice, "run x"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Handle took %s", d)
	}
	cards := e.sink.Cards()
	if len(cards) != 1 || cards[0].Preview == nil || !strings.Contains(cards[0].Preview.Err, "too long") {
		t.Fatalf("cards = %+v, want one with a preview that says it took too long", cards)
	}
}

// TestConcurrentDecides: 64 replicas (each with its own store client)
// approve the same call at once: exactly one wins, the call runs once and
// the turn resumes once. Repeated.
func TestConcurrentDecides(t *testing.T) {
	const replicas, rounds = 64, 10
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			for range rounds {
				e := newEnv(t, b, agenttest.Calls(agenttest.Call("c1", "run_job", `{"job":"once"}`)), agenttest.Text("Ran once."))
				if err := e.agent(e.open()).Handle(ctx, conv, alice, "run it"); err != nil {
					t.Fatalf("Handle: %v", err)
				}
				id := e.sink.Cards()[0].ID
				agents := make([]*agent.Agent, replicas)
				for i := range agents {
					agents[i] = e.agent(e.open())
				}
				var wins atomic.Int32
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i, a := range agents {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						who := approval.User{ID: "U" + string(rune('A'+i%26)), Name: "approver"}
						d, err := approve(ctx, a, id, who)
						if err != nil {
							t.Errorf("decision: %v", err)
							return
						}
						if d.Won {
							wins.Add(1)
						}
					}()
				}
				close(start)
				wg.Wait()
				if n := wins.Load(); n != 1 {
					t.Fatalf("%d winners, want 1", n)
				}
				if runs := e.job.Runs(); len(runs) != 1 {
					t.Fatalf("the call ran %d times, want once", len(runs))
				}
				if n := len(e.srv.Requests()); n != 2 {
					t.Fatalf("%d model requests, want the turn resumed once", n)
				}
			}
		})
	}
}

func TestWaitCoversDecisionsInFlight(t *testing.T) {
	e := newEnv(t, memoryBackend, agenttest.Calls(agenttest.Call("c1", "run_job", `{"job":"slow"}`)), agenttest.Text("Done."))
	e.job.release = make(chan struct{})
	e.job.started = make(chan struct{}, 1)
	a := e.agent(e.open())
	if err := a.Handle(ctx, conv, alice, "run slow"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	go func() { _, _ = approve(ctx, a, e.sink.Cards()[0].ID, bob) }()
	<-e.job.started
	waited := make(chan struct{})
	go func() { a.Wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("Wait returned while the approved call was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(e.job.release)
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return after the run ended")
	}
	if r := e.sink.Replies(); len(r) != 1 || r[0] != "Done." {
		t.Errorf("replies = %q: Wait returned before the resumed turn ended", r)
	}
}

func TestSystemPromptSaysTheRules(t *testing.T) {
	p := agent.SystemPrompt()
	for _, want := range []string{"Countersign", "execute_sql", "execute_command", "file_operations", "http_request",
		"risk_level", "low", "high", "reboot", "executed:false", "did NOT run", "do not retry", "Never say", "short"} {
		if !strings.Contains(p, want) {
			t.Errorf("the system prompt does not say %q", want)
		}
	}
}

// BenchmarkAutoTurn is one turn with an auto-run call: two model calls
// through the real client over loopback HTTP, the assessment, the audit,
// the run and the stored conversation (memory store).
func BenchmarkAutoTurn(b *testing.B) {
	e := newEnvTB(b, memoryBackend)
	a := e.agent(e.open())
	b.ReportAllocs()
	for b.Loop() {
		e.srv.Push(agenttest.Calls(agenttest.Call("c1", "run_job", `{"job":"report","risk_level":"low"}`)), agenttest.Text("Done."))
		if err := a.Handle(ctx, conv, alice, "run the report"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestConversationTTL(t *testing.T) {
	tests := []struct {
		name string
		cfg  time.Duration
		want time.Duration
	}{
		{"default", 0, 24 * time.Hour},
		{"configured", 2 * time.Hour, 2 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, memoryBackend, agenttest.Text("hi"))
			e.cfg.ConversationTTL = tt.cfg
			s := &ttlStore{Store: e.open()}
			if err := e.agent(s).Handle(ctx, conv, alice, "hello"); err != nil {
				t.Fatal(err)
			}
			if len(s.ttls) != 1 || s.ttls[0] != tt.want {
				t.Errorf("conversation saved with TTLs %v, want [%s]", s.ttls, tt.want)
			}
		})
	}
}

// TestResumeWithoutModel: a turn suspended by a replica with a model is
// decided on one without (a restart without llm config): the results are
// replied as direct results instead of being lost.
func TestResumeWithoutModel(t *testing.T) {
	e := newEnv(t, memoryBackend, agenttest.Calls(agenttest.Call("c1", "run_job", `{"job":"nightly"}`)))
	store := e.open()
	if err := e.agent(store).Handle(ctx, conv, alice, "run nightly"); err != nil {
		t.Fatal(err)
	}
	bare, err := agent.New(agent.Config{}, agent.Deps{Tools: e.reg, Policy: e.pol, Store: store, Sink: e.sink, Now: e.clock.Now, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := approve(ctx, bare, e.sink.Cards()[0].ID, bob); err != nil {
		t.Fatalf("decision: %v", err)
	}
	if r := e.sink.Replies(); len(r) != 1 || !strings.Contains(r[0], "job done") {
		t.Errorf("replies = %q, want the job's result", r)
	}
}

// TestConcurrentMessagesInOneThread: two messages handled at once in one
// conversation both end up in it.
func TestConcurrentMessagesInOneThread(t *testing.T) {
	e := newEnv(t, memoryBackend, agenttest.Reply{Content: "one", Delay: 50 * time.Millisecond}, agenttest.Text("two"))
	a := e.agent(e.open())
	var wg sync.WaitGroup
	for i, text := range []string{"first", "second"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.Handle(ctx, conv, alice, text); err != nil {
				t.Error(err)
			}
		}()
		if i == 0 { // the first is at the model before the second is sent
			waitUntil(t, "the first message at the model", func() bool { return len(e.srv.Requests()) >= 1 })
		}
	}
	wg.Wait()
	e.srv.Push(agenttest.Text("three"))
	if err := a.Handle(ctx, conv, alice, "third"); err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, m := range e.srv.Requests()[2].Messages {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if len(users) != 3 {
		t.Errorf("the third request holds user messages %q, want all three", users)
	}
}

// TestPreauthorizedRunsAsApproved: an operator's pre-authorisation stands
// for a person's approval, so such a call runs without the read-only
// fences (a pre-authorised SQL write would otherwise always be refused),
// while an LLM-low auto call keeps them.
func TestPreauthorizedRunsAsApproved(t *testing.T) {
	e := newEnv(t, memoryBackend,
		agenttest.Calls(
			agenttest.Call("c1", "run_job", `{"job":"nightly"}`),
			agenttest.Call("c2", "run_job", `{"job":"report","risk_level":"low"}`),
		),
		agenttest.Text("Done."),
	)
	pol, err := risk.New(risk.Config{Tools: map[string]risk.ToolConfig{
		"run_job": {Preauthorized: []string{`{"job":"nightly"}`}},
	}})
	if err != nil {
		t.Fatalf("risk.New: %v", err)
	}
	e.pol = pol
	a := e.agent(e.open())
	if err := a.Handle(ctx, conv, alice, "run the nightly job and the report"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if cards := e.sink.Cards(); len(cards) != 0 {
		t.Fatalf("cards = %+v, want none: both calls are auto", cards)
	}
	if got := e.job.Runs(); len(got) != 2 || got[0] || !got[1] {
		t.Errorf("AutoRun of the runs = %v, want [false true] (pre-authorised, then LLM-low)", got)
	}
}
