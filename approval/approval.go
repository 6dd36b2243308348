// Package approval holds the durable state of approvals (SPEC §5): the
// records, their state machine, the suspended turns they belong to, the
// conversations, and the audit log (SPEC §6). Store is the contract; the
// sub-packages memstore and redisstore implement it, and approvaltest holds
// the contract suite both must pass.
package approval

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// State is where an approval is in its life:
// pending → approved → running → done | failed, pending → cancelled | expired.
type State string

// The states.
const (
	Pending   State = "pending"
	Approved  State = "approved"
	Running   State = "running"
	Done      State = "done"
	Failed    State = "failed"
	Cancelled State = "cancelled"
	Expired   State = "expired"
)

// Final reports whether no transition leaves s.
func (s State) Final() bool {
	return s == Done || s == Failed || s == Cancelled || s == Expired
}

// Errors the stores return; compare with errors.Is.
var (
	// ErrNotFound: no approval or turn has that id (or it has expired).
	ErrNotFound = errors.New("approval not found")
	// ErrConflict: the record is not in the state the transition needs.
	ErrConflict = errors.New("approval is not in the expected state")
)

// User is a person on a chat platform.
type User struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// Display is how a person is named in words: Name, or ID when there is
// no name.
func (u User) Display() string {
	if u.Name != "" {
		return u.Name
	}
	return u.ID
}

// Conversation names one conversation: a thread in a channel on a platform.
type Conversation struct {
	Platform string `json:"platform"`
	Channel  string `json:"channel"`
	Thread   string `json:"thread,omitempty"`
	// Direct: a direct (private) conversation between one person and the
	// bot, where nobody else sees a card (issue 19's dead end).
	Direct bool `json:"direct,omitempty"`
}

// Key is the conversation's stable key, "platform:channel:thread".
func (c Conversation) Key() string { return c.Platform + ":" + c.Channel + ":" + c.Thread }

// Approval is one tool call waiting for, or past, a person's decision.
type Approval struct {
	ID         string          `json:"id"`           // unguessable; the only thing a button carries
	ToolCallID string          `json:"tool_call_id"` // the LLM's id; Create is idempotent on it
	TurnID     string          `json:"turn_id,omitempty"`
	Tool       string          `json:"tool"`
	Args       json.RawMessage `json:"args"`
	ArgsHash   string          `json:"args_hash"` // sha256 of Args, hex
	Verdict    risk.Verdict    `json:"verdict"`
	Preview    *tools.Preview  `json:"preview,omitempty"`

	Requester    User         `json:"requester"`
	Conversation Conversation `json:"conversation"`
	MessageRef   string       `json:"message_ref,omitempty"` // the card's platform message id

	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`

	State     State         `json:"state"`
	DecidedBy *User         `json:"decided_by,omitempty"`
	DecidedAt time.Time     `json:"decided_at,omitzero"`
	Reason    string        `json:"reason,omitempty"`
	StartedAt time.Time     `json:"started_at,omitzero"`
	EndedAt   time.Time     `json:"ended_at,omitzero"`
	Result    *tools.Result `json:"result,omitempty"`

	// Replaces is the approval this one replaced by a person's edit
	// (issue 24); ReplacesCall is the first approval of that chain of
	// edits, the one the suspended turn's call waits under: this record's
	// outcome resolves the call in its place. Both empty for a call the
	// model or a command made.
	Replaces     string `json:"replaces,omitempty"`
	ReplacesCall string `json:"replaces_call,omitempty"`

	// What the call needs before it runs (approval/rules' Requirement,
	// resolved when the card was made), kept with the record so that every
	// replica and every click judges it alike, whatever the configuration
	// says by then. Need 0 is a record made before rules existed: the
	// channel's approvers and one approval.
	Requirement Requirement `json:"requirement,omitzero"`

	// TraceParent is the W3C trace context (traceparent) of the turn that
	// made the card, when tracing is on: a click on any replica joins
	// that turn's trace (issue 28). Empty when tracing is off.
	TraceParent string `json:"trace_parent,omitempty"`
}

// Requirement is what an approval needs before it runs, as plain fields
// (approval/rules.Requirement, which the bot converts).
type Requirement struct {
	// Rule names the bot.rules entry that matched; "" is the channel's
	// settings.
	Rule string `json:"rule,omitempty"`
	// Approvers are who may approve, in the bot's syntax; empty is anyone.
	Approvers []string `json:"approvers,omitempty"`
	// Need is how many distinct people must approve (0: not recorded).
	Need int `json:"need,omitempty"`
	// Reasons are the decisions that need a reason ("approve", "cancel").
	Reasons []string `json:"reasons,omitempty"`
	// RemindAt and EscalateAt are when the approvers who have not voted
	// are reminded, and when EscalateTo join them; zero is never.
	RemindAt   time.Time `json:"remind_at,omitzero"`
	EscalateAt time.Time `json:"escalate_at,omitzero"`
	EscalateTo []string  `json:"escalate_to,omitempty"`
	// ApprovalChannel is where a card nobody in its conversation could
	// decide is sent.
	ApprovalChannel string `json:"approval_channel,omitempty"`
}

// DecideResult is what Decide reports.
type DecideResult struct {
	// Reasked is set (by the agent, never a store) when an approval was
	// not decided because its blast radius changed since the card was
	// posted: Approval then holds the new preview, and Changed says how.
	Reasked bool
	Changed string
	// Approval is the record after the call, whoever won.
	Approval *Approval
	// Won is true when this call made the transition; false when someone
	// else had already decided (Approval then says who and how).
	Won bool
}

// Turn is a suspended agent turn: what the agent needs to resume it after
// the last pending approval is decided, on any replica, after a restart.
type Turn struct {
	ID           string       `json:"id"`
	Conversation Conversation `json:"conversation"`
	// Pending holds the ids of approvals still undecided.
	Pending []string `json:"pending"`
	// State is the agent's own encoding of the turn (messages, tool calls).
	State     json.RawMessage `json:"state"`
	CreatedAt time.Time       `json:"created_at"`
}

// DefaultLimit is how many ids Due, and records Unsettled, return when
// the caller gives no limit.
const DefaultLimit = 100

// Store is the approval store: the whole application's shared state, one
// interface a part. Every method is safe for concurrent use by any number
// of goroutines and replicas sharing the same backend.
//
// Every guarantee the bot relies on is a part of it, never an optional
// capability found by a type assertion: a wrapper of a store (metrics, an
// audit sink) that left one out would switch the guarantee off in
// silence. A store, or a wrapper, that lacks a method does not compile.
type Store interface {
	Approvals
	Recovery
	Turns
	Conversations
	Auditor
	Deduper   // dedupe.go: chat event ids, across replicas
	Quorum    // quorum.go: the count of "N of M" approvals
	Inbox     // inbox.go: the journal of accepted events, for crashes
	MCPPinner // mcppin.go: the pins of MCP tools
	Spender   // spend.go: the tokens the model spent, for llm.budget
	// Close releases what the store holds open.
	Close() error
}

// Approvals are the approval records and their state machine.
type Approvals interface {
	// Create stores a new pending approval. It is idempotent on ToolCallID:
	// a second Create with the same ToolCallID returns the first record and
	// created=false.
	Create(ctx context.Context, a *Approval) (stored *Approval, created bool, err error)
	// Get returns the approval id, or an error wrapping ErrNotFound.
	Get(ctx context.Context, id string) (*Approval, error)
	// Decide moves a pending approval to Approved, Cancelled or Expired,
	// atomically. Exactly one caller wins.
	Decide(ctx context.Context, id string, to State, by User, reason string, at time.Time) (DecideResult, error)
	// Claim moves Approved to Running for exactly one claimant; the others
	// get ok=false.
	Claim(ctx context.Context, id string, at time.Time) (a *Approval, ok bool, err error)
	// Finish moves Running to Done or Failed with the result. The run's own
	// outcome also wins over recovery's guess: a record FinishAbandoned
	// ended (its process was silent, e.g. cut off from the store) is moved
	// to the outcome Finish brings, once, in the same atomic step; any
	// other final record is an error wrapping ErrConflict.
	Finish(ctx context.Context, id string, to State, result tools.Result, at time.Time) (*Approval, error)
	// SetMessageRef records the card's message id.
	SetMessageRef(ctx context.Context, id, ref string) error
	// SetPreview replaces the preview of a pending approval (the blast
	// radius changed before anyone approved it, so the card asks again),
	// and returns the record. An approval that is no longer pending is an
	// error wrapping ErrConflict, with the record.
	SetPreview(ctx context.Context, id string, p *tools.Preview) (*Approval, error)
	// ListPending lists the oldest pending approvals of one channel of a
	// platform, oldest first, at most limit of them; limit <= 0 means the
	// store's own cap. Its cost grows with limit, never with the number
	// pending.
	ListPending(ctx context.Context, platform, channel string, limit int) ([]*Approval, error)
	// CountPending counts the pending approvals of one channel of a
	// platform exactly (ListPending may be capped); platform and channel
	// both "" count every pending approval. One of the two empty is an
	// error wrapping ErrInvalid.
	CountPending(ctx context.Context, platform, channel string) (int, error)
	// FindPending lists the pending approvals of one channel of a platform
	// whose id starts with prefix, in id order, at most limit (<= 0 means
	// DefaultLimit) of them: how a typed decision finds the card a
	// shortened id names (ask for 2 to tell one from several). Its cost
	// grows with limit, never with the number pending. An empty prefix is
	// an error wrapping ErrInvalid.
	FindPending(ctx context.Context, platform, channel, prefix string, limit int) ([]*Approval, error)
	// PendingChannels lists, sorted, the channels of a platform that hold
	// at least one pending approval: where a person's inbox looks, on any
	// replica, after any restart. Its cost grows with the number of such
	// channels, never with the number pending. A channel may be listed a
	// moment after its last approval left it (ListPending then finds
	// none); a channel with a pending approval is always listed.
	PendingChannels(ctx context.Context, platform string) ([]string, error)
	// Due lists the ids of pending approvals whose deadline is at or before
	// now, at most limit (<= 0 means DefaultLimit) of them. Expire them with
	// Decide(…, Expired, …).
	Due(ctx context.Context, now time.Time, limit int) ([]string, error)
}

// Recovery lets any replica finish a decision whose carrier died: a
// process can die between the steps that carry a decision
// through (decide, claim, run, finish, resolve the turn). Every decided
// approval stays "unsettled" from its decision until Settle; its time of
// last life is the decision, the claim, the latest Heartbeat of its run,
// or the finish. Unsettled lists the ones whose carrier looks dead, so
// that a sweep on any replica can finish the job (see the agent's Sweep).
//
// The last life is part of the record: every transition and Heartbeat
// writes it in the same atomic step as the state, and Unsettled and
// FinishAbandoned judge a record by its own last life, never by an
// older reading (an index, an earlier Get). Another replica may claim
// or finish a call between a sweep's Unsettled and its next step.
type Recovery interface {
	// Heartbeat records that the run of a running approval is alive at at.
	// It is not an error when the approval is no longer running.
	Heartbeat(ctx context.Context, id string, at time.Time) error
	// Unsettled lists, oldest first and at most limit (<= 0 means
	// DefaultLimit), the decided approvals not yet settled whose last life
	// is at or before a cutoff: runningBefore for running ones, decidedBefore for approved and
	// final ones. Pending approvals are never listed.
	Unsettled(ctx context.Context, decidedBefore, runningBefore time.Time, limit int) ([]*Approval, error)
	// FinishAbandoned is Finish for recovery: it moves Running to Done or
	// Failed only if, at that moment and in the same atomic step, the run's
	// last life (its claim or latest Heartbeat) is at or before cutoff
	// (compared in whole milliseconds). Otherwise it changes nothing and
	// returns an error wrapping ErrConflict: the approval is not running
	// (never claimed, or ended), or its run showed life after cutoff, i.e.
	// it was claimed or beat its heartbeat since the caller last looked. A
	// running record that holds no last life (written by a version that
	// kept none) counts as abandoned.
	FinishAbandoned(ctx context.Context, id string, to State, result tools.Result, at, cutoff time.Time) (*Approval, error)
	// Settle records that the approval's decision was carried through to its
	// turn, so Unsettled no longer lists it. Settling a missing or settled
	// approval is not an error; settling one that is not final does
	// nothing (its run is not over).
	Settle(ctx context.Context, id string) error
}

// Turns are the suspended agent turns, resumed by the last decision.
type Turns interface {
	// SaveTurn stores a suspended turn.
	SaveTurn(ctx context.Context, t *Turn) error
	// GetTurn returns the turn id with Pending holding the approvals not
	// yet resolved, or an error wrapping ErrNotFound.
	GetTurn(ctx context.Context, id string) (*Turn, error)
	// Resolve removes approvalID from the turn's pending set, atomically,
	// and reports whether this call emptied it: exactly one caller, the one
	// that records the last decision, gets last=true and resumes the turn.
	Resolve(ctx context.Context, turnID, approvalID string) (last bool, err error)
	// DeleteTurn removes a turn; removing a missing one is not an error.
	DeleteTurn(ctx context.Context, id string) error
}

// Conversations are the stored chat histories the model reads.
type Conversations interface {
	// LoadConversation returns the stored conversation, or nil when none.
	LoadConversation(ctx context.Context, key string) ([]byte, error)
	// SaveConversation stores a conversation with a time to live.
	SaveConversation(ctx context.Context, key string, data []byte, ttl time.Duration) error
}

// Event is one audit record (SPEC §6).
type Event struct {
	At         time.Time     `json:"at"`
	Kind       Kind          `json:"kind"`
	Actor      string        `json:"actor,omitempty"`
	ApprovalID string        `json:"approval_id,omitempty"`
	Tool       string        `json:"tool,omitempty"`
	Operation  string        `json:"operation,omitempty"` // as the tool shows it, secrets masked
	Rule       string        `json:"rule,omitempty"`
	Decision   AuditDecision `json:"decision,omitempty"`
	Outcome    Outcome       `json:"outcome,omitempty"`
	Channel    string        `json:"channel,omitempty"`
	Detail     string        `json:"detail,omitempty"`
	// DurationMS is how long the run took (Kind execution).
	DurationMS int64 `json:"duration_ms,omitempty"`
	// Risk and LLMLevel are, on an assessment, the code's level and the
	// risk_level the model gave (when it gave one): the console's
	// calibration reads them. The MySQL sink has no columns for them yet.
	Risk     string `json:"risk,omitempty"`
	LLMLevel string `json:"llm_level,omitempty"`
}

// Kind is what an audit event records (SPEC §6).
type Kind string

// The kinds of audit event.
const (
	KindAssessment   Kind = "assessment"    // a call was assessed: auto, confirm or block
	KindCard         Kind = "card"          // an approval card was posted
	KindClick        Kind = "click"         // a person decided, or tried to after the decision
	KindRefusedClick Kind = "refused_click" // a person not allowed to decide clicked
	KindExpiry       Kind = "expiry"        // nobody decided in time
	KindExecution    Kind = "execution"     // a call ran, or recovery ended it
	KindUnrouted     Kind = "unrouted"      // a process had no adapter for an approval's platform
	KindStop         Kind = "stop"          // a person stopped a running call
)

// AuditDecision is what was decided: by the policy (Kind assessment), by
// a person (click), or how a call came to run (execution).
type AuditDecision string

// The decisions an audit event records.
const (
	DecisionAuto    AuditDecision = "auto"    // assessed: runs at once; executed: ran without a card
	DecisionConfirm AuditDecision = "confirm" // assessed: waits for a person
	DecisionBlock   AuditDecision = "block"   // assessed: refused outright
	DecisionApprove AuditDecision = "approve" // a person approved (or tried to)
	DecisionCancel  AuditDecision = "cancel"  // a person cancelled (or tried to)
	DecisionStop    AuditDecision = "stop"    // a person stopped a running call
	// DecisionApproved: executed after a person's approval.
	DecisionApproved AuditDecision = "approved"
	// DecisionRecovered: ended by recovery after its carrier died.
	DecisionRecovered AuditDecision = "recovered"
)

// Outcome is how the event ended: an approval's State, a run's result
// status (tools.Status), or one of the outcomes below.
type Outcome string

// The outcomes that are neither a state nor a status.
const (
	OutcomeLost    Outcome = "lost"    // a click after the decision: someone else decided first
	OutcomeRefused Outcome = "refused" // a click from someone not allowed to decide
	OutcomeLeft    Outcome = "left"    // left to a replica that serves the platform
	OutcomeReasked Outcome = "reasked" // an approval not taken: the preview changed, the card asks again
	OutcomeStopped Outcome = "stopped" // a running call was told to stop
)

// Auditor appends audit events. An error means the record was not written,
// and the operation it describes must not run.
type Auditor interface {
	Audit(ctx context.Context, e Event) error
	// AuditLog returns up to n of the most recent events, newest last.
	AuditLog(ctx context.Context, n int) ([]Event, error)
}
