package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
)

// This file is how the bot says words: which adapter serves a
// conversation's platform (adapter), replies in a conversation, notices
// only their addressee sees, and the safe sentence for a failure. Every
// message goes out through the adapter of its conversation's platform, on
// a context that lets the last word of cut-off work still arrive. The
// intake (queue.go, intake.go), the turn (progress.go) and the cards
// (sink.go) send through it; it calls nothing of theirs.

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

// serves reports whether this process has an adapter for platform.
func (b *Bot) serves(platform string) bool {
	_, ok := b.ads[platform]
	return ok
}

// adapter returns the adapter of platform; a platform with none here is
// an error wrapping agent.ErrElsewhere, logged and audited once per
// approval (approvalID, when the message belongs to one).
func (b *Bot) adapter(ctx context.Context, platform, approvalID string) (adapters.Adapter, error) {
	if ad, ok := b.ads[platform]; ok {
		return ad, nil
	}
	err := fmt.Errorf("platform %q: %w", platform, agent.ErrElsewhere)
	if approvalID == "" {
		b.log.Warn("a message for a platform this process does not serve was not sent", "platform", platform)
		return nil, err
	}
	b.mu.Lock()
	first := !b.unrouted.Contains(approvalID)
	b.unrouted.Add(approvalID, true)
	b.mu.Unlock()
	if first {
		b.log.Warn("an approval of a platform this process does not serve is left to a replica that serves it",
			"platform", platform, "approval", approvalID)
		ev := approval.Event{At: b.now(), Kind: approval.KindUnrouted, ApprovalID: approvalID,
			Outcome: approval.OutcomeLeft, Detail: "no " + platform + " adapter in this process"}
		if aerr := b.store.Audit(ctx, ev); aerr != nil {
			b.log.Error("audit an unrouted approval", "err", aerr, "approval", approvalID)
		}
	}
	return nil, err
}

// repeat logs a dropped repeat of an event and, unless the platform marked
// it as a possible repeat, tells its sender: an event nobody expected to be
// a repeat must never vanish in silence.
func (b *Bot) repeat(in inbound, where string) {
	b.log.Info("dropped a repeated event", "platform", in.platform, "event", in.ID, "seen_by", where, "redelivered", in.Redelivered)
	if in.Redelivered {
		return
	}
	b.notify(in, alreadyReceived(in.ID))
}

func (b *Bot) conv(in inbound) approval.Conversation {
	return approval.Conversation{Platform: in.platform, Channel: in.Place.Channel, Thread: in.Place.Thread, Direct: in.Direct}
}

// safely runs f, turning a panic into a logged error and a safe sentence in
// the channel, so that one bad event cannot take the bot down.
func (b *Bot) safely(in inbound, f func()) {
	defer func() {
		if r := recover(); r != nil {
			b.fail(b.work, b.conv(in), somethingWentWrong(), fmt.Errorf("panic: %v", r))
		}
	}()
	f()
}

// notifyTimeout bounds a private notice, and is its whole window for
// retries through chat trouble (the adapter waits out 429s and 5xx until
// it): long enough for one wait of Slack's longest Retry-After (a minute)
// and the try after it; the shutdown grace still ends it.
const notifyTimeout = 90 * time.Second

// notify answers the event in with a notice only its sender sees, through
// the event's own reply handle where the adapter gave one.
func (b *Bot) notify(in inbound, text string) {
	if err := b.notifyErr(in, text); err != nil {
		b.log.Error("send a private notice", "err", err, "platform", in.platform, "user", in.User.ID)
	}
}

// notifyErr is notify that returns the platform's error.
func (b *Bot) notifyErr(in inbound, text string) error {
	if r, ok := in.Reply.(*consoleReply); ok { // an event of the web console (console.go)
		r.add(text)
		return nil
	}
	ad, err := b.adapter(b.work, in.platform, "")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(b.work, notifyTimeout)
	defer cancel()
	n := adapters.Notice{Place: in.Place, User: in.User, Text: text, Reply: in.Reply}
	return ad.Notify(ctx, n)
}

// say posts text into a conversation.
func (b *Bot) say(ctx context.Context, conv approval.Conversation, text string) {
	b.sayTo(ctx, b, conv, text)
}

// sayTo is say through out (a turn's replies).
func (b *Bot) sayTo(ctx context.Context, out agent.Replier, conv approval.Conversation, text string) {
	if err := out.Reply(ctx, conv, text); err != nil {
		b.log.Error("post a message", "err", err, "conversation", conv.Key())
	}
}

// fail logs err under a new reference and tells the conversation a safe
// sentence with that reference.
func (b *Bot) fail(ctx context.Context, conv approval.Conversation, what string, err error) {
	b.failTo(ctx, b, conv, what, err)
}

// failTo is fail through out (a turn's replies).
func (b *Bot) failTo(ctx context.Context, out agent.Replier, conv approval.Conversation, what string, err error) {
	ref := newRef()
	b.log.Error(what, "err", err, "ref", ref, "conversation", conv.Key())
	b.sayTo(ctx, out, conv, failed(what, ref))
}

// failPrivate is fail for a notice only the sender of in sees.
func (b *Bot) failPrivate(in inbound, what string, err error) {
	ref := newRef()
	b.log.Error(what, "err", err, "ref", ref, "platform", in.platform, "user", in.User.ID)
	b.notify(in, failed(what, ref))
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
