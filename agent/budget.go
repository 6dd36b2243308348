package agent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/countersign/countersign/approval"
)

// This file is the model's spend budget (llm.budget): tokens per turn, per
// conversation and per channel per day. Each model call's tokens are added
// to the conversation's and the channel's day totals in the store
// (approval.Spender), so that every replica counts them, across restarts;
// the turn's own count travels with the turn (turnState.Tokens). Before
// each model call of a turn the totals are read: a limit reached stops the
// turn before the call, and the person is told which limit and when it
// resets (Deps.BudgetWords, bot/words.go).

// Budget is llm.budget: the most tokens (prompt and completion, as the
// model reports them) the model may spend. 0, or a key left out, is no
// limit.
//
//	llm:
//	  budget:
//	    per_turn: 50000               # one message's turn, every model call of it
//	    per_conversation: 200000      # one thread, until it is idle for agent.conversation_ttl
//	    per_channel_per_day: 2000000  # one channel, per UTC day (resets at 00:00 UTC)
type Budget struct {
	PerTurn          int64 `yaml:"per_turn"`
	PerConversation  int64 `yaml:"per_conversation"`
	PerChannelPerDay int64 `yaml:"per_channel_per_day"`
}

// The limits of a Budget, as their keys under llm.budget name them.
const (
	LimitPerTurn          = "per_turn"
	LimitPerConversation  = "per_conversation"
	LimitPerChannelPerDay = "per_channel_per_day"
)

// Validate refuses a negative limit, naming its key. (A value that is not
// a whole number never gets here: the configuration's reader names its
// key.)
func (b Budget) Validate() error {
	var errs []error
	for _, l := range []struct {
		key string
		v   int64
	}{{LimitPerTurn, b.PerTurn}, {LimitPerConversation, b.PerConversation}, {LimitPerChannelPerDay, b.PerChannelPerDay}} {
		if l.v < 0 {
			errs = append(errs, fmt.Errorf("llm.budget.%s: %d is negative; give a whole number of tokens, or 0 (or leave it out) for no limit", l.key, l.v))
		}
	}
	return errors.Join(errs...)
}

// limited reports whether any limit is set.
func (b Budget) limited() bool {
	return b.PerTurn > 0 || b.PerConversation > 0 || b.PerChannelPerDay > 0
}

// OverBudget is why a turn stopped before a model call: a limit of
// llm.budget was reached, or (Unchecked) the spend could not be read from
// the store, so the turn stopped rather than spend past a limit unseen.
// The bot turns it into words (Deps.BudgetWords).
type OverBudget struct {
	// Limit is the key under llm.budget of the limit reached:
	// LimitPerTurn, LimitPerConversation or LimitPerChannelPerDay.
	Limit string
	// Spent is the tokens counted against the limit; Max is the limit.
	Spent, Max int64
	// Resets is when the limit allows spending again: the next midnight
	// UTC for a channel's day, the conversation's total expiring after
	// agent.conversation_ttl without spend; zero for a turn (the next
	// message starts a new turn).
	Resets time.Time
	// Unchecked: the store did not answer (Ref names the log line).
	Unchecked bool
	Ref       string
}

// Error says it plainly; the bot's words replace it in the chat.
func (o OverBudget) Error() string {
	if o.Unchecked {
		return "the model's spend could not be checked (reference " + o.Ref + "), so the model was not asked"
	}
	s := "llm.budget." + o.Limit + " reached: " + strconv.FormatInt(o.Spent, 10) + " of " + strconv.FormatInt(o.Max, 10) + " tokens spent"
	if !o.Resets.IsZero() {
		s += "; it resets at " + o.Resets.UTC().Format("2006-01-02 15:04 UTC")
	}
	return s
}

// Spending is what the model spent where a conversation is, for !usage:
// this channel today, this conversation, and the limits with when each
// resets.
type Spending struct {
	Budget Budget
	// Today is the channel's spend on the UTC day now is in; DayResets is
	// the next midnight UTC.
	Today     int64
	DayResets time.Time
	// Conversation is the conversation's spend; ConversationResets when it
	// is forgotten (zero when nothing is spent).
	Conversation       int64
	ConversationResets time.Time
}

// Spending reads the spend of conv's channel today and of conv itself.
func (a *Agent) Spending(ctx context.Context, conv approval.Conversation) (Spending, error) {
	now := a.now()
	got, err := a.store.Spend(ctx, approval.ChannelDayKey(conv.Platform, conv.Channel, now), approval.ConversationKey(conv))
	if err != nil {
		return Spending{}, fmt.Errorf("read the spend of %s: %w", conv.Key(), err)
	}
	return Spending{
		Budget: a.cfg.Budget, Today: got[0].Tokens, DayResets: nextDay(now),
		Conversation: got[1].Tokens, ConversationResets: got[1].Until,
	}, nil
}

// nextDay is the midnight UTC after t: when a channel's day resets.
func nextDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}

// dayGrace keeps a channel's day total an hour past its midnight, so that
// a replica whose clock is a little behind still reads the day it is in.
const dayGrace = time.Hour

// spend is a turn's count of tokens: spent so far (every model call of
// the turn, resumed ones included), and whether an add to the store
// failed, so that the next check stops the turn (fail closed).
type spend struct {
	tokens     int64
	unrecorded bool
}

// budgetState is what the agent keeps of the budget: whether it has said
// that the model reports no usage.
type budgetState struct {
	estimated atomic.Bool
}

// overBudget checks the limits before a model call of a turn that has
// spent sp so far: it returns why the call must not be made, or nil.
func (a *Agent) overBudget(ctx context.Context, conv approval.Conversation, sp spend) *OverBudget {
	b := a.cfg.Budget
	if !b.limited() {
		return nil
	}
	unchecked := func(err error) *OverBudget {
		ref := randomHex(4)
		a.log.ErrorContext(ctx, "the model's spend could not be checked, so the turn stops before its model call",
			"ref", ref, "conversation", conv.Key(), "error", err)
		return &OverBudget{Unchecked: true, Ref: ref}
	}
	if b.PerTurn > 0 && sp.tokens >= b.PerTurn {
		return &OverBudget{Limit: LimitPerTurn, Spent: sp.tokens, Max: b.PerTurn}
	}
	if b.PerConversation == 0 && b.PerChannelPerDay == 0 {
		return nil // the turn's own count is in hand; the store's totals are not asked
	}
	if sp.unrecorded {
		return unchecked(errors.New("the spend of an earlier model call of the turn was not recorded"))
	}
	now := a.now()
	got, err := a.store.Spend(ctx, approval.ChannelDayKey(conv.Platform, conv.Channel, now), approval.ConversationKey(conv))
	if err != nil {
		return unchecked(err)
	}
	if day := got[0].Tokens; b.PerChannelPerDay > 0 && day >= b.PerChannelPerDay {
		return &OverBudget{Limit: LimitPerChannelPerDay, Spent: day, Max: b.PerChannelPerDay, Resets: nextDay(now)}
	}
	if c := got[1]; b.PerConversation > 0 && c.Tokens >= b.PerConversation {
		return &OverBudget{Limit: LimitPerConversation, Spent: c.Tokens, Max: b.PerConversation, Resets: c.Until}
	}
	return nil
}

// addSpend adds the tokens of one model call (req and its response) to
// the turn's count and to the store's totals of conv and its channel's
// day. A server that reports no usage is counted an estimate (estimate),
// never zero. An add the store refuses is logged, and marks the turn so
// that its next check stops it.
func (a *Agent) addSpend(ctx context.Context, conv approval.Conversation, sp *spend, req Request, resp Response) {
	n := int64(max(resp.Usage.PromptTokens, 0) + max(resp.Usage.CompletionTokens, 0))
	if n == 0 {
		n = estimate(req, resp)
		if !a.budgetState.estimated.Swap(true) {
			a.log.WarnContext(ctx, "the model reports no token usage; each of its calls is counted an estimate (a quarter of its bytes) against llm.budget",
				"conversation", conv.Key(), "tokens", n)
		}
	}
	sp.tokens += n
	now := a.now()
	// The tokens are spent once the answer is in: a !cancel or a shutdown
	// right after it must not keep them out of the totals.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var errs []error
	for _, k := range []struct {
		key    string
		expiry time.Time
	}{
		{approval.ChannelDayKey(conv.Platform, conv.Channel, now), nextDay(now).Add(dayGrace)},
		{approval.ConversationKey(conv), now.Add(a.cfg.ConversationTTL)},
	} {
		if _, err := a.store.AddSpend(ctx, k.key, n, k.expiry); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		a.log.ErrorContext(ctx, "recording the model's spend", "conversation", conv.Key(), "tokens", n, "error", err)
		sp.unrecorded = true
	}
}

// estimate is the tokens of a call whose server reported none: a quarter
// of the bytes it sent and got back (about what a tokenizer makes of
// English and code), at least 1.
func estimate(req Request, resp Response) int64 {
	n := len(resp.Message.Content)
	for _, c := range resp.Message.ToolCalls {
		n += len(c.Name) + len(c.Arguments)
	}
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return int64(max(n/4, 1))
}

// stopOverBudget ends a turn that o stopped before its model call: the
// conversation so far is kept (with the words, so that the model knows
// the turn stopped there), and the person is told.
func (a *Agent) stopOverBudget(ctx context.Context, h *hold, conv approval.Conversation, msgs []Message, o *OverBudget) error {
	text := o.Error()
	if a.budgetWords != nil {
		text = a.budgetWords(*o)
	}
	msgs = append(msgs, Message{Role: RoleAssistant, Content: text})
	a.keepConversation(ctx, conv, msgs)
	return a.reply(ctx, h.out, conv, strings.TrimSpace(text)+a.lastResults(msgs[:len(msgs)-1]))
}
