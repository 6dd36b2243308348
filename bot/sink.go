package bot

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// This file is the bot as the agent's Sink: every message and card goes
// out through the adapter of its conversation's platform, and the
// platform's typed errors (adapters.ErrGone, adapters.RateLimitError) decide
// what happens next.

// Limits of retrying a platform.
const (
	// maxRateWait is the longest wait a rate limit is honoured for before
	// a state change gives up (it is then retried in the background).
	maxRateWait = time.Minute
	// sendAttempts bounds the tries of one message or card state.
	sendAttempts = 4
	// retryLater is the first pause before a card's final state is tried
	// again after a platform error; it doubles each time.
	retryLater = 2 * time.Second
)

// Reply posts text into a conversation (agent.Sink).
func (b *Bot) Reply(ctx context.Context, conv approval.Conversation, text string) error {
	if ctx.Err() != nil {
		// The last word of work that was cut off (a shutdown, !cancel):
		// it goes out on its own context, or the conversation would be
		// left with "Working on it…" for good.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), notifyTimeout)
		defer cancel()
	}
	ad, err := b.adapter(ctx, conv.Platform, "")
	if err != nil {
		return err
	}
	if _, err := post(ctx, ad, place(conv), adapters.Content{Text: text}); err != nil {
		return fmt.Errorf("post reply in %s: %w", conv.Key(), err)
	}
	return nil
}

var _ agent.FullReplier = (*Bot)(nil)

// ReplyFull posts text into a conversation with the whole output of the
// run it shows cut, for the adapter to attach (agent.FullReplier).
func (b *Bot) ReplyFull(ctx context.Context, conv approval.Conversation, text, full string) error {
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), notifyTimeout)
		defer cancel()
	}
	ad, err := b.adapter(ctx, conv.Platform, "")
	if err != nil {
		return err
	}
	if _, err := post(ctx, ad, place(conv), adapters.Content{Text: text, Full: full}); err != nil {
		return fmt.Errorf("post reply in %s: %w", conv.Key(), err)
	}
	return nil
}

// PostCard posts the card of a new pending approval (agent.Sink).
func (b *Bot) PostCard(ctx context.Context, a *approval.Approval) (string, error) {
	ad, err := b.adapter(ctx, a.Conversation.Platform, a.ID)
	if err != nil {
		return "", err
	}
	// Held while the card is posted: a click can arrive before the post
	// returns, and its update must wait for the card's reference instead
	// of posting a second card.
	sc := b.cards.shown(a.ID)
	sc.send.Lock()
	defer sc.send.Unlock()
	c := b.card(a, nil)
	ref, err := post(ctx, ad, place(a.Conversation), adapters.Content{Card: &c})
	if err != nil {
		return "", fmt.Errorf("post card %s: %w", a.ID, err)
	}
	sc.ref = ref
	b.cardPosted(ctx, a, ref) // progress.go: the turn's task and status
	return ref, nil
}

// UpdateCard redraws a card in place (agent.Sink). Progress (p not nil) is
// coalesced: it is skipped while another update of the card is on its way
// or the platform asked to wait, so a run never sends more updates than the
// platform allows. A state change waits its turn and is retried until it
// arrives; a card whose message is gone is posted again, once.
func (b *Bot) UpdateCard(ctx context.Context, a *approval.Approval, p *tools.Progress) error {
	ad, err := b.adapter(ctx, a.Conversation.Platform, a.ID)
	if err != nil {
		return err
	}
	if b.cardShown(ctx, a, p) { // progress.go: the turn's task took the progress
		return nil
	}
	sc := b.cards.shown(a.ID)
	if p != nil {
		if !sc.send.TryLock() {
			return nil // an update is on its way; the next progress is newer
		}
		defer sc.send.Unlock()
		if b.now().Before(sc.quietUntil) {
			return nil
		}
		return b.sendCard(ctx, ad, sc, a, p, false)
	}
	sc.send.Lock()
	defer sc.send.Unlock()
	if a.State.Final() {
		b.cards.forget(a.ID)
	}
	err = b.sendCard(ctx, ad, sc, a, nil, true)
	if err != nil && a.State.Final() {
		var rl *adapters.RateLimitError
		if !errors.As(err, &rl) && !errors.Is(err, context.Canceled) {
			b.retryFinal(ad, sc, a)
		}
	}
	return err
}

// sendCard shows a's state on its card. Only one sendCard runs per card
// at a time (sc.send). A progress update gives up at the first refusal; a
// state change (mustArrive) waits out rate limits and reposts a gone card.
func (b *Bot) sendCard(ctx context.Context, ad adapters.Adapter, sc *shownCard, a *approval.Approval, p *tools.Progress, mustArrive bool) error {
	pl := place(a.Conversation)
	if sc.ref == "" {
		sc.ref = a.MessageRef
	}
	reposted := false
	var err error
	for range sendAttempts {
		if wait := sc.quietUntil.Sub(b.now()); wait > 0 {
			if !mustArrive {
				return nil
			}
			if err := sleep(ctx, wait); err != nil {
				return err
			}
		}
		c := b.card(a, p)
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
		} else {
			err = ad.Update(ctx, pl, sc.ref, adapters.Content{Card: &c})
			if err == nil {
				return nil
			}
			if errors.Is(err, adapters.ErrGone) && !reposted {
				b.log.Warn("the card's message is gone; posting it again", "approval", a.ID, "ref", sc.ref)
				sc.ref, reposted = "", true
				continue
			}
		}
		if d, ok := adapters.RetryAfter(err); ok {
			sc.quietUntil = b.now().Add(min(d, maxRateWait))
			if mustArrive && d <= maxRateWait {
				continue
			}
		}
		break
	}
	if !mustArrive {
		b.log.Debug("a progress update of a card was skipped", "approval", a.ID, "err", err)
		return nil
	}
	return fmt.Errorf("update card %s: %w", a.ID, err)
}

// retryFinal tries a card's final state again in the background, with a
// growing pause, until it arrives or the bot stops: the outcome of a call
// must reach its card even when the platform failed at the moment it ended.
func (b *Bot) retryFinal(ad adapters.Adapter, sc *shownCard, a *approval.Approval) {
	b.inflight.Add(1)
	go func() {
		defer b.inflight.Done()
		pause := retryLater
		for range sendAttempts {
			if sleep(b.work, pause) != nil {
				return
			}
			sc.send.Lock()
			err := b.sendCard(b.work, ad, sc, a, nil, true)
			sc.send.Unlock()
			if err == nil {
				return
			}
			b.log.Warn("showing a card's final state failed again", "approval", a.ID, "err", err)
			pause *= 2
		}
		b.log.Error("gave up showing a card's final state", "approval", a.ID, "state", string(a.State))
	}()
}

// post posts c, waiting out rate limits within sendAttempts tries.
func post(ctx context.Context, ad adapters.Adapter, pl adapters.Place, c adapters.Content) (string, error) {
	var err error
	for range sendAttempts {
		var ref string
		ref, err = ad.Post(ctx, pl, c)
		if err == nil {
			return ref, nil
		}
		d, ok := adapters.RetryAfter(err)
		if !ok || d > maxRateWait {
			return "", err
		}
		if serr := sleep(ctx, d); serr != nil {
			return "", serr
		}
	}
	return "", err
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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
}

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

func place(c approval.Conversation) adapters.Place {
	return adapters.Place{Channel: c.Channel, Thread: c.Thread}
}
