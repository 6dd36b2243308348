package bot

import (
	"context"
	"fmt"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// Reply posts text into a conversation (agent.Sink).
func (b *Bot) Reply(ctx context.Context, conv approval.Conversation, text string) error {
	if _, err := b.ad.Post(ctx, place(conv), adapters.Content{Text: text}); err != nil {
		return fmt.Errorf("post reply in %s: %w", conv.Key(), err)
	}
	return nil
}

// PostCard posts the card of a new pending approval (agent.Sink).
func (b *Bot) PostCard(ctx context.Context, a *approval.Approval) (string, error) {
	c := card(a, nil, b.now(), b.cfg.CardOutput)
	ref, err := b.ad.Post(ctx, place(a.Conversation), adapters.Content{Card: &c})
	if err != nil {
		return "", fmt.Errorf("post card %s: %w", a.ID, err)
	}
	b.mu.Lock()
	b.refs[a.ID] = ref
	b.mu.Unlock()
	return ref, nil
}

// UpdateCard redraws a card in place (agent.Sink). A card whose message is
// unknown (posted by a replica that lost it) is posted anew.
func (b *Bot) UpdateCard(ctx context.Context, a *approval.Approval, p *tools.Progress) error {
	c := card(a, p, b.now(), b.cfg.CardOutput)
	b.mu.Lock()
	ref := a.MessageRef
	if ref == "" {
		ref = b.refs[a.ID]
	}
	if a.State.Final() {
		delete(b.refs, a.ID) // no more updates: forget it
	}
	b.mu.Unlock()
	pl := place(a.Conversation)
	if ref != "" {
		err := b.ad.Update(ctx, pl, ref, adapters.Content{Card: &c})
		if err == nil {
			return nil
		}
		b.log.Warn("update card in place failed; posting it again", "err", err, "approval", a.ID)
	}
	newRef, err := b.ad.Post(ctx, pl, adapters.Content{Card: &c})
	if err != nil {
		return fmt.Errorf("update card %s: %w", a.ID, err)
	}
	if !a.State.Final() {
		b.mu.Lock()
		b.refs[a.ID] = newRef
		b.mu.Unlock()
	}
	if err := b.store.SetMessageRef(ctx, a.ID, newRef); err != nil {
		b.log.Warn("record the new card message", "err", err, "approval", a.ID)
	}
	return nil
}

func place(c approval.Conversation) adapters.Place {
	return adapters.Place{Channel: c.Channel, Thread: c.Thread}
}
