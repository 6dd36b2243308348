package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
)

// This file is how the bot says words in a conversation: every message
// goes out through the adapter of its conversation's platform, on a
// context that lets the last word of cut-off work still arrive. The turn
// (progress.go) and the cards (sink.go) send through it.

// The adapter retries every send through rate limits and outages until
// the send's deadline (adapters.Sender): the bot sends each message once
// and sets that deadline. A card's is its expiry; a reply's or a final
// state's is at least sendWindow; a progress update is tried once
// (adapters.TryOnce), as the next one replaces it.

// sendWindow is the least time a reply, a card's state change or a notice
// is given to get through chat trouble: a Slack Retry-After is at most a
// minute, so one wait out of a rate limit fits, with room.
const sendWindow = 2 * time.Minute

// detached is ctx without its cancellation (a !cancel, a turn's end), so
// that the last word of work still goes out, ending at deadline or when
// the bot's work ends (after the shutdown grace).
func (b *Bot) detached(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	stop := context.AfterFunc(b.work, cancel)
	return ctx, func() { stop(); cancel() }
}

// lastWord gives a message that must arrive its own time: ctx unchanged
// when it is live and has sendWindow left, else detached for sendWindow.
func (b *Bot) lastWord(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ctx.Err() == nil && (!ok || d.Sub(b.now()) >= sendWindow) {
		return ctx, func() {}
	}
	return b.detached(ctx, b.now().Add(sendWindow))
}

// Reply posts text into a conversation (agent.Sink).
func (b *Bot) Reply(ctx context.Context, conv approval.Conversation, text string) error {
	// The last word of work that was cut off (a shutdown, !cancel) goes
	// out on its own context, or the conversation would be left with
	// "Working on it…" for good.
	ctx, cancel := b.lastWord(ctx)
	defer cancel()
	ad, err := b.adapter(ctx, conv.Platform, "")
	if err != nil {
		return err
	}
	if _, err := ad.Post(ctx, place(conv), adapters.Content{Text: text}); err != nil {
		return fmt.Errorf("post reply in %s: %w", conv.Key(), err)
	}
	return nil
}

var _ agent.FullReplier = (*Bot)(nil)

// ReplyFull posts text into a conversation with the whole output of the
// run it shows cut, for the adapter to attach (agent.FullReplier).
func (b *Bot) ReplyFull(ctx context.Context, conv approval.Conversation, text, full string) error {
	ctx, cancel := b.lastWord(ctx)
	defer cancel()
	ad, err := b.adapter(ctx, conv.Platform, "")
	if err != nil {
		return err
	}
	if _, err := ad.Post(ctx, place(conv), adapters.Content{Text: text, Full: full}); err != nil {
		return fmt.Errorf("post reply in %s: %w", conv.Key(), err)
	}
	return nil
}

func place(c approval.Conversation) adapters.Place {
	return adapters.Place{Channel: c.Channel, Thread: c.Thread}
}
