package bot

import (
	"context"
	"strings"
	"sync"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/rules"
)

// A card nobody could decide where it was asked (a direct message that
// needs a second person) is also shown in its approval_channel (issue
// 19), where the approvers can decide it: a copy, kept in step with the
// card, whose clicks count as clicks on the card. Everything else (the
// turn, the replies) stays in the direct message.

// copies are the copies this process shows, by approval id: bounded in
// number and age like the cards (the least recently used goes first), and
// each freed once its final state is shown.
type copies struct {
	mu sync.Mutex
	m  *expirable.LRU[string, *copyCard]
}

// copyCard is one copy: its message once posted, and the latest drawing
// to show (each send shows the latest, so a late send never shows an
// older state).
type copyCard struct {
	mu     sync.Mutex
	ref    string
	latest adapters.Card
	final  bool // latest shows a final state
}

// approvalChannel is where a's card can be decided when its own
// conversation is a dead end, or "".
func approvalChannel(a *approval.Approval) string {
	ch := a.Requirement.ApprovalChannel
	if !a.Conversation.Direct || ch == "" {
		return ""
	}
	if p, rest, ok := strings.Cut(ch, ":"); ok {
		if p != a.Conversation.Platform {
			return ""
		}
		ch = rest
	}
	return ch
}

// decidedElsewhere reports whether in comes from a's approval channel.
func decidedElsewhere(a *approval.Approval, in inbound) bool {
	ch := approvalChannel(a)
	return ch != "" && in.Place.Channel == ch && a.Conversation.Platform == in.platform
}

// copyOf is c, the card of a as drawn for its direct message, as its
// approval channel shows it: with the buttons its approvers need. It does
// no I/O.
func copyOf(a *approval.Approval, c adapters.Card, f cardFacts) adapters.Card {
	if a.State != approval.Pending {
		return c
	}
	c.StateLine = "waiting for a decision · " + rules.Card(f.req, f.votes, f.mention) +
		" (asked in a direct message, which nobody else sees)"
	c.Buttons = []adapters.Button{
		{Label: "Approve", Approve: true, Value: a.ID, Reason: f.req.ReasonRequired(rules.Approve)},
		{Label: "Cancel", Value: a.ID, Reason: f.req.ReasonRequired(rules.Cancel)},
	}
	return c
}

// mirror shows c, the copy of a's card (copyOf), in a's approval channel.
func (b *Bot) mirror(a *approval.Approval, c adapters.Card) {
	ch := approvalChannel(a)
	if ch == "" {
		return
	}
	ad, ok := b.ads[a.Conversation.Platform]
	if !ok {
		return
	}
	b.copies.mu.Lock()
	if b.copies.m == nil {
		b.copies.m = expirable.NewLRU[string, *copyCard](cardsMax, nil, cardsAge)
	}
	cc, ok := b.copies.m.Get(a.ID)
	if !ok {
		if a.State.Final() {
			// Its final state is shown already (the entry was freed), or
			// another replica showed the copy, which this one cannot
			// update: a new copy of a finished card helps nobody.
			b.copies.mu.Unlock()
			return
		}
		cc = &copyCard{}
		b.copies.m.Add(a.ID, cc)
	}
	b.copies.mu.Unlock()
	cc.mu.Lock()
	cc.latest, cc.final = c, a.State.Final()
	cc.mu.Unlock()
	b.inflight.Add(1)
	go func() {
		defer b.inflight.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(b.work), notifyTimeout)
		defer cancel()
		cc.mu.Lock()
		defer cc.mu.Unlock()
		card, final := cc.latest, cc.final
		var err error
		if cc.ref == "" {
			cc.ref, err = ad.Post(ctx, adapters.Place{Channel: ch}, adapters.Content{Card: &card})
		} else {
			err = ad.Update(ctx, adapters.Place{Channel: ch}, cc.ref, adapters.Content{Card: &card})
		}
		if err != nil {
			b.log.Warn("show a card in its approval channel", "err", err, "approval", a.ID, "channel", ch)
		}
		if final && err == nil {
			b.copies.m.Remove(a.ID) // shown final: nothing changes it again
		}
	}()
}
