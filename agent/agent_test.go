package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

var ctx = context.Background()

// TestScriptedTurn is the whole path: a model call → an approval → a
// decision from a second store client and a second agent → execution once →
// the model's answer; for approve, cancel and expire, in memory and in Redis.
func TestScriptedTurn(t *testing.T) {
	decisions := []struct {
		name   string
		decide func(t *testing.T, e *env, a *agent.Agent, id string)
		// want is what the model is told, field by field.
		want       tools.Result
		wantFile   bool
		wantStates []approval.State
	}{
		{
			name: "approve",
			decide: func(t *testing.T, e *env, a *agent.Agent, id string) {
				d, err := approve(ctx, a, id, bob)
				if err != nil || !d.Won {
					t.Fatalf("decision = %+v, %v; want a win", d, err)
				}
				if d.Approval.State != approval.Done {
					t.Errorf("the approval ended %s, want done", d.Approval.State)
				}
			},
			want:     tools.Result{Status: tools.StatusOK, Executed: true},
			wantFile: true,
			// Claimed before the first redraw: the running card already
			// says who approved it and when.
			wantStates: []approval.State{approval.Running, approval.Done},
		},
		{
			name: "cancel",
			decide: func(t *testing.T, e *env, a *agent.Agent, id string) {
				d, err := a.Cancel(ctx, id, bob, "not during the freeze")
				if err != nil || !d.Won || d.Approval.State != approval.Cancelled {
					t.Fatalf("decision = %+v, %v; want a cancelling win", d, err)
				}
			},
			want: tools.Result{
				Status: tools.StatusCancelled, Executed: false, DecidedBy: "Bob", Reason: "not during the freeze",
				Message: "The operation was cancelled by Bob. " + tools.DidNotRun,
			},
			wantStates: []approval.State{approval.Cancelled},
		},
		{
			name: "expire",
			decide: func(t *testing.T, e *env, a *agent.Agent, id string) {
				if err := a.Sweep(ctx); err != nil {
					t.Fatalf("Sweep before the deadline: %v", err)
				}
				if n := len(e.srv.Requests()); n != 1 {
					t.Fatalf("a sweep before the deadline resumed the turn (%d model requests)", n)
				}
				e.clock.Advance(agent.DefaultApprovalTTL + time.Second)
				if err := a.Sweep(ctx); err != nil {
					t.Fatalf("Sweep: %v", err)
				}
			},
			want:       tools.Expired(),
			wantStates: []approval.State{approval.Expired},
		},
	}
	for _, b := range backends {
		for _, d := range decisions {
			t.Run(b.name+"/"+d.name, func(t *testing.T) {
				e := newEnv(t, b,
					agenttest.Calls(agenttest.Call("call_1", "execute_command", `{"command":"echo hi >> log.txt","risk_level":"high"}`)),
					agenttest.Text("All done."),
				)
				first := e.agent(e.open())
				if err := first.Handle(ctx, conv, alice, "append hi to log.txt"); err != nil {
					t.Fatalf("Handle: %v", err)
				}
				cards := e.sink.Cards()
				if len(cards) != 1 {
					t.Fatalf("%d cards posted, want 1", len(cards))
				}
				card := cards[0]
				if card.Tool != "execute_command" || card.ToolCallID != "call_1" || card.Requester != alice ||
					card.Conversation != conv || card.State != approval.Pending || card.Verdict.Decision == "" {
					t.Errorf("card = %+v", card)
				}
				if want := e.clock.Now().Add(agent.DefaultApprovalTTL); !card.ExpiresAt.Equal(want) {
					t.Errorf("card expires %s, want %s", card.ExpiresAt, want)
				}
				if got := e.sink.Replies(); len(got) != 0 {
					t.Errorf("replies while waiting for approval: %q", got)
				}
				if _, ok := e.file("log.txt"); ok {
					t.Fatal("the command ran before anyone approved it")
				}

				// A second store client and a second agent decide.
				second := e.agent(e.open())
				d.decide(t, e, second, card.ID)

				content, ran := e.file("log.txt")
				if ran != d.wantFile || (ran && content != "hi\n") {
					t.Errorf("log.txt = %q (exists %v), want exists %v with one line", content, ran, d.wantFile)
				}
				got := resumedResult(t, e)
				got.DurationMS, got.ExitCode = 0, nil
				if diff := cmp.Diff(d.want, got); diff != "" {
					t.Errorf("the model was told (-want +got):\n%s", diff)
				}
				if r := e.sink.Replies(); !slices.Equal(r, []string{"All done."}) {
					t.Errorf("replies = %q, want the model's answer", r)
				}
				var states []approval.State
				for _, s := range e.sink.States(card.ID) {
					if len(states) == 0 || states[len(states)-1] != s {
						states = append(states, s)
					}
				}
				if !slices.Equal(states, d.wantStates) {
					t.Errorf("card states = %v, want %v", states, d.wantStates)
				}
				for _, u := range e.sink.Updates() {
					if u.Approval.MessageRef != "card-1" {
						t.Errorf("the %s update does not carry the card reference: %q", u.Approval.State, u.Approval.MessageRef)
					}
				}

				// A second decision from yet another replica changes
				// nothing and resumes nothing.
				third := e.agent(e.open())
				late, err := approve(ctx, third, card.ID, alice)
				if err != nil {
					t.Fatalf("late decision: %v", err)
				}
				if late.Won || late.Approval.State != d.wantStates[len(d.wantStates)-1] {
					t.Errorf("late decision = won %v, state %s; want the first outcome to stand", late.Won, late.Approval.State)
				}
				if err := third.Sweep(ctx); err != nil {
					t.Fatalf("Sweep: %v", err)
				}
				if n := len(e.srv.Requests()); n != 2 {
					t.Errorf("%d model requests after a late decision, want still 2", n)
				}
				if content, _ := e.file("log.txt"); strings.Count(content, "hi") > 1 {
					t.Errorf("the command ran more than once: %q", content)
				}
				store := e.open()
				wantRuns := 0
				if d.wantFile {
					wantRuns = 1
				}
				if n := len(events(t, store, "execution")); n != wantRuns {
					t.Errorf("%d execution events, want %d", n, wantRuns)
				}
				if n := len(events(t, store, "card")); n != 1 {
					t.Errorf("%d card events, want 1", n)
				}
				if d.name == "expire" && len(events(t, store, "expiry")) != 1 {
					t.Error("no expiry event in the audit log")
				}
			})
		}
	}
}

// TestCancelledResultReachesTheModel checks, field by field, the tool
// message the model gets after a cancel, and the follow-up request.
func TestCancelledResultReachesTheModel(t *testing.T) {
	e := newEnv(t, memoryBackend,
		agenttest.Reply{Content: "Restarting it now.", ToolCalls: []agenttest.WireToolCall{
			agenttest.Call("call_rst", "execute_command", `{"command":"systemctl restart nginx"}`),
		}},
		agenttest.Text("OK, I did not restart nginx."),
	)
	a := e.agent(e.open())
	if err := a.Handle(ctx, conv, alice, "restart nginx"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	card := e.sink.Cards()[0]
	if _, err := a.Cancel(ctx, card.ID, bob, "wrong host"); err != nil {
		t.Fatalf("decision: %v", err)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	follow := reqs[1]
	var roles []string
	for _, m := range follow.Messages {
		roles = append(roles, m.Role)
	}
	if want := []string{"system", "user", "assistant", "tool"}; !slices.Equal(roles, want) {
		t.Fatalf("follow-up roles = %v, want %v", roles, want)
	}
	if follow.Messages[0].Content != agent.SystemPrompt() {
		t.Error("the follow-up does not start with the system prompt")
	}
	if follow.Messages[1].Content != "restart nginx" {
		t.Errorf("user message = %q", follow.Messages[1].Content)
	}
	asst := follow.Messages[2]
	if asst.Content != "Restarting it now." || len(asst.ToolCalls) != 1 || asst.ToolCalls[0].ID != "call_rst" ||
		asst.ToolCalls[0].Function.Name != "execute_command" || asst.ToolCalls[0].Function.Arguments != `{"command":"systemctl restart nginx"}` {
		t.Errorf("assistant message = %+v", asst)
	}
	tool := follow.Messages[3]
	if tool.Role != "tool" || tool.ToolCallID != "call_rst" {
		t.Errorf("tool message role %q id %q, want tool call_rst", tool.Role, tool.ToolCallID)
	}
	var content map[string]any
	if err := json.Unmarshal([]byte(tool.Content), &content); err != nil {
		t.Fatalf("tool content is not JSON: %v", err)
	}
	want := map[string]any{
		"status":      "cancelled",
		"executed":    false,
		"decided_by":  "Bob",
		"reason":      "wrong host",
		"message":     "The operation was cancelled by Bob. " + tools.DidNotRun,
		"duration_ms": float64(0),
	}
	if diff := cmp.Diff(want, content); diff != "" {
		t.Errorf("tool content (-want +got):\n%s", diff)
	}
	var names []string
	for _, tl := range follow.Tools {
		names = append(names, tl.Function.Name)
	}
	if !slices.Equal(names, []string{"execute_command", "run_job"}) {
		t.Errorf("follow-up tools = %v", names)
	}
	if !strings.Contains(string(follow.Tools[0].Function.Parameters), "risk_level") {
		t.Error("the tool schema sent has no risk_level")
	}
}

// TestParallelCalls: one response with auto, blocked and confirmed calls;
// results go back in the original order, after the last decision only.
func TestParallelCalls(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { testParallelCalls(t, b) })
	}
}

func testParallelCalls(t *testing.T, b backend) {
	e := newEnv(t, b,
		agenttest.Calls(
			agenttest.Call("c1", "execute_command", `{"command":"ls"}`),
			agenttest.Call("c2", "execute_command", `{"command":"touch made.txt"}`),
			agenttest.Call("c3", "execute_command", `{"command":"rm -rf /"}`),
			agenttest.Call("c4", "execute_command", `{"command":"cat a.txt"}`),
			agenttest.Call("c5", "execute_command", `{"command":"touch other.txt"}`),
		),
		agenttest.Text("Listed, made one file, refused the wipe."),
	)
	a := e.agent(e.open())
	if err := a.Handle(ctx, conv, alice, "do all of it"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	cards := e.sink.Cards()
	if len(cards) != 2 || cards[0].ToolCallID != "c2" || cards[1].ToolCallID != "c5" {
		t.Fatalf("cards = %+v, want c2 and c5", cards)
	}
	if _, err := approve(ctx, e.agent(e.open()), cards[0].ID, bob); err != nil {
		t.Fatalf("decision: %v", err)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Fatalf("the turn resumed with a call still pending (%d requests)", n)
	}
	if _, err := e.agent(e.open()).Cancel(ctx, cards[1].ID, bob, ""); err != nil {
		t.Fatalf("decision: %v", err)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	var ids []string
	for _, m := range reqs[1].Messages {
		if m.Role == "tool" {
			ids = append(ids, m.ToolCallID)
		}
	}
	if want := []string{"c1", "c2", "c3", "c4", "c5"}; !slices.Equal(ids, want) {
		t.Errorf("tool message order = %v, want %v", ids, want)
	}
	results := toolResults(t, reqs[1])
	want := []tools.Status{tools.StatusOK, tools.StatusOK, tools.StatusBlocked, tools.StatusOK, tools.StatusCancelled}
	if got := statuses(results); !slices.Equal(got, want) {
		t.Errorf("statuses = %v, want %v", got, want)
	}
	if !strings.Contains(results[0].Stdout, "a.txt") || results[3].Stdout != "alpha\n" {
		t.Errorf("auto results: ls %q, cat %q", results[0].Stdout, results[3].Stdout)
	}
	if results[2].Executed || !strings.Contains(results[2].Message, tools.DidNotRun) {
		t.Errorf("blocked result = %+v", results[2])
	}
	if _, ok := e.file("made.txt"); !ok {
		t.Error("the approved call did not run")
	}
	if _, ok := e.file("other.txt"); ok {
		t.Error("the cancelled call ran")
	}
}

// TestMalformedCalls: arguments that are not JSON, wrong types, missing
// arguments and unknown tools get an error result naming the problem, and
// the loop carries on.
func TestMalformedCalls(t *testing.T) {
	calls := []struct {
		name, tool, args, wantErr string
	}{
		{"not JSON", "execute_command", `{"command": "ls"`, "not valid JSON"},
		{"an array", "execute_command", `["ls"]`, "must be one JSON object"},
		{"wrong type", "execute_command", `{"command": 5}`, `argument "command" must be string, not a number`},
		{"missing argument", "execute_command", `{}`, `missing required argument "command"`},
		{"unknown tool", "format_disk", `{"device":"/dev/sda"}`, `there is no tool "format_disk"`},
	}
	var wire []agenttest.WireToolCall
	for i, c := range calls {
		wire = append(wire, agenttest.Call("m"+string(rune('0'+i)), c.tool, c.args))
	}
	e := newEnv(t, memoryBackend, agenttest.Calls(wire...), agenttest.Text("Those calls were malformed."))
	a := e.agent(e.open())
	if err := a.Handle(ctx, conv, alice, "go"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if len(e.sink.Cards()) != 0 {
		t.Errorf("malformed calls got cards: %+v", e.sink.Cards())
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2: the loop should carry on", len(reqs))
	}
	for _, m := range reqs[1].Messages {
		for _, c := range m.ToolCalls {
			var obj map[string]any
			if err := json.Unmarshal([]byte(c.Function.Arguments), &obj); err != nil || obj == nil {
				t.Errorf("call %s goes back to the model with arguments that are not a JSON object: %s", c.ID, c.Function.Arguments)
			}
		}
	}
	results := toolResults(t, reqs[1])
	if len(results) != len(calls) {
		t.Fatalf("%d results, want %d", len(results), len(calls))
	}
	for i, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			r := results[i]
			if r.Status != tools.StatusError || r.Executed {
				t.Errorf("result = %+v, want an error that did not run", r)
			}
			if !strings.Contains(r.Error, c.wantErr) {
				t.Errorf("error = %q, want it to say %q", r.Error, c.wantErr)
			}
		})
	}
	if r := e.sink.Replies(); !slices.Equal(r, []string{"Those calls were malformed."}) {
		t.Errorf("replies = %q", r)
	}
}

func TestRoundTripCap(t *testing.T) {
	var script []agenttest.Reply
	for range 3 {
		script = append(script, agenttest.Calls(agenttest.Call("", "execute_command", `{"command":"ls"}`)))
	}
	e := newEnv(t, memoryBackend, script...)
	e.cfg.MaxRoundTrips = 3
	a := e.agent(e.open())
	if err := a.Handle(ctx, conv, alice, "loop forever"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if n := len(e.srv.Requests()); n != 3 {
		t.Errorf("%d model requests, want 3", n)
	}
	r := e.sink.Replies()
	if len(r) != 1 || !strings.Contains(r[0], "stopped after 3 steps") {
		t.Fatalf("replies = %q, want the cap explained", r)
	}
	if !strings.Contains(r[0], "The last calls:\n• `ls` exit code 0") {
		t.Errorf("reply %q does not sum up the calls the model did not see", r[0])
	}
	// Calls without ids got unique ones, each answered once.
	last := e.srv.Requests()[2]
	seen := map[string]bool{}
	for _, m := range last.Messages {
		for _, c := range m.ToolCalls {
			if c.ID == "" || seen[c.ID] {
				t.Errorf("tool call id %q is empty or repeated", c.ID)
			}
			seen[c.ID] = true
		}
	}
}

func TestModelFailureIsASafeSentence(t *testing.T) {
	tests := []struct {
		name      string
		reply     agenttest.Reply
		wantCalls int
	}{
		{"unauthorized, not retried", agenttest.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: sk-secret123 at https://api.example/v1","type":"invalid_request_error"}}`}, 1},
		{"server error after the retries", agenttest.Reply{Status: 500, Body: `{"error":{"message":"boom at http://10.0.0.1:8000/v1","type":"server_error"}}`}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, memoryBackend, []agenttest.Reply{tt.reply, tt.reply}[:tt.wantCalls]...)
			a := e.agent(e.open())
			if err := a.Handle(ctx, conv, alice, "hello"); err != nil {
				t.Errorf("Handle = %v, want nil once the user has been told", err)
			}
			if n := len(e.srv.Requests()); n != tt.wantCalls {
				t.Errorf("%d model requests, want %d", n, tt.wantCalls)
			}
			r := e.sink.Replies()
			if len(r) != 1 {
				t.Fatalf("replies = %q, want one sentence", r)
			}
			for _, leak := range []string{"sk-", "http", "status code", "boom", "key provided"} {
				if strings.Contains(r[0], leak) {
					t.Errorf("reply %q leaks %q", r[0], leak)
				}
			}
			if !strings.Contains(r[0], "reference") {
				t.Errorf("reply %q gives no reference", r[0])
			}
		})
	}
}

func TestNoModelMeansDirectCommandsOnly(t *testing.T) {
	e := newEnv(t, memoryBackend)
	a, err := agent.New(agent.Config{}, agent.Deps{Tools: e.reg, Policy: e.pol, Store: e.open(), Sink: e.sink, Log: quiet})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := a.Handle(ctx, conv, alice, "what's up?"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	r := e.sink.Replies()
	if len(r) != 1 || !strings.Contains(r[0], "!run") || !strings.Contains(r[0], "OPENAI_API_KEY") {
		t.Errorf("replies = %q, want the direct commands and how to add a model", r)
	}
	if err := a.Direct(ctx, conv, alice, "execute_command", json.RawMessage(`{"command":"cat a.txt"}`)); err != nil {
		t.Fatalf("Direct: %v", err)
	}
	if r := e.sink.Replies(); len(r) != 2 || !strings.Contains(r[1], "alpha") {
		t.Errorf("direct reply = %q, want the file", r)
	}
}

func TestConversationCarriesOverWithoutThePrompt(t *testing.T) {
	e := newEnv(t, memoryBackend, agenttest.Text("first answer"), agenttest.Text("second answer"))
	a := e.agent(e.open())
	if err := a.Handle(ctx, conv, alice, "first"); err != nil {
		t.Fatal(err)
	}
	if err := a.Handle(ctx, conv, alice, "second"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range e.srv.Requests()[1].Messages {
		got = append(got, m.Role+":"+m.Content)
	}
	want := []string{"system:" + agent.SystemPrompt(), "user:first", "assistant:first answer", "user:second"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("second request (-want +got):\n%s", diff)
	}
	stored, err := e.open().LoadConversation(ctx, conv.Key())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored), "Countersign judges every tool call") {
		t.Error("the system prompt was stored with the conversation")
	}
	other := approval.Conversation{Platform: "test", Channel: "C1", Thread: "T2"}
	e.srv.Push(agenttest.Text("fresh"))
	if err := a.Handle(ctx, other, alice, "new thread"); err != nil {
		t.Fatal(err)
	}
	if n := len(e.srv.Requests()[2].Messages); n != 2 {
		t.Errorf("a new thread sent %d messages, want the prompt and the question", n)
	}
}

func TestDirect(t *testing.T) {
	tests := []struct {
		name     string
		command  string
		decide   int // 0 none, 1 approve, -1 cancel
		wantCard bool
		want     []string // in the reply
		wantFile string
	}{
		{name: "auto runs and shows the output", command: "cat a.txt", want: []string{"exit code 0", "alpha"}},
		{name: "block says why", command: "rm -rf /", want: []string{"did not run", "blocked"}},
		{name: "confirm then approve", command: "echo x > out.txt", decide: 1, wantCard: true, want: []string{"exit code 0"}, wantFile: "out.txt"},
		{name: "confirm then cancel", command: "echo x > out.txt", decide: -1, wantCard: true, want: []string{"did not run", "cancelled by Bob"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, memoryBackend)
			a := e.agent(e.open())
			args, _ := json.Marshal(map[string]string{"command": tt.command})
			if err := a.Direct(ctx, conv, alice, "execute_command", args); err != nil {
				t.Fatalf("Direct: %v", err)
			}
			cards := e.sink.Cards()
			if (len(cards) == 1) != tt.wantCard {
				t.Fatalf("%d cards, want card %v", len(cards), tt.wantCard)
			}
			if tt.decide != 0 {
				if len(e.sink.Replies()) != 0 {
					t.Errorf("replied before the decision: %q", e.sink.Replies())
				}
				other := e.agent(e.open())
				decide := func() (approval.DecideResult, error) { return other.Cancel(ctx, cards[0].ID, bob, "") }
				if tt.decide > 0 {
					decide = func() (approval.DecideResult, error) { return approve(ctx, other, cards[0].ID, bob) }
				}
				if _, err := decide(); err != nil {
					t.Fatalf("decide: %v", err)
				}
			}
			r := e.sink.Replies()
			if len(r) != 1 {
				t.Fatalf("replies = %q, want one", r)
			}
			for _, w := range tt.want {
				if !strings.Contains(r[0], w) {
					t.Errorf("reply %q does not say %q", r[0], w)
				}
			}
			if tt.wantFile != "" {
				if _, ok := e.file(tt.wantFile); !ok {
					t.Errorf("%s was not written", tt.wantFile)
				}
			}
			if len(e.srv.Requests()) != 0 {
				t.Error("a direct command called the model")
			}
		})
	}
}

// TestAuditFailureFailsClosed: when the audit record cannot be written,
// nothing runs, whether at assessment or at the approving click.
func TestAuditFailureFailsClosed(t *testing.T) {
	t.Run("at assessment", func(t *testing.T) {
		e := newEnv(t, memoryBackend,
			agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"ls > listing.txt","risk_level":"low"}`)),
			agenttest.Text("I could not run it."),
		)
		store := &failingAudit{Store: e.open()}
		store.fail.Store(true)
		a := e.agent(store)
		if err := a.Handle(ctx, conv, alice, "list"); err != nil {
			t.Fatalf("Handle: %v", err)
		}
		if _, ok := e.file("listing.txt"); ok {
			t.Error("the call ran without an audit record")
		}
		res := toolResults(t, e.srv.Requests()[1])
		if len(res) != 1 || res[0].Executed || res[0].Status != tools.StatusError || !strings.Contains(res[0].Message, "audit") {
			t.Errorf("results = %+v, want a not-run audit error", res)
		}
	})
	t.Run("at the approving click", func(t *testing.T) {
		e := newEnv(t, memoryBackend,
			agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"touch x.txt"}`)),
			agenttest.Text("It did not run."),
		)
		store := &failingAudit{Store: e.open()}
		a := e.agent(store)
		if err := a.Handle(ctx, conv, alice, "touch"); err != nil {
			t.Fatalf("Handle: %v", err)
		}
		store.fail.Store(true)
		d, err := approve(ctx, a, e.sink.Cards()[0].ID, bob)
		if err != nil {
			t.Fatalf("decision: %v", err)
		}
		if d.Approval.State != approval.Failed || d.Approval.Result == nil || d.Approval.Result.Executed {
			t.Errorf("approval = %+v, want failed without running", d.Approval)
		}
		if _, ok := e.file("x.txt"); ok {
			t.Error("the call ran without an audit record of the click")
		}
		res := toolResults(t, e.srv.Requests()[1])
		if len(res) != 1 || res[0].Executed {
			t.Errorf("results = %+v, want not run", res)
		}
	})
	t.Run("at the approving click, and the store fails the refusal", func(t *testing.T) {
		e := newEnv(t, memoryBackend,
			agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"touch x.txt"}`)),
			agenttest.Text("It did not run."),
		)
		store := &failingClaim{failingAudit: failingAudit{Store: e.open()}}
		a := e.agent(store)
		if err := a.Handle(ctx, conv, alice, "touch"); err != nil {
			t.Fatalf("Handle: %v", err)
		}
		store.fail.Store(true)
		store.claimFailures.Store(1) // the claim that would refuse the call fails once
		if _, err := approve(ctx, a, e.sink.Cards()[0].ID, bob); !errors.Is(err, agent.ErrNotStarted) {
			t.Fatalf("decision = %v, want ErrNotStarted", err)
		}
		if _, ok := e.file("x.txt"); ok {
			t.Fatal("the call ran without an audit record of the click")
		}
		// It stays approved and unsettled; a sweep past the grace ends it
		// as not run and tells the model.
		store.fail.Store(false)
		e.clock.Advance(3 * time.Minute)
		if err := a.Sweep(ctx); err != nil {
			t.Fatalf("Sweep: %v", err)
		}
		if _, ok := e.file("x.txt"); ok {
			t.Fatal("the sweep ran the call")
		}
		reqs := e.srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d model requests, want the turn resumed once", len(reqs))
		}
		if res := toolResults(t, reqs[1]); len(res) != 1 || res[0].Executed {
			t.Errorf("results = %+v, want not run", res)
		}
	})
}

// TestClaimFailureRunsNothing: the store fails to claim an approved call;
// nothing runs, the approver's Decide says so, and a sweep later ends the
// call as not run.
func TestClaimFailureRunsNothing(t *testing.T) {
	e := newEnv(t, memoryBackend,
		agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"touch x.txt"}`)),
		agenttest.Text("It did not run."),
	)
	store := &failingClaim{failingAudit: failingAudit{Store: e.open()}}
	a := e.agent(store)
	if err := a.Handle(ctx, conv, alice, "touch"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	store.claimFailures.Store(1)
	d, err := approve(ctx, a, e.sink.Cards()[0].ID, bob)
	if !errors.Is(err, agent.ErrNotStarted) || !d.Won {
		t.Fatalf("decision = %+v, %v; want a won decision and ErrNotStarted", d, err)
	}
	if _, ok := e.file("x.txt"); ok {
		t.Fatal("the call ran")
	}
	e.clock.Advance(3 * time.Minute)
	if err := a.Sweep(ctx); err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	if _, ok := e.file("x.txt"); ok {
		t.Fatal("the sweep ran the call")
	}
	if res := toolResults(t, e.srv.Requests()[1]); len(res) != 1 || res[0].Executed {
		t.Errorf("results = %+v, want not run", res)
	}
}

// failingClaim is a failingAudit whose Claim fails claimFailures times.
type failingClaim struct {
	failingAudit
	claimFailures atomic.Int32
}

func (f *failingClaim) Claim(ctx context.Context, id string, at time.Time) (*approval.Approval, bool, error) {
	if f.claimFailures.Add(-1) >= 0 {
		return nil, false, errors.New("claim: connection reset")
	}
	return f.Store.Claim(ctx, id, at)
}

func TestCardThatCannotBePostedIsCancelled(t *testing.T) {
	e := newEnv(t, memoryBackend,
		agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"touch x.txt"}`)),
		agenttest.Text("I could not ask for approval."),
	)
	e.sink.FailCards = true
	a := e.agent(e.open())
	if err := a.Handle(ctx, conv, alice, "touch"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want the turn to go on with a cancelled result", len(reqs))
	}
	res := toolResults(t, reqs[1])
	if len(res) != 1 || res[0].Status != tools.StatusCancelled || res[0].Executed {
		t.Errorf("results = %+v", res)
	}
	if _, ok := e.file("x.txt"); ok {
		t.Error("the call ran")
	}
}

// TestRestart: the turn suspended by one process is resumed by new store
// and agent objects over the same Redis, and a second resume does nothing.
func TestRestart(t *testing.T) {
	e := newEnv(t, redisBackend,
		agenttest.Calls(
			agenttest.Call("c1", "execute_command", `{"command":"echo one >> log.txt"}`),
			agenttest.Call("c2", "execute_command", `{"command":"echo two >> log.txt"}`),
		),
		agenttest.Text("Both lines are in."),
	)
	before := e.open()
	if err := e.agent(before).Handle(ctx, conv, alice, "append two lines"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	cards := e.sink.Cards()
	if len(cards) != 2 {
		t.Fatalf("%d cards, want 2", len(cards))
	}
	if err := before.Close(); err != nil { // the process goes away
		t.Fatal(err)
	}

	after := e.open()
	a := e.agent(after)
	if _, err := approve(ctx, a, cards[0].ID, bob); err != nil {
		t.Fatalf("decision after the restart: %v", err)
	}
	if _, err := approve(ctx, e.agent(e.open()), cards[1].ID, bob); err != nil {
		t.Fatalf("decision after the restart: %v", err)
	}
	if got, _ := e.file("log.txt"); got != "one\ntwo\n" && got != "two\none\n" {
		t.Errorf("log.txt = %q, want each line once", got)
	}
	if r := e.sink.Replies(); !slices.Equal(r, []string{"Both lines are in."}) {
		t.Fatalf("replies = %q", r)
	}
	// A second resume: the store says nobody else is last, and the turn is gone.
	last, err := after.Resolve(ctx, cards[1].TurnID, cards[1].ID)
	if last || (err != nil && !errors.Is(err, approval.ErrNotFound)) {
		t.Errorf("Resolve again = %v, %v; want not last", last, err)
	}
	for _, c := range cards {
		if d, err := approve(ctx, a, c.ID, alice); err != nil || d.Won {
			t.Errorf("decision again = %+v, %v; want a loss", d, err)
		}
	}
	if err := a.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(e.srv.Requests()); n != 2 {
		t.Errorf("%d model requests, want 2", n)
	}
	if got, _ := e.file("log.txt"); strings.Count(got, "\n") != 2 {
		t.Errorf("log.txt = %q after the repeats", got)
	}
}

func TestNewRejectsMissingDeps(t *testing.T) {
	e := newEnv(t, memoryBackend)
	full := agent.Deps{Tools: e.reg, Policy: e.pol, Store: e.open(), Sink: e.sink}
	tests := []struct {
		name string
		edit func(*agent.Deps, *agent.Config)
		want string // in the error
	}{
		{"no tools", func(d *agent.Deps, _ *agent.Config) { d.Tools = nil }, "tool registry"},
		{"no policy", func(d *agent.Deps, _ *agent.Config) { d.Policy = nil }, "risk policy"},
		{"no store", func(d *agent.Deps, _ *agent.Config) { d.Store = nil }, "approval store"},
		{"no sink", func(d *agent.Deps, _ *agent.Config) { d.Sink = nil }, "sink"},
		{"negative ttl", func(_ *agent.Deps, c *agent.Config) { c.ApprovalTTL = -time.Minute }, "agent.approval_ttl"},
		{"negative preview timeout", func(_ *agent.Deps, c *agent.Config) { c.PreviewTimeout = -time.Second }, "agent.preview_timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, c := full, agent.Config{}
			tt.edit(&d, &c)
			_, err := agent.New(c, d)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v, want an error naming %q", err, tt.want)
			}
		})
	}
	if _, err := agent.New(agent.Config{}, full); err != nil {
		t.Errorf("New with every dependency: %v", err)
	}
}

// TestDecisionBeforeTheTurnIsSaved: someone decides (from !pending) in the
// moment between the approval's creation and its turn being saved; the
// decision's resolve finds no turn, and the suspending agent makes up for it.
func TestDecisionBeforeTheTurnIsSaved(t *testing.T) {
	e := newEnv(t, memoryBackend,
		agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"touch x.txt"}`)),
		agenttest.Text("Cancelled, as asked."),
	)
	base := e.open()
	other := e.agent(base)
	hook := &hookStore{Store: base}
	hook.beforeSaveTurn = func(turn *approval.Turn) {
		for _, id := range turn.Pending {
			if d, err := other.Cancel(ctx, id, bob, "too fast"); err != nil || !d.Won {
				t.Errorf("early Decide = %+v, %v", d, err)
			}
		}
	}
	if err := e.agent(hook).Handle(ctx, conv, alice, "touch"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want the turn resumed once", len(reqs))
	}
	if res := toolResults(t, reqs[1]); len(res) != 1 || res[0].Status != tools.StatusCancelled || res[0].Reason != "too fast" {
		t.Errorf("results = %+v", res)
	}
	if r := e.sink.Replies(); !slices.Equal(r, []string{"Cancelled, as asked."}) {
		t.Errorf("replies = %q", r)
	}
}

// TestCallsAreShown: every call of a model turn that needs no card is shown
// in the conversation before the model's answer, with why it needed none;
// blocked and malformed calls too. A quiet channel shows only the answer.
func TestCallsAreShown(t *testing.T) {
	for _, shown := range []bool{true, false} {
		e := newEnv(t, memoryBackend,
			agenttest.Calls(
				agenttest.Call("c1", "execute_command", `{"command":"ls"}`),
				agenttest.Call("c2", "execute_command", `{"command":"rm -rf /"}`),
				agenttest.Call("c3", "execute_command", `{"command":"touch made.txt","risk_level":"low"}`),
				agenttest.Call("c4", "execute_command", `not json`),
			),
			agenttest.Text("All done."))
		e.shown = shown
		if err := e.agent(e.open()).Handle(ctx, conv, alice, "look around"); err != nil {
			t.Fatalf("Handle: %v", err)
		}
		r := e.sink.Replies()
		if !shown {
			if !slices.Equal(r, []string{"All done."}) {
				t.Errorf("quiet: replies = %q, want only the answer", r)
			}
			continue
		}
		if len(r) != 2 || r[1] != "All done." {
			t.Fatalf("replies = %q, want the calls, then the answer", r)
		}
		for _, want := range []string{
			"▸ `ls` exit code 0", "ran without a card: read-only",
			"▸ `rm -rf /` did not run: blocked by policy",
			"▸ `touch made.txt` exit code 0", "ran without a card: the model said low risk",
			"▸ execute_command: did not run (",
		} {
			if !strings.Contains(r[0], want) {
				t.Errorf("the calls are shown as\n%s\nwant %q", r[0], want)
			}
		}
	}
}
