// Package agent runs conversation turns: it sends the conversation and the
// tools to the model, judges every tool call with the risk policy, runs what
// may run, suspends the turn on what needs a person, and resumes it when the
// last decision is in. It also runs direct commands (SPEC §7) and people's
// edits of waiting cards, with no model at all.
//
// Every call, whoever makes it, enters through one gate, admit (admit.go):
// a model's tool call (turn.go), a direct command (direct.go) and an edit
// (edit.go) each become one entry, which admit bounds, judges with the
// level its source may give, audits, and then blocks, runs or puts on a
// card. A card's life after that (Approve, Cancel, the run, the turn's
// resume) is in decide.go.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/rules"
	"github.com/countersign/countersign/internal/fifo"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// Sink is where the agent shows things to people. The bot implements it on
// top of a chat adapter. Calls may come from any goroutine.
type Sink interface {
	Replier
	// PostCard posts the approval card of a new pending approval and returns
	// the platform's reference to it, so it can be updated in place.
	PostCard(ctx context.Context, a *approval.Approval) (ref string, err error)
	// UpdateCard redraws a card after a state change: decided, running (with
	// progress when p is not nil), done, failed, expired.
	UpdateCard(ctx context.Context, a *approval.Approval, p *tools.Progress) error
}

// Replier is where words go. A Sink is one; HandleReplying takes another
// for the words of one turn.
type Replier interface {
	// Reply posts text into the conversation (the model's answer, a notice).
	Reply(ctx context.Context, conv approval.Conversation, text string) error
}

// FullReplier is an optional Sink capability: a reply that shows a run's
// result with its output cut, given the whole output too, for a platform
// that can attach it (Slack attaches a file). Checked at run time.
type FullReplier interface {
	ReplyFull(ctx context.Context, conv approval.Conversation, text, full string) error
}

// Config is the agent's own section of the configuration. The zero value
// means the defaults:
//
//	agent:
//	  max_round_trips: 8       # model calls per turn
//	  approval_ttl: 15m        # how long a card waits
//	  conversation_ttl: 24h    # how long an idle conversation is kept
//	  max_messages: 100        # stored conversation cap, in messages
//	  max_bytes: 262144        # and in (estimated) bytes
//	  preview_timeout: 3s      # blast-radius preview on a card
//	  recovery_grace: 2m       # an approved call unclaimed this long is ended as not run
//	  run_lease: 2m            # a run silent this long is ended as "outcome unknown"
//	  max_runs: 16             # approved calls running at once in this process; more wait
//	  max_call_bytes: 65536    # a call's arguments past this size are refused at the gate
//	  max_cards_per_answer: 5  # cards one model answer may post; the rest are refused
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
	// PreviewTimeout bounds the blast-radius preview computed for a card
	// (default 3s); a slow preview is dropped, never the card.
	PreviewTimeout time.Duration `yaml:"preview_timeout"`
	// RecoveryGrace is how long after its decision an approved call may
	// stay unclaimed, or a final one's turn untold, before a sweep on any
	// replica takes its carrier for dead and finishes the job (default
	// 2m; see Sweep). Live carriers take milliseconds to a few seconds.
	RecoveryGrace time.Duration `yaml:"recovery_grace"`
	// RunLease is how long a running call may go without a heartbeat
	// before a sweep ends it as interrupted, outcome unknown, never run
	// again (default 2m). A live run beats every quarter of it.
	RunLease time.Duration `yaml:"run_lease"`
	// MaxRuns caps the approved calls running at once in this process
	// (default 16). A call beyond it is claimed (its heartbeat beats) and
	// waits in order for a place before it starts.
	MaxRuns int `yaml:"max_runs"`
	// MaxCallBytes bounds the arguments of one call, from any entry
	// (default 64 KiB): a larger call is refused at the gate, before it
	// is judged, stored or shown, with a result that says its size and
	// the limit. A command, a query or a file's text that large is not
	// something a person can read on a card.
	MaxCallBytes int `yaml:"max_call_bytes"`
	// MaxCardsPerAnswer bounds the approval cards one model answer may
	// post (default 5); each further call that needs a card gets a result
	// that says so, and the model can ask again once those are decided.
	// Five is what a person can weigh side by side on one screen; a model
	// asking for more at once is usually looping, or splitting one batch
	// that should be one command.
	MaxCardsPerAnswer int `yaml:"max_cards_per_answer"`
	// Unfenced names the tools whose calls cannot be fenced on this host
	// (the kernel lacks Landlock), each with the sentence that says so:
	// such a call never runs without a card, whatever judged it auto.
	// cmd sets it from what the kernel offers; it is not a key.
	Unfenced map[string]string `yaml:"-"`
	// NotOffline names the tools whose calls on the model's low alone
	// (risk.RuleLLM) cannot be kept off the network on this host (a
	// container's seccomp profile refuses the network namespace), each
	// with the sentence that says so: such a call gets a card instead of
	// failing to start. cmd sets it; it is not a key.
	NotOffline map[string]string `yaml:"-"`
	// Budget is llm.budget, the model's spend limits (budget.go); cmd
	// sets it from the llm section, so it is not a key here.
	Budget Budget `yaml:"-"`
}

// The defaults of Config.
const (
	DefaultMaxRoundTrips   = 8
	DefaultApprovalTTL     = 15 * time.Minute
	DefaultConversationTTL = 24 * time.Hour
	DefaultMaxMessages     = 100
	DefaultMaxBytes        = 256 << 10
	DefaultPreviewTimeout  = 3 * time.Second
	DefaultRecoveryGrace   = 2 * time.Minute
	DefaultRunLease        = 2 * time.Minute
	DefaultMaxRuns         = 16
	DefaultMaxCallBytes    = 64 << 10
	DefaultMaxCards        = 5
)

// WithDefaults returns c with its zero fields filled, or an error naming
// every key that is negative; New applies the same.
func (c Config) WithDefaults() (Config, error) {
	err := errors.Join(
		tools.Limit("agent.max_round_trips", &c.MaxRoundTrips, DefaultMaxRoundTrips),
		tools.Limit("agent.approval_ttl", &c.ApprovalTTL, DefaultApprovalTTL),
		tools.Limit("agent.conversation_ttl", &c.ConversationTTL, DefaultConversationTTL),
		tools.Limit("agent.max_messages", &c.MaxMessages, DefaultMaxMessages),
		tools.Limit("agent.max_bytes", &c.MaxBytes, DefaultMaxBytes),
		tools.Limit("agent.preview_timeout", &c.PreviewTimeout, DefaultPreviewTimeout),
		tools.Limit("agent.recovery_grace", &c.RecoveryGrace, DefaultRecoveryGrace),
		tools.Limit("agent.run_lease", &c.RunLease, DefaultRunLease),
		tools.Limit("agent.max_runs", &c.MaxRuns, DefaultMaxRuns),
		tools.Limit("agent.max_call_bytes", &c.MaxCallBytes, DefaultMaxCallBytes),
		tools.Limit("agent.max_cards_per_answer", &c.MaxCardsPerAnswer, DefaultMaxCards),
		c.Budget.Validate(),
	)
	return c, err
}

// Deps are the agent's collaborators, wired in main.
type Deps struct {
	// Model is the chat model; nil means none is configured and only
	// direct commands work.
	Model  Model
	Tools  *tools.Registry
	Policy *risk.Policy
	Store  approval.Store
	Sink   Sink
	// Now is the clock (deadlines, expiry, audit times); nil means time.Now.
	Now func() time.Time
	// Log receives the details that never reach the chat; nil means
	// slog.Default().
	Log *slog.Logger
	// Serves reports whether this process can show the conversations of
	// a platform (it has that platform's adapter); nil means every
	// platform. Sweep leaves the approvals of other platforms to a replica
	// that serves them, so that no card is updated, and no turn resumed,
	// through the wrong platform.
	Serves func(platform string) bool
	// Quiet reports whether a conversation's channel wants the calls that
	// run without a card left out of the conversation (see showCalls);
	// nil means none does.
	Quiet func(conv approval.Conversation) bool
	// Require says what a call that waits for a person needs (who may
	// approve, how many, reasons, expiry, reminders: approval/rules); nil
	// means one approval from anyone, after agent.approval_ttl.
	Require func(f rules.Facts) rules.Requirement
	// Tracer makes the spans of turns, judgements, runs and decisions
	// (trace.go); nil means tracing is off, at no cost.
	Tracer trace.Tracer
	// BudgetWords says why a turn stopped over llm.budget (budget.go);
	// nil means OverBudget's own Error text.
	BudgetWords func(OverBudget) string
}

// ErrElsewhere is wrapped by a Sink's error for a conversation whose
// platform this process does not serve: another replica must show it.
var ErrElsewhere = errors.New("the conversation's platform is served by another process")

// Agent runs turns, direct commands and decisions. It keeps no state of
// its own between calls beyond what is in the store, so any number of
// agents (replicas) can share one store. It is safe for concurrent use.
type Agent struct {
	cfg       Config
	require   func(rules.Facts) rules.Requirement
	model     Model
	tools     *tools.Registry
	policy    *risk.Policy
	store     approval.Store
	sink      Sink
	now       func() time.Time
	log       *slog.Logger
	serves    func(platform string) bool
	servesAll bool // Deps.Serves was nil
	quiet     func(conv approval.Conversation) bool
	tracer    trace.Tracer // nil: off
	prompt    string

	budgetWords func(OverBudget) string
	budgetState budgetState // budget.go
	// specs and schemas are the registry's, read once: it never changes.
	specs   []tools.Spec
	schemas map[string]json.RawMessage

	busy  inflight
	convs keyedMutex
	runs  runs // approved calls running here, for Stop
	// runGate bounds the approved calls running at once (MaxRuns).
	runGate *fifo.Gate
}

// New checks cfg and deps and returns an agent.
func New(cfg Config, deps Deps) (*Agent, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	switch {
	case deps.Tools == nil:
		return nil, errors.New("agent: no tool registry")
	case deps.Policy == nil:
		return nil, errors.New("agent: no risk policy")
	case deps.Store == nil:
		return nil, errors.New("agent: no approval store")
	case deps.Sink == nil:
		return nil, errors.New("agent: no sink")
	}
	a := &Agent{
		cfg:     cfg,
		model:   deps.Model,
		tools:   deps.Tools,
		policy:  deps.Policy,
		store:   deps.Store,
		sink:    deps.Sink,
		now:     deps.Now,
		log:     deps.Log,
		serves:  deps.Serves,
		quiet:   deps.Quiet,
		require: deps.Require,
		tracer:  deps.Tracer,

		budgetWords: deps.BudgetWords,
		prompt:      SystemPrompt(),
		runGate:     fifo.New(cfg.MaxRuns),
	}
	a.specs = deps.Tools.Specs()
	a.schemas = make(map[string]json.RawMessage, len(a.specs))
	for _, s := range a.specs {
		a.schemas[s.Name] = s.Parameters
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	if a.quiet == nil {
		a.quiet = func(approval.Conversation) bool { return false }
	}
	if a.serves == nil {
		a.serves, a.servesAll = func(string) bool { return true }, true
	}
	a.busy.cond = sync.NewCond(&a.busy.mu)
	a.runs.recording.cond = sync.NewCond(&a.runs.recording.mu)
	return a, nil
}

// Wait blocks until the runs and resumed turns started by Handle, Direct,
// Approve, Cancel, Edit, Call and Sweep have finished (graceful shutdown).
func (a *Agent) Wait() { a.busy.wait() }
