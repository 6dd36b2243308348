package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/agent"
)

// TestBudgetWords: each stop over llm.budget names its limit and when it
// resets (or how to go on), and a stop for want of a check gives the
// reference; !usage shows the spend against each limit.
func TestBudgetWords(t *testing.T) {
	midnight := time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC)
	later := time.Date(2026, 5, 2, 14, 3, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		o    agent.OverBudget
		want []string
	}{
		{"per turn", agent.OverBudget{Limit: agent.LimitPerTurn, Spent: 110, Max: 100},
			[]string{"spent 110 tokens", "a turn may spend 100", "llm.budget.per_turn", "Send a message to go on"}},
		{"per conversation", agent.OverBudget{Limit: agent.LimitPerConversation, Spent: 5000, Max: 4000, Resets: later},
			[]string{"this conversation has spent 5000 tokens of its 4000", "llm.budget.per_conversation", "Start a new thread", "2026-05-02 14:03 UTC"}},
		{"per channel per day", agent.OverBudget{Limit: agent.LimitPerChannelPerDay, Spent: 1200, Max: 1000, Resets: midnight},
			[]string{"this channel has spent 1200 tokens today", "1000 a day", "llm.budget.per_channel_per_day", "midnight UTC, 2026-05-02 00:00 UTC"}},
		{"unchecked", agent.OverBudget{Unchecked: true, Ref: "ab12cd34"},
			[]string{"could not check", "ab12cd34", "did not ask the model"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := overBudget(tt.o)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("overBudget = %q, does not say %q", got, w)
				}
			}
		})
	}
	got := spending(agent.Spending{Budget: agent.Budget{PerChannelPerDay: 1000}, Today: 40, DayResets: midnight, Conversation: 7, ConversationResets: later})
	for _, w := range []string{
		"this channel today: 40 of 1000 (llm.budget.per_channel_per_day); resets at midnight UTC, 2026-05-02 00:00 UTC",
		"this conversation: 7 (no limit); forgotten at 2026-05-02 14:03 UTC",
		"each turn (a message and the model calls it leads to): no limit",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("spending = %q, does not say %q", got, w)
		}
	}
}
