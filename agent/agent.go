// Package agent runs conversation turns: it sends the conversation and the
// tools to the model, judges every tool call with the risk policy, runs what
// may run, suspends the turn on what needs a person, and resumes it when the
// last decision is in. It also runs direct commands (SPEC §7) through the
// same assessment and approvals, with no model at all.
package agent

import (
	"context"
	"time"

	"github.com/countersign/countersign/agent/approval"
	"github.com/countersign/countersign/tools"
)

// Sink is where the agent shows things to people. The bot implements it on
// top of a chat adapter. Calls may come from any goroutine.
type Sink interface {
	// Reply posts text into the conversation (the model's answer, a notice).
	Reply(ctx context.Context, conv approval.Conversation, text string) error
	// PostCard posts the approval card of a new pending approval and returns
	// the platform's reference to it, so it can be updated in place.
	PostCard(ctx context.Context, a *approval.Approval) (ref string, err error)
	// UpdateCard redraws a card after a state change: decided, running (with
	// progress when p is not nil), done, failed, expired.
	UpdateCard(ctx context.Context, a *approval.Approval, p *tools.Progress) error
}

// Config is the agent's own section of the configuration.
type Config struct {
	// MaxRoundTrips caps the model calls of one turn (default 8).
	MaxRoundTrips int `yaml:"max_round_trips"`
	// ApprovalTTL is how long a card waits for a decision (default 15m).
	ApprovalTTL time.Duration `yaml:"approval_ttl"`
	// ConversationTTL is how long an idle conversation is kept (default 24h).
	ConversationTTL time.Duration `yaml:"conversation_ttl"`
	// MaxMessages and MaxBytes cap a stored conversation (defaults 100 and
	// 256 KiB); older messages are trimmed, never splitting a tool call
	// from its result.
	MaxMessages int `yaml:"max_messages"`
	MaxBytes    int `yaml:"max_bytes"`
}
