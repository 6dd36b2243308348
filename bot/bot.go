// Package bot is the orchestration between a chat adapter and the agent: it
// routes messages to their conversation (a thread), runs direct commands and
// agent turns, draws approval cards (it is the agent's Sink), checks every
// decision against the channel's approver policy, runs the expiry sweeper,
// drops redelivered events, and shuts down without losing work.
//
// Errors shown in a channel are plain sentences with a reference; the detail
// goes to the log under the same reference (STYLE habit 7).
package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"go.opentelemetry.io/otel/trace"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/oncall"
	"github.com/countersign/countersign/approval/rules"
	"github.com/countersign/countersign/internal/fifo"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// Bot connects the adapters of one process, one per platform, to one
// agent. Everything it shows goes out through the adapter of the
// conversation's platform, whatever triggered it (a message, a click, the
// sweeper, recovery, a turn resumed on another replica); a conversation of a
// platform this process does not serve is left to a replica that does.
type Bot struct {
	cfg    Config
	ads    map[string]adapters.Adapter // platform name → its adapter
	extras map[string]adapters.Extras  // platform name → what its adapter declared at start
	names  []string                    // platform names, in the order given
	agent  *agent.Agent
	store  stateStore // the agent has the whole approval.Store
	tools  *tools.Registry
	model  bool // a model is configured
	log    *slog.Logger
	now    func() time.Time
	seen   *dedupe
	cards  cards        // the cards this process shows, for updates in place
	rules  *rules.Rules // bot.rules, compiled (require.go)
	nudges nudges       // cards with a reminder or escalation to come (remind.go)
	homes  homes        // who watches their inbox, and where cards are (home.go)
	copies copies       // cards shown in their approval channel too (elsewhere.go)
	shows  shows        // the turns' statuses and streams (progress.go)

	// drawn counts the cards this process drew (cardSent); the App Home
	// reads the store again when it moves.
	drawn atomic.Uint64
	// drew holds the pending cards this process drew (their ids and
	// nudge times), until the reminder scan watches them (remind.go): a new
	// card is watched, without reading the store, even when the store's
	// due index holds more than a scan lists.
	drew chan nudgeCard

	observer Observer // told when a sweep ends (handled.go)

	// journal records accepted events in the store's inbox until they are
	// answered (intake.go). journalDone is closed when its writer has
	// stopped.
	journal     *journal
	journalDone chan struct{}

	// work is the context of work in flight (turns, runs); it outlives the
	// Run context so that a shutdown lets runs finish, and is cancelled
	// when the grace period is over.
	work       context.Context
	cancelWork context.CancelFunc
	inflight   sync.WaitGroup // the bot's own goroutines: queues, decisions
	// stopping is set when Run's context is cancelled: messages still
	// queued then are not started (no new work during a shutdown).
	stopping atomic.Bool

	// turnGate and commandGate bound the model turns and the direct
	// commands in flight at once; more wait in order (queue.go).
	turnGate    *fifo.Gate
	commandGate *fifo.Gate

	mu     sync.Mutex
	queues map[string]*queue // conversation key → waiting messages
	turns  map[string]turn   // conversation key → the model turn in flight
	// unrouted remembers the approvals this process could not show because
	// their platform has no adapter here, so each is logged and audited
	// once; bounded like cards.
	unrouted *expirable.LRU[string, bool]
	// loginLink makes the web console's sign-in link (!login); nil
	// without a console (console.go).
	loginLink Login
	// onCall resolves on-call approvers (oncall.go).
	onCall *onCalls
}

var _ agent.Sink = (*Bot)(nil)

// Deps are what the bot and its agent share, wired in main. The agent's
// Sink, Serves and Quiet (agent.Deps) are the bot's own, built from its
// adapters and its channels' policies, so a caller has no way to set them.
type Deps struct {
	// Model is the chat model; nil means only direct commands work.
	Model  agent.Model
	Tools  *tools.Registry
	Policy *risk.Policy
	Store  approval.Store
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives what never reaches the chat; nil means slog.Default().
	Log *slog.Logger
	// Login makes the web console's sign-in link for !login; nil means
	// no console (console.go).
	Login Login
	// Tracer makes the agent's spans (agent.Deps.Tracer); nil: off.
	Tracer trace.Tracer
	// OnCall says who is on call for on-call approvers (oncall:…); nil
	// means such entries stand for nobody (oncall.go).
	OnCall *oncall.Resolver
}

// New builds the bot and its agent over one adapter per platform (two
// adapters with one name are an error). The agent shows everything through
// the bot (agent.Sink), serves the platforms of ads, and leaves out of the
// conversation the calls of a quiet channel.
func New(cfg Config, ads []adapters.Adapter, agentCfg agent.Config, deps Deps) (*Bot, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(ads) == 0 {
		return nil, errors.New("bot: no adapter")
	}
	if deps.Store == nil {
		return nil, errors.New("bot: no approval store")
	}
	compiled, err := cfg.compileRules()
	if err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	b := &Bot{
		cfg:         cfg,
		rules:       compiled,
		ads:         map[string]adapters.Adapter{},
		extras:      map[string]adapters.Extras{},
		store:       deps.Store,
		tools:       deps.Tools,
		model:       deps.Model != nil,
		log:         deps.Log.With("component", "bot"),
		now:         deps.Now,
		seen:        newDedupe(cfg.DedupeSize, cfg.DedupeWindow),
		queues:      map[string]*queue{},
		turns:       map[string]turn{},
		unrouted:    expirable.NewLRU[string, bool](cardsMax, nil, cardsAge),
		turnGate:    fifo.New(cfg.MaxTurns),
		commandGate: fifo.New(maxCommands),
		loginLink:   deps.Login,
		onCall:      newOnCalls(deps.OnCall),
	}
	for i, ad := range ads {
		if ad == nil {
			return nil, fmt.Errorf("bot: adapter #%d is nil", i+1)
		}
		name := ad.Name()
		if name == "" {
			return nil, fmt.Errorf("bot: adapter #%d has no name", i+1)
		}
		if _, dup := b.ads[name]; dup {
			return nil, fmt.Errorf("bot: two adapters for the platform %q", name)
		}
		b.ads[name] = ad
		b.names = append(b.names, name)
		b.extras[name] = ad.Extras()
		has, lacks := b.extras[name].List()
		b.log.Info("adapter extras", "platform", name, "has", has, "lacks", lacks)
	}
	b.cards.init()
	b.drew = make(chan nudgeCard, cardsMax)
	b.journalDone = make(chan struct{})
	b.journal = newJournal(deps.Store, "bot-"+newRef()+newRef()) // every store keeps the inbox
	ag, err := agent.New(agentCfg, agent.Deps{
		Model: deps.Model, Tools: deps.Tools, Policy: deps.Policy, Store: deps.Store, Now: deps.Now, Log: deps.Log,
		Sink:    b,
		Serves:  b.serves,
		Require: b.require,
		Quiet:   b.quiet, // progress.go
		Tracer:  deps.Tracer,

		BudgetWords: overBudget, // words.go
	})
	if err != nil {
		return nil, fmt.Errorf("bot: build agent: %w", err)
	}
	b.agent = ag
	b.work, b.cancelWork = context.WithCancel(context.Background())
	return b, nil
}

// Welcome is the line to show when the bot starts: what works now, and how
// to add a model when there is none.
func (b *Bot) Welcome() string {
	if !b.model {
		return "Countersign is ready. No model configured: only direct commands work (!help lists them). " +
			"Set OPENAI_API_KEY or OPENAI_BASE_URL to talk to a model."
	}
	return "Countersign is ready. Ask in plain words, or use a direct command (!help lists them)."
}

// Run serves every adapter until its input ends or ctx is done, and then
// shuts down gracefully: no new work is taken, work in flight finishes (at
// the end of input it always does; after cancellation it gets
// Config.ShutdownGrace, then runs are interrupted and the agent records
// them as failed), and pending approvals stay pending in the store. An
// adapter that stops with an error stops the others: a platform that
// cannot be served is a reason to restart. It returns nil after a clean
// end or shutdown.
func (b *Bot) Run(ctx context.Context) error {
	journalCtx, stopJournal := context.WithCancel(context.Background())
	if b.journal != nil {
		// One beat before any event arrives: the owner is known, and the
		// store's connection is open, so that the first events' record
		// does not wait for a dial (the window of intake.go).
		bctx, cancel := context.WithTimeout(ctx, inboxWriteTimeout)
		if err := b.journal.in.Beat(bctx, b.journal.owner, b.now()); err != nil {
			b.log.Warn("inbox heartbeat at start", "err", err, "owner", b.journal.owner)
		}
		cancel()
		go func() {
			defer close(b.journalDone)
			b.writeJournal(journalCtx)
		}()
	} else {
		close(b.journalDone)
	}
	sweepCtx, stopSweep := context.WithCancel(b.work)
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		b.sweep(sweepCtx)
	}()

	runCtx, stopAdapters := context.WithCancel(ctx)
	errs := make(chan error, len(b.names))
	for _, name := range b.names {
		ad := b.ads[name]
		go func() {
			err := ad.Run(runCtx, b.Handler(name))
			if err != nil && !(runCtx.Err() != nil && errors.Is(err, context.Canceled)) {
				b.log.Error("adapter stopped", "platform", name, "err", err)
				err = fmt.Errorf("bot: adapter %s: %w", name, err)
				stopAdapters()
			} else {
				err = nil // the end of its input, or told to stop
			}
			errs <- err
		}()
	}
	var runErr error
	for range b.names {
		runErr = errors.Join(runErr, <-errs)
	}
	stopAdapters()
	cancelled := ctx.Err() != nil || runErr != nil
	if cancelled {
		b.stopping.Store(true)
	}

	stopSweep()
	<-swept
	drained := make(chan struct{})
	go func() {
		b.inflight.Wait()
		b.agent.Wait()
		close(drained)
	}()
	if cancelled {
		select {
		case <-drained:
		case <-time.After(b.cfg.ShutdownGrace):
			b.log.Warn("shutdown grace over: interrupting runs in flight", "grace", b.cfg.ShutdownGrace)
			b.cancelWork()
			<-drained
		}
	} else {
		<-drained
	}
	b.cancelWork()
	stopJournal()
	<-b.journalDone
	if b.journal != nil {
		b.leaveInbox()
	}
	return runErr
}

// sweep expires overdue approvals every SweepInterval until ctx is done,
// and at once again while a sweep ran out of time with approvals still due.
func (b *Bot) sweep(ctx context.Context) {
	t := time.NewTicker(b.cfg.SweepInterval)
	defer t.Stop()
	b.takeOver(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		b.takeOver(ctx)
		for more := true; more && ctx.Err() == nil; {
			var err error
			more, err = b.agent.SweepMore(ctx)
			if err != nil && ctx.Err() == nil {
				b.log.Error("expiry sweep", "err", err)
			}
		}
		b.remind(ctx) // remind.go
		b.swept()     // handled.go
	}
}
