package bot

import (
	"context"
	"sync"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
)

// This file keeps a conversation told while a model turn takes its time:
// after workingAfter without a word from the turn, a "working on it" line
// appears, and the turn's first reply takes its place (adapters.Update).

// workingAfter is how long a turn may be silent before the line appears.
const workingAfter = 2 * time.Second

// workingText is the line; it says how to stop the turn.
const workingText = "Working on it… (!cancel stops this turn)"

// working is the indicator of one turn.
type working struct {
	mu       sync.Mutex
	timer    *time.Timer
	ref      string // the posted line, once it is posted
	answered bool   // the turn said something, or ended
}

// turnStarted starts the indicator of a turn in conv and registers the
// turn's cancel for !cancel. It returns the indicator, which the turn's
// replies are given (turnReplies), and end, which stops both.
func (b *Bot) turnStarted(conv approval.Conversation, cancel context.CancelCauseFunc) (*working, func()) {
	key := conv.Key()
	w := &working{}
	b.mu.Lock()
	b.turns[key] = turn{cancel: cancel}
	b.mu.Unlock()
	w.timer = time.AfterFunc(workingAfter, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.answered {
			return
		}
		ad, err := b.adapter(b.work, conv.Platform, "")
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(b.work, notifyTimeout)
		defer cancel()
		ref, err := ad.Post(ctx, place(conv), adapters.Content{Text: workingText})
		if err != nil {
			b.log.Warn("post the working line", "err", err, "conversation", key)
			return
		}
		w.ref = ref
	})
	return w, func() {
		b.mu.Lock()
		delete(b.turns, key)
		b.mu.Unlock()
		w.timer.Stop()
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.ref != "" && !w.answered {
			b.replaceWorking(conv, w, "(finished)")
		}
		w.answered = true
	}
}

// replaceWorking puts text where the working line of conv is; it reports
// whether it did (the caller posts text itself otherwise). The caller holds
// w.mu.
func (b *Bot) replaceWorking(conv approval.Conversation, w *working, text string) bool {
	ad, err := b.adapter(b.work, conv.Platform, "")
	if err != nil {
		return false
	}
	// Its own context: the last word of a turn cut off by a shutdown must
	// still replace the working line.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(b.work), notifyTimeout)
	defer cancel()
	if err := ad.Update(ctx, place(conv), w.ref, adapters.Content{Text: text}); err != nil {
		b.log.Warn("replace the working line", "err", err, "conversation", conv.Key())
		return false
	}
	return true
}

// turnReplies is where the words of one model turn go (agent.Replier): the
// first takes the place of the turn's working line when it is up, the
// others are posted (Reply). Only the turn's own words are given it, so a
// !pending answered meanwhile in the same conversation leaves the line be.
type turnReplies struct {
	b *Bot
	w *working // nil: no indicator (a message outside a turn)
}

var _ agent.Replier = turnReplies{}

// Reply posts text for the turn (agent.Replier).
func (t turnReplies) Reply(ctx context.Context, conv approval.Conversation, text string) error {
	if t.b.answered(conv, t.w, text) {
		return nil // in place of the turn's working line
	}
	return t.b.Reply(ctx, conv, text)
}

// answered marks the turn of indicator w as having spoken. When its
// working line is up, text takes its place and answered reports true.
func (b *Bot) answered(conv approval.Conversation, w *working, text string) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.answered {
		return false
	}
	w.answered = true
	return w.ref != "" && b.replaceWorking(conv, w, text)
}

// turn is a model turn in flight in this process, for !cancel.
type turn struct {
	cancel context.CancelCauseFunc
}
