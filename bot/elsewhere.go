package bot

import (
	"context"
	"strings"
	"sync"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/rules"
)

// A card nobody could decide where it was asked (a direct message that
// needs a second person) is also shown in its approval_channel (issue
// 19), where the approvers can decide it: a copy, kept in step with the
// card, whose clicks count as clicks on the card. Everything else (the
// turn, the replies) stays in the direct message.

// copies are the copies this process shows, by approval id.
type copies struct {
	mu sync.Mutex
	m  map[string]*copyCard
}

// copyCard is one copy: its message once posted, and the latest drawing
// to show (each send shows the latest, so a late send never shows an
// older state).
type copyCard struct {
	mu     sync.Mutex
	ref    string
	latest adapters.Card
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
		b.copies.m = map[string]*copyCard{}
	}
	cc, ok := b.copies.m[a.ID]
	if !ok {
		if len(b.copies.m) >= cardsMax {
			b.copies.mu.Unlock()
			return
		}
		cc = &copyCard{}
		b.copies.m[a.ID] = cc
	}
	b.copies.mu.Unlock()
	cc.mu.Lock()
	cc.latest = c
	cc.mu.Unlock()
	b.inflight.Add(1)
	go func() {
		defer b.inflight.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(b.work), notifyTimeout)
		defer cancel()
		cc.mu.Lock()
		defer cc.mu.Unlock()
		card := cc.latest
		var err error
		if cc.ref == "" {
			cc.ref, err = ad.Post(ctx, adapters.Place{Channel: ch}, adapters.Content{Card: &card})
		} else {
			err = ad.Update(ctx, adapters.Place{Channel: ch}, cc.ref, adapters.Content{Card: &card})
		}
		if err != nil {
			b.log.Warn("show a card in its approval channel", "err", err, "approval", a.ID, "channel", ch)
		}
	}()
}
