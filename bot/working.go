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
	show     *show  // the turn's status and stream (progress.go); nil without an adapter
}

// turnStarted starts the show of a turn in conv (progress.go: the
// thread's status, at once) and registers the turn's cancel for !cancel
// and the platform's Stop. Where no status shows, the working line comes
// after workingAfter. It returns the indicator, which the turn's replies
// are given (turnReplies), and end, which stops them all.
func (b *Bot) turnStarted(conv approval.Conversation, asker adapters.User, cancel context.CancelCauseFunc) (*working, func()) {
	key := conv.Key()
	w := &working{}
	b.mu.Lock()
	b.turns[key] = turn{cancel: cancel, conv: conv}
	b.mu.Unlock()
	var status bool
	w.show, status = b.startShow(conv, asker)
	if !status {
		w.timer = time.AfterFunc(workingAfter, func() { b.postWorking(conv, w) })
	}
	return w, func() {
		b.mu.Lock()
		delete(b.turns, key)
		b.mu.Unlock()
		if w.timer != nil {
			w.timer.Stop()
		}
		b.showLeft(w.show)
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.ref != "" && !w.answered {
			b.replaceWorking(conv, w, "(finished)")
		}
		w.answered = true
	}
}

// postWorking posts the working line of w, unless the turn has spoken.
func (b *Bot) postWorking(conv approval.Conversation, w *working) {
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
		b.log.Warn("post the working line", "err", err, "conversation", conv.Key())
		return
	}
	w.ref = ref
	if w.show != nil {
		w.show.turn.Posted()
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

// turnReplies is where the words of one model turn go (agent.Replier):
// the answer ends the turn's stream where it streams (show); else the
// first words take the place of the turn's working line when it is up,
// the others are posted (Reply). Only the turn's own words are given it,
// so a !pending answered meanwhile in the same conversation leaves the
// line be. The calls that needed no card become tasks of the stream
// (ShowCall), or "▸" lines (Note) that do not end the turn.
type turnReplies struct {
	b *Bot
	w *working // nil: no indicator (a message outside a turn, a resumed turn)
	s *show    // nil: no show
}

var (
	_ agent.Replier    = turnReplies{}
	_ agent.CallShower = turnReplies{}
	_ agent.Noter      = turnReplies{}
	_ agent.Texter     = turnReplies{}
)

// Reply posts text for the turn (agent.Replier): its last words.
func (t turnReplies) Reply(ctx context.Context, conv approval.Conversation, text string) error {
	if t.s == nil {
		return t.Note(ctx, conv, text)
	}
	if t.b.endShow(t.s, text) {
		return nil // streamed as the answer
	}
	// No stream is open: the answer is one message, and the status is
	// cleared after it (the post cleared Slack's: no call).
	err := t.Note(ctx, conv, text)
	t.b.endShow(t.s, "")
	return err
}

// Note posts text for the turn without ending it (agent.Noter).
func (t turnReplies) Note(ctx context.Context, conv approval.Conversation, text string) error {
	if t.s != nil {
		t.s.turn.Posted()
	}
	if t.b.answered(conv, t.w, text) {
		return nil // in place of the turn's working line
	}
	return t.b.Reply(ctx, conv, text)
}

// ShowCall shows a call that needed no card as a task of the turn's
// stream (agent.CallShower).
func (t turnReplies) ShowCall(ctx context.Context, _ approval.Conversation, c agent.ShownCall) bool {
	if t.s == nil {
		return false
	}
	task := adapters.Task{ID: c.ID, Title: c.Title, State: adapters.TaskComplete, Details: c.Details}
	switch {
	case c.Running:
		task.State = adapters.TaskInProgress
	case !c.OK:
		task.State = adapters.TaskError
	}
	return t.s.turn.Task(ctx, task)
}

// Text shows the model's words in the turn's stream as they come
// (agent.Texter); adapters.Turn sends them in batches. With an empty
// delta it reports whether the turn streams at all.
func (t turnReplies) Text(ctx context.Context, _ approval.Conversation, delta string) bool {
	if t.s == nil {
		return false
	}
	return t.s.turn.Text(ctx, delta)
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
	conv   approval.Conversation
}
