package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// agentConv is where the test agent's cards go.
var agentConv = approval.Conversation{Platform: "test", Channel: "ops"}

func agentCall(mode risk.Mode, args string) agent.AgentCall {
	return agent.AgentCall{Agent: "ci-bot", Conv: agentConv, Mode: mode, Tool: "execute_command", Args: json.RawMessage(args)}
}

// TestAgentCallLevel: another agent's risk_level may raise the risk,
// never lower it, unless its operator set it to smart; strict makes every
// call wait. The policy itself is smart (the default), so only the
// agent's mode holds its low back.
func TestAgentCallLevel(t *testing.T) {
	for _, tt := range []struct {
		name  string
		mode  risk.Mode
		args  string
		waits bool
	}{
		{"guarded: ls runs", risk.Guarded, `{"command":"ls"}`, false},
		{"default mode is guarded", "", `{"command":"touch made.txt","risk_level":"low"}`, true},
		{"guarded: its low does not lower a write", risk.Guarded, `{"command":"touch made.txt","risk_level":"low"}`, true},
		{"guarded: its high raises ls", risk.Guarded, `{"command":"ls","risk_level":"high"}`, true},
		{"smart: its low lowers a write", risk.Smart, `{"command":"touch made.txt","risk_level":"low"}`, false},
		{"strict: ls waits", risk.Strict, `{"command":"ls"}`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, memoryBackend)
			o, err := e.agent(e.open()).Call(ctx, agentCall(tt.mode, tt.args))
			if err != nil {
				t.Fatal(err)
			}
			var assessed []approval.Event
			for _, ev := range events(t, e.open(), approval.KindAssessment) {
				if ev.Actor == "agent:ci-bot" && ev.Channel == agentConv.Channel {
					assessed = append(assessed, ev)
				}
			}
			if len(assessed) != 1 {
				t.Fatalf("%d assessments audited with the agent as the actor, want 1", len(assessed))
			}
			if waits := !o.Done(); waits != tt.waits {
				t.Fatalf("waits = %v, want %v (result %+v)", waits, tt.waits, o.Result)
			}
			if tt.waits {
				if len(e.sink.Cards()) != 1 || o.Record.Requester.Display() != "agent ci-bot" || o.Record.Conversation != agentConv {
					t.Fatalf("cards %d, requester %q in %v; want one card by agent ci-bot in %v", len(e.sink.Cards()), o.Record.Requester.Display(), o.Record.Conversation, agentConv)
				}
				if _, made := e.file("made.txt"); made {
					t.Fatal("a call that waits ran")
				}
			} else if o.Result.Status != tools.StatusOK || !o.Result.Executed {
				t.Fatalf("auto call: %+v", o.Result)
			}
		})
	}
}

// TestAgentCallAcrossReplicas: a waiting call's card is decided on one
// replica and its outcome read on another (a restart, or another replica
// behind the gateway), over the memory and the Redis store; the agent
// cannot approve its own call, another agent cannot read it, and a repeat
// with the same key attaches to the same card.
func TestAgentCallAcrossReplicas(t *testing.T) {
	for _, b := range backends {
		for _, tt := range []struct {
			name   string
			decide func(t *testing.T, e *env, id string)
			want   tools.Status
			gone   bool
		}{
			{"approved", func(t *testing.T, e *env, id string) {
				if _, err := approve(ctx, e.agent(e.open()), id, alice); err != nil {
					t.Fatal(err)
				}
			}, tools.StatusOK, true},
			{"cancelled", func(t *testing.T, e *env, id string) {
				if _, err := e.agent(e.open()).Cancel(ctx, id, alice, "not now"); err != nil {
					t.Fatal(err)
				}
			}, tools.StatusCancelled, false},
			{"expired", func(t *testing.T, e *env, id string) {
				e.clock.Advance(2 * time.Hour)
				if err := e.agent(e.open()).Sweep(ctx); err != nil {
					t.Fatal(err)
				}
			}, tools.StatusExpired, false},
		} {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				e := newEnv(t, b)
				c := agentCall("", `{"command":"rm a.txt"}`)
				c.Key = "job-7"
				o, err := e.agent(e.open()).Call(ctx, c)
				if err != nil || o.Done() || o.ID == "" {
					t.Fatalf("call: %+v, %v; want it waiting", o, err)
				}
				again, err := e.agent(e.open()).Call(ctx, c)
				if err != nil || again.ID != o.ID || !again.Attached || len(e.sink.Cards()) != 1 {
					t.Fatalf("the repeat: id %s attached %v (%v), %d cards; want %s and one card", again.ID, again.Attached, err, len(e.sink.Cards()), o.ID)
				}
				if r, err := e.agent(e.open()).Approve(ctx, o.ID, approval.Vote{By: agent.AgentUser("ci-bot"), Need: 1}); err == nil && r.Won {
					t.Fatal("the agent approved its own call")
				}
				if _, err := e.agent(e.open()).Outcome(ctx, "other-bot", o.ID); !errors.Is(err, agent.ErrNoCall) {
					t.Fatalf("another agent read the call: %v", err)
				}

				waiter := e.agent(e.open())
				got := make(chan agent.CallOutcome, 1)
				go func() {
					o, err := waiter.Await(ctx, "ci-bot", o.ID, nil)
					if err != nil {
						t.Error(err)
					}
					got <- o
				}()
				tt.decide(t, e, o.ID)
				var done agent.CallOutcome
				select {
				case done = <-got:
				case <-time.After(10 * time.Second):
					t.Fatal("Await did not see the decision made on another replica")
				}
				if done.Result.Status != tt.want {
					t.Fatalf("result %+v, want %s", done.Result, tt.want)
				}
				if _, there := e.file("a.txt"); there == tt.gone {
					t.Fatalf("a.txt there = %v after %s", there, tt.name)
				}
			})
		}
	}
}

// TestAgentDecideOnly: a call to decide only (a hook) never runs in
// Countersign: an auto call is allowed unrun, an approved card is allowed
// unrun with who approved it, and an edited card is a refusal (the agent
// would run its own call, not the edit).
func TestAgentDecideOnly(t *testing.T) {
	e := newEnv(t, memoryBackend)
	a := e.agent(e.open())
	c := agentCall("", `{"command":"ls"}`)
	c.DecideOnly = true
	o, err := a.Call(ctx, c)
	if err != nil || !o.Done() || o.Result.Status != tools.StatusOK || o.Result.Executed || o.Result.DecidedBy != "policy" {
		t.Fatalf("ls: %+v, %v; want allowed unrun by the policy", o.Result, err)
	}

	c.Args = json.RawMessage(`{"command":"rm a.txt"}`)
	o, err = a.Call(ctx, c)
	if err != nil || o.Done() {
		t.Fatalf("rm: %+v, %v; want a card", o, err)
	}
	if _, err := approve(ctx, e.agent(e.open()), o.ID, alice); err != nil {
		t.Fatal(err)
	}
	o, err = a.Await(ctx, "ci-bot", o.ID, nil)
	if err != nil || o.Result.Status != tools.StatusOK || o.Result.Executed || o.Result.DecidedBy != alice.Name {
		t.Fatalf("approved: %+v, %v; want allowed unrun by Alice", o.Result, err)
	}
	if _, there := e.file("a.txt"); !there {
		t.Fatal("an approved call to decide only ran in Countersign")
	}

	o, err = a.Call(ctx, c)
	if err != nil || o.Done() {
		t.Fatalf("rm again: %+v, %v", o, err)
	}
	ed, err := e.agent(e.open()).Edit(ctx, o.ID, bob, json.RawMessage(`{"command":"rm -i a.txt"}`))
	if err != nil || ed.New == nil {
		t.Fatalf("edit: %+v, %v", ed, err)
	}
	if _, err := approve(ctx, e.agent(e.open()), ed.New.ID, alice); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	o, err = a.Await(wctx, "ci-bot", o.ID, nil)
	if err != nil || o.Result.Status != tools.StatusDenied || !strings.Contains(o.Result.Message, "not the edit") {
		t.Fatalf("edited: %+v, %v; want denied", o.Result, err)
	}
	if _, there := e.file("a.txt"); !there {
		t.Fatal("the edit of a call to decide only ran in Countersign")
	}
}
