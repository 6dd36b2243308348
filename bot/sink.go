package bot

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// This file is the bot's cards as the agent's Sink: a card is drawn
// (card.go), posted or redrawn through the adapter of its conversation's
// platform, shown in its turn (progress.go), and then followed by the
// bot's steps (cardSent); the platform's typed errors
// (adapters.ErrGone, adapters.RateLimitError) decide what happens next.

// PostCard posts the card of a new pending approval (agent.Sink). The
// post keeps trying through chat trouble until the card's expiry, whatever
// the turn's own deadline: a busy platform delays a card, never cancels
// it.
func (b *Bot) PostCard(ctx context.Context, a *approval.Approval) (string, error) {
	ad, err := b.adapter(ctx, a.Conversation.Platform, a.ID)
	if err != nil {
		return "", err
	}
	deadline := a.ExpiresAt
	if !deadline.After(b.now()) {
		deadline = b.now().Add(sendWindow)
	}
	ctx, cancel := b.detached(ctx, deadline)
	defer cancel()
	// Held while the card is posted: a click can arrive before the post
	// returns, and its update must wait for the card's reference instead
	// of posting a second card.
	sc := b.cards.shown(a.ID)
	sc.send.Lock()
	defer sc.send.Unlock()
	f := b.facts(a, nil)
	c := drawCard(a, f)
	b.beforeCard(ctx, a) // progress.go: what the turn said so far stands above the card
	ref, err := ad.Post(ctx, place(a.Conversation), adapters.Content{Card: &c})
	if err != nil {
		return "", fmt.Errorf("post card %s: %w", a.ID, err)
	}
	sc.ref = ref
	b.cardPosted(ctx, a) // progress.go: the turn waits
	b.cardSent(a, c, f)
	return ref, nil
}

// cardSent takes the steps that follow drawing a's card c, once it is
// sent. It counts the drawing (Bot.drawn), which is all the App Home
// (home.go) needs: it reads the store's pending cards again when the
// count moves; a pending card's id waits for the reminder scan
// (Bot.drew, remind.go). A card nobody can decide
// where it was asked (a direct message with an approval channel) is
// shown in its approval channel too (elsewhere.go).
func (b *Bot) cardSent(a *approval.Approval, c adapters.Card, f cardFacts) {
	b.drawn.Add(1)
	if a.State == approval.Pending {
		select {
		case b.drew <- nudgeCardOf(a):
		default:
			b.log.Warn("too many new cards for the reminder scan to read at once; this one is reminded only if the store lists it", "approval", a.ID)
		}
	}
	if a.Conversation.Direct && a.Requirement.ApprovalChannel != "" {
		b.mirror(a, copyOf(a, c, f))
	}
}

// runningAfter is how long after its start an approved run's card says
// it runs; a run that ends sooner shows only its end.
const runningAfter = 250 * time.Millisecond

// UpdateCard redraws a card in place (agent.Sink). Progress (p not nil) is
// coalesced and tried once: it is skipped while another update of the card
// is on its way or the platform asked to wait, so a run never sends more
// updates than the platform allows and a state change never waits behind
// a retried progress. A state change waits its turn and is retried by the
// adapter until it arrives (or its deadline: sendWindow at least); a card
// whose message is gone is posted again, once.
func (b *Bot) UpdateCard(ctx context.Context, a *approval.Approval, p *tools.Progress) error {
	ad, err := b.adapter(ctx, a.Conversation.Platform, a.ID)
	if err != nil {
		return err
	}
	sc := b.cards.shown(a.ID)
	if p != nil {
		if b.cardShown(ctx, a, p) { // the turn's task took the progress
			return nil
		}
		if !sc.send.TryLock() {
			return nil // an update is on its way; the next progress is newer
		}
		defer sc.send.Unlock()
		if b.now().Before(sc.quietUntil) {
			return nil
		}
		return b.sendCard(adapters.TryOnce(ctx), ad, sc, a, p, false)
	}
	gen := sc.next()
	if a.State == approval.Running {
		// The run starts as soon as this returns, before any call to the
		// platform: its card says it runs runningAfter later, unless the
		// run has ended by then (its end is drawn instead, one update).
		b.inflight.Add(1)
		time.AfterFunc(runningAfter, func() {
			defer b.inflight.Done()
			ctx, cancel := b.detached(ctx, b.now().Add(sendWindow))
			defer cancel()
			if sc.drawnPast(gen) {
				return // the run ended first: its end is on the card
			}
			b.cardShown(ctx, a, nil)
			if err := b.redraw(ctx, ad, sc, a, gen); err != nil {
				b.log.Warn("show that an approved call runs", "err", err, "approval", a.ID)
			}
		})
		return nil
	}
	ctx, cancel := b.lastWord(ctx)
	defer cancel()
	b.cardShown(ctx, a, nil)
	return b.redraw(ctx, ad, sc, a, gen)
}

// redraw draws a's change of state on its card, unless a later change
// (gen) was drawn first.
func (b *Bot) redraw(ctx context.Context, ad adapters.Adapter, sc *shownCard, a *approval.Approval, gen uint64) error {
	sc.send.Lock()
	defer sc.send.Unlock()
	if gen < sc.drawn {
		return nil // a later state is on the card
	}
	sc.drawn = gen
	if a.State.Final() {
		b.cards.forget(a.ID)
	}
	return b.sendCard(ctx, ad, sc, a, nil, true)
}

// sendCard shows a's state on its card, once: the adapter retries it.
// Only one sendCard runs per card at a time (sc.send). A progress update
// is skipped at a refusal; a state change (mustArrive) reposts a gone card.
func (b *Bot) sendCard(ctx context.Context, ad adapters.Adapter, sc *shownCard, a *approval.Approval, p *tools.Progress, mustArrive bool) error {
	pl := place(a.Conversation)
	if sc.ref == "" {
		sc.ref = a.MessageRef
	}
	f := b.facts(a, p)
	c := drawCard(a, f)
	if p == nil {
		defer b.cardSent(a, c, f)
	}
	var err error
	if sc.ref != "" {
		err = ad.Update(ctx, pl, sc.ref, adapters.Content{Card: &c})
		if err == nil {
			return nil
		}
		if errors.Is(err, adapters.ErrGone) && mustArrive {
			b.log.Warn("the card's message is gone; posting it again", "approval", a.ID, "ref", sc.ref)
			sc.ref = ""
		}
	}
	if sc.ref == "" {
		// A card this process never posted, or one that is gone.
		var ref string
		ref, err = ad.Post(ctx, pl, adapters.Content{Card: &c})
		if err == nil {
			sc.ref = ref
			if serr := b.store.SetMessageRef(ctx, a.ID, ref); serr != nil {
				b.log.Warn("record the new card message", "err", serr, "approval", a.ID)
			}
			return nil
		}
	}
	if d, ok := adapters.RetryAfter(err); ok {
		sc.quietUntil = b.now().Add(d)
	}
	if !mustArrive {
		b.log.Debug("a progress update of a card was skipped", "approval", a.ID, "err", err)
		return nil
	}
	return fmt.Errorf("update card %s: %w", a.ID, err)
}

// cards are the approval cards this process has shown and not yet seen
// reach a final state. A replica may never see the final state of a card
// (another replica ran it), so the set is bounded in size and in age: the
// least recently used card goes first, and none is kept past cardsAge.
// Forgetting a card costs only its cached reference: the next update
// reads it from the record (Approval.MessageRef).
type cards struct {
	mu sync.Mutex                         // makes get-or-add one step
	m  *expirable.LRU[string, *shownCard] // approval id → its card
}

// Bounds of the cards a process remembers.
const (
	cardsMax = 10000
	// cardsAge is past any approval's life: its TTL (15m by default)
	// and its run.
	cardsAge = 24 * time.Hour
)

// shownCard is one card as this process knows it. send is held while an
// update is on its way; ref and quietUntil are read and written under it
// (and ref by PostCard, before anyone else knows the card).
type shownCard struct {
	send       sync.Mutex
	ref        string    // the platform's message reference
	quietUntil time.Time // the platform asked to wait until then
	drawn      uint64    // the change of state drawn last (next)

	gen atomic.Uint64 // the changes of state asked for
}

// next numbers a change of state of the card, in the order they come.
func (sc *shownCard) next() uint64 { return sc.gen.Add(1) }

// drawnPast reports whether a change of state later than gen was asked
// for: gen is not to be drawn.
func (sc *shownCard) drawnPast(gen uint64) bool { return sc.gen.Load() > gen }

func (cs *cards) init() { cs.m = expirable.NewLRU[string, *shownCard](cardsMax, nil, cardsAge) }

// shown returns the card of approval id, new when unknown.
func (cs *cards) shown(id string) *shownCard {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if sc, ok := cs.m.Get(id); ok {
		return sc
	}
	sc := &shownCard{}
	cs.m.Add(id, sc)
	return sc
}

// forget drops a card that will not change again.
func (cs *cards) forget(id string) { cs.m.Remove(id) }

// len is how many cards are remembered.
func (cs *cards) len() int { return cs.m.Len() }
