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
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// Bot connects one adapter to one agent.
type Bot struct {
	cfg   Config
	ad    adapters.Adapter
	agent *agent.Agent
	store approval.Store
	tools *tools.Registry
	model bool // a model is configured
	log   *slog.Logger
	now   func() time.Time
	seen  *dedupe

	// work is the context of work in flight (turns, runs); it outlives the
	// Run context so that a shutdown lets runs finish, and is cancelled
	// when the grace period is over.
	work       context.Context
	cancelWork context.CancelFunc
	inflight   sync.WaitGroup // the bot's own goroutines: queues, decisions
	// stopping is set when Run's context is cancelled: messages still
	// queued then are not started (no new work during a shutdown).
	stopping atomic.Bool

	mu     sync.Mutex
	queues map[string]*queue // conversation key → waiting messages
	refs   map[string]string // approval id → card message ref, until final
}

var (
	_ agent.Sink       = (*Bot)(nil)
	_ adapters.Handler = (*Bot)(nil)
)

// New builds the bot and its agent. deps.Sink is the bot itself (any value
// given is replaced); deps.Store, deps.Tools and deps.Log are shared with
// the agent.
func New(cfg Config, ad adapters.Adapter, agentCfg agent.Config, deps agent.Deps) (*Bot, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if ad == nil {
		return nil, errors.New("bot: no adapter")
	}
	if deps.Store == nil {
		return nil, errors.New("bot: no approval store")
	}
	cfg = cfg.WithDefaults()
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	b := &Bot{
		cfg:    cfg,
		ad:     ad,
		store:  deps.Store,
		tools:  deps.Tools,
		model:  deps.Model != nil,
		log:    deps.Log.With("component", "bot", "platform", ad.Name()),
		now:    deps.Now,
		seen:   newDedupe(cfg.DedupeSize, cfg.DedupeWindow),
		queues: map[string]*queue{},
		refs:   map[string]string{},
	}
	deps.Sink = b
	ag, err := agent.New(agentCfg, deps)
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

// Run serves the adapter until its input ends or ctx is done, and then
// shuts down gracefully: no new work is taken, work in flight finishes (at
// the end of input it always does; after cancellation it gets
// Config.ShutdownGrace, then runs are interrupted and the agent records
// them as failed), and pending approvals stay pending in the store. It
// returns nil after a clean end or shutdown.
func (b *Bot) Run(ctx context.Context) error {
	sweepCtx, stopSweep := context.WithCancel(b.work)
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		b.sweep(sweepCtx)
	}()

	err := b.ad.Run(ctx, b)
	cancelled := ctx.Err() != nil
	if cancelled {
		b.stopping.Store(true)
		if errors.Is(err, context.Canceled) {
			err = nil // the adapter stopped because it was told to
		}
	}
	if err != nil {
		b.log.Error("adapter stopped", "err", err)
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
	if err != nil {
		return fmt.Errorf("bot: adapter %s: %w", b.ad.Name(), err)
	}
	return nil
}

// sweep expires overdue approvals every SweepInterval until ctx is done.
func (b *Bot) sweep(ctx context.Context) {
	t := time.NewTicker(b.cfg.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := b.agent.Sweep(ctx); err != nil && ctx.Err() == nil {
				b.log.Error("expiry sweep", "err", err)
			}
		}
	}
}

// Handle takes one event from the adapter. It returns quickly: messages
// queue behind their conversation, decisions run in the background. A
// repeated event is dropped (see dedupe.go): first by this process's own
// set, then, when the store is an approval.Deduper, by the store that all
// replicas share.
func (b *Bot) Handle(_ context.Context, e adapters.Event) {
	if e.ID != "" && !b.seen.first(e.ID, b.now()) {
		b.log.Info("dropped a repeated event", "event", e.ID, "redelivered", e.Redelivered)
		return
	}
	if e.Decision == nil {
		if d, ok := adapters.ParseDecision(e.Text); ok {
			e.Decision = &d
		}
	}
	if e.Decision != nil {
		typed := e.Decision.Ref == "" && strings.TrimSpace(e.Text) != ""
		if !typed || approval.ValidID(strings.ToLower(e.Decision.ApprovalID)) {
			first, err := b.firstDelivery(e)
			if err != nil {
				// Decide is atomic in the store: a click handled twice
				// is told "already decided", never run twice.
				b.log.Warn("could not check a decision for redelivery; handling it", "event", e.ID, "err", err)
			} else if !first {
				b.log.Info("dropped a decision another replica handled", "event", e.ID, "redelivered", e.Redelivered)
				return
			}
			b.decision(e)
			return
		}
		// "approve it", "cancel everything": words, not an approval id.
		e.Decision = nil
	}
	if strings.TrimSpace(e.Text) == "" {
		return
	}
	first, err := b.firstDelivery(e)
	if err != nil {
		// Fail closed: running a message twice can start a second turn and
		// a second card for the same operation; not running it is told.
		b.failPrivate(e.Place, e.User, "I could not check whether this message was already being handled, so I did not act on it; if no answer follows, send it again", err)
		return
	}
	if !first {
		b.log.Info("dropped a message another replica handled", "event", e.ID, "redelivered", e.Redelivered)
		return
	}
	b.enqueue(e)
}

// message handles one message: a direct command or a turn of the agent.
func (b *Bot) message(ctx context.Context, e adapters.Event) {
	text := strings.TrimSpace(e.Text)
	conv := b.conv(e.Place)
	user := approval.User{ID: e.User.ID, Name: e.User.Display()}
	if strings.HasPrefix(text, "!") {
		b.command(ctx, e, conv, user, text)
		return
	}
	if err := b.agent.Handle(ctx, conv, user, text); err != nil {
		b.fail(ctx, e.Place, "I could not finish answering that", err)
	}
}

func (b *Bot) conv(p adapters.Place) approval.Conversation {
	return approval.Conversation{Platform: b.ad.Name(), Channel: p.Channel, Thread: p.Thread}
}

// safely runs f, turning a panic into a logged error and a safe sentence in
// the channel, so that one bad message cannot take the bot down.
func (b *Bot) safely(p adapters.Place, f func()) {
	defer func() {
		if r := recover(); r != nil {
			b.fail(b.work, p, "Something went wrong handling that", fmt.Errorf("panic: %v", r))
		}
	}()
	f()
}

func (b *Bot) notify(p adapters.Place, u adapters.User, text string) {
	if err := b.ad.Notify(b.work, p, u, text); err != nil {
		b.log.Error("send a private notice", "err", err, "user", u.ID)
	}
}

// fail logs err under a new reference and tells the channel a safe
// sentence with that reference.
func (b *Bot) fail(ctx context.Context, p adapters.Place, what string, err error) {
	ref := newRef()
	b.log.Error(what, "err", err, "ref", ref, "channel", p.Channel)
	if _, perr := b.ad.Post(ctx, p, adapters.Content{Text: what + "; the details are in the log (ref " + ref + ")."}); perr != nil {
		b.log.Error("post an error notice", "err", perr, "ref", ref)
	}
}

// failPrivate is fail for a notice only u sees.
func (b *Bot) failPrivate(p adapters.Place, u adapters.User, what string, err error) {
	ref := newRef()
	b.log.Error(what, "err", err, "ref", ref, "user", u.ID)
	b.notify(p, u, what+"; the details are in the log (ref "+ref+").")
}

func newRef() string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return hex.EncodeToString(r[:])
}

// oneLine shortens text to one line of at most n runes, for a notice.
func oneLine(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if shown, cut := cutRunes(text, n); cut {
		return shown + "…"
	}
	return text
}
