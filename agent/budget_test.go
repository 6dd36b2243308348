package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/approval"
)

// budgetWords records the stops the agent hands the bot for words.
type budgetWords struct{ got []agent.OverBudget }

func (w *budgetWords) say(o agent.OverBudget) string {
	w.got = append(w.got, o)
	return "WORDS " + o.Limit
}

// budgetAgent is e's agent over store with words recorded in w.
func budgetAgent(t *testing.T, e *env, store approval.Store, w *budgetWords) *agent.Agent {
	t.Helper()
	a, err := agent.New(e.cfg, agent.Deps{
		Model: e.model(), Tools: e.reg, Policy: e.pol, Store: store, Sink: e.sink, Now: e.clock.Now, Log: quiet,
		Quiet: func(approval.Conversation) bool { return true }, BudgetWords: w.say,
	})
	if err != nil {
		t.Fatalf("agent.New: %v", err)
	}
	return a
}

// TestBudgetPerTurn: a turn whose model calls have spent its per_turn
// budget stops before the next call, with the bot's words, the calls that
// ran summed up, and the spend recorded for the channel and the
// conversation; the next message is a new turn.
func TestBudgetPerTurn(t *testing.T) {
	e := newEnv(t, memoryBackend,
		agenttest.Reply{ToolCalls: []agenttest.WireToolCall{agenttest.Call("c1", "execute_command", `{"command":"ls"}`)}, Prompt: 80, Completion: 30},
		agenttest.Text("a new turn"),
	)
	e.cfg.Budget = agent.Budget{PerTurn: 100}
	var w budgetWords
	store := e.open()
	a := budgetAgent(t, e, store, &w)
	if err := a.Handle(ctx, conv, alice, "list the files, then more"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Fatalf("%d model requests, want 1: the second would start over the turn's budget", n)
	}
	if len(w.got) != 1 || w.got[0] != (agent.OverBudget{Limit: agent.LimitPerTurn, Spent: 110, Max: 100}) {
		t.Fatalf("stops = %+v, want one per_turn stop at 110 of 100", w.got)
	}
	r := e.sink.Replies()
	if len(r) != 1 || !strings.HasPrefix(r[0], "WORDS per_turn") || !strings.Contains(r[0], "The last calls:\n• `ls` exit code 0") {
		t.Fatalf("replies = %q, want the words and the calls that ran", r)
	}
	s, err := a.Spending(ctx, conv)
	if err != nil || s.Today != 110 || s.Conversation != 110 {
		t.Errorf("Spending = %+v, %v; want 110 today and in the conversation", s, err)
	}
	if err := a.Handle(ctx, conv, alice, "go on"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if r := e.sink.Replies(); len(r) != 2 || r[1] != "a new turn" {
		t.Errorf("replies = %q, want the next message answered: a new turn starts afresh", r)
	}
}

// TestBudgetPerTurnAcrossACard: the turn's spend travels with the turn
// while a card waits; the turn a decision resumes is still over.
func TestBudgetPerTurnAcrossACard(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			e := newEnv(t, b, agenttest.Reply{
				ToolCalls: []agenttest.WireToolCall{agenttest.Call("c1", "execute_command", `{"command":"systemctl restart nginx"}`)},
				Prompt:    90, Completion: 20,
			})
			e.cfg.Budget = agent.Budget{PerTurn: 100}
			var w budgetWords
			a := budgetAgent(t, e, e.open(), &w)
			if err := a.Handle(ctx, conv, alice, "restart nginx"); err != nil {
				t.Fatalf("Handle: %v", err)
			}
			other := budgetAgent(t, e, e.open(), &w) // another replica takes the decision
			if _, err := other.Cancel(ctx, e.sink.Cards()[0].ID, bob, "not now"); err != nil {
				t.Fatalf("Cancel: %v", err)
			}
			if n := len(e.srv.Requests()); n != 1 {
				t.Fatalf("%d model requests, want 1", n)
			}
			if len(w.got) != 1 || w.got[0].Limit != agent.LimitPerTurn || w.got[0].Spent != 110 {
				t.Fatalf("stops = %+v, want per_turn at 110", w.got)
			}
		})
	}
}

// TestBudgetNoUsageIsEstimated: a server that reports no usage is
// counted an estimate, never nothing, so a daily budget still holds.
func TestBudgetNoUsageIsEstimated(t *testing.T) {
	e := newEnv(t, memoryBackend, agenttest.Reply{Content: "hello", NoUsage: true})
	e.cfg.Budget = agent.Budget{PerChannelPerDay: 1}
	var w budgetWords
	a := budgetAgent(t, e, e.open(), &w)
	for _, text := range []string{"hi", "again"} {
		if err := a.Handle(ctx, conv, alice, text); err != nil {
			t.Fatalf("Handle: %v", err)
		}
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Fatalf("%d model requests, want 1", n)
	}
	if len(w.got) != 1 || w.got[0].Limit != agent.LimitPerChannelPerDay || w.got[0].Spent < 100 {
		t.Fatalf("stops = %+v, want per_channel_per_day with an estimate of the call (its prompt alone is kilobytes)", w.got)
	}
	if want := e.clock.Now().Truncate(24 * time.Hour).Add(24 * time.Hour); !w.got[0].Resets.Equal(want) {
		t.Errorf("resets at %v, want the next midnight UTC %v", w.got[0].Resets, want)
	}
}

// spendDown is a store whose spend cannot be read.
type spendDown struct{ approval.Store }

var errSpendDown = errors.New("connection refused")

func (spendDown) Spend(context.Context, ...string) ([]approval.Spent, error) {
	return nil, errSpendDown
}

// TestBudgetFailsClosed: with a conversation or channel limit set, a
// store that cannot say what was spent stops the turn before the model
// is asked; without one, nothing is read.
func TestBudgetFailsClosed(t *testing.T) {
	for _, tt := range []struct {
		name   string
		budget agent.Budget
		asked  int
	}{
		{"a channel limit", agent.Budget{PerChannelPerDay: 1000}, 0},
		{"a conversation limit", agent.Budget{PerConversation: 1000}, 0},
		{"a turn limit only", agent.Budget{PerTurn: 1000}, 1},
		{"no limit", agent.Budget{}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, memoryBackend, agenttest.Text("hello"))
			e.cfg.Budget = tt.budget
			var w budgetWords
			a := budgetAgent(t, e, spendDown{e.open()}, &w)
			if err := a.Handle(ctx, conv, alice, "hi"); err != nil {
				t.Fatalf("Handle: %v", err)
			}
			if n := len(e.srv.Requests()); n != tt.asked {
				t.Fatalf("%d model requests, want %d", n, tt.asked)
			}
			if tt.asked == 1 {
				return
			}
			if len(w.got) != 1 || !w.got[0].Unchecked || w.got[0].Ref == "" {
				t.Fatalf("stops = %+v, want one unchecked, with a reference", w.got)
			}
			if r := e.sink.Replies(); len(r) != 1 {
				t.Errorf("replies = %q, want the person told once", r)
			}
		})
	}
}

// addDown is a store whose spend cannot be added.
type addDown struct{ approval.Store }

func (addDown) AddSpend(context.Context, string, int64, time.Time) (int64, error) {
	return 0, errSpendDown
}

// TestBudgetUnrecordedAdd: an add the store refuses stops the turn at its
// next check only when a limit needs the store's totals; a turn limit
// alone is counted in hand, so the turn goes on.
func TestBudgetUnrecordedAdd(t *testing.T) {
	for _, tt := range []struct {
		name   string
		budget agent.Budget
		asked  int
	}{
		{"a turn limit only", agent.Budget{PerTurn: 1000}, 2},
		{"a conversation limit", agent.Budget{PerConversation: 1000}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, memoryBackend,
				agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"ls"}`)),
				agenttest.Text("done"))
			e.cfg.Budget = tt.budget
			var w budgetWords
			a := budgetAgent(t, e, addDown{e.open()}, &w)
			if err := a.Handle(ctx, conv, alice, "list"); err != nil {
				t.Fatalf("Handle: %v", err)
			}
			if n := len(e.srv.Requests()); n != tt.asked {
				t.Fatalf("%d model requests, want %d", n, tt.asked)
			}
		})
	}
}
