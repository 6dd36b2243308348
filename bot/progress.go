package bot

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
)

// This file is a model turn as the thread shows it, from its start to its
// answer, in the order it happens: the turn starts (turnStarted: the
// status, or the working line), its words and its calls that need no
// card are given to turnReplies, a card breaks the turn (sink.go, with
// the card: beforeCard, cardPosted, cardShown), and the answer ends it
// (Reply, endShow). Where the platform shows an agent's work
// (adapters.Turn): a status on the thread while the model works ("is
// thinking…"; the wait and an approved run are the card's to say, and a
// status changes only when what the thread shows does), and its words
// streamed with every call that needs no card as a task. A turn whose card waits
// outlives its goroutine (the agent suspends it), so the bot keeps each
// turn's show per conversation thread, bounded like cards: the decision
// on the card, the run's progress and the resumed turn's answer find it
// there. When it is gone (a restart, another replica, evicted), they fall
// back to the card and the messages the bot always posted.

// Where no status shows, a conversation is told while a model turn takes
// its time: after workingAfter without a word from the turn, a "working on
// it" line appears, and the turn's first reply takes its place
// (adapters.Update).

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

// showsMax and showsAge bound the turns whose show is remembered; a turn
// waits for its card at most an approval's TTL, then runs.
const (
	showsMax = 10000
	showsAge = 24 * time.Hour
)

// shows are the shows of turns, by conversation key.
type shows struct {
	mu sync.Mutex
	m  *expirable.LRU[string, *show]
}

func (ss *shows) lru() *expirable.LRU[string, *show] {
	if ss.m == nil {
		ss.m = expirable.NewLRU[string, *show](showsMax, nil, showsAge)
	}
	return ss.m
}

// get returns the live show of conversation key, or nil.
func (ss *shows) get(key string) *show {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.lru().Get(key)
	if !ok || s.isEnded() {
		return nil
	}
	return s
}

func (ss *shows) put(key string, s *show) *show {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	old, _ := ss.lru().Get(key)
	ss.lru().Add(key, s)
	return old
}

// in returns the live shows whose conversation key starts with prefix.
func (ss *shows) in(prefix string) []*show {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var out []*show
	for _, key := range ss.lru().Keys() {
		if s, ok := ss.lru().Peek(key); ok && strings.HasPrefix(key, prefix) && !s.isEnded() {
			out = append(out, s)
		}
	}
	return out
}

// drop forgets s, unless another turn of its thread has taken its place.
func (ss *shows) drop(key string, s *show) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if cur, ok := ss.lru().Get(key); ok && cur == s {
		ss.lru().Remove(key)
	}
}

// show is one turn as the thread shows it.
type show struct {
	turn *adapters.Turn
	conv approval.Conversation

	mu      sync.Mutex
	waiting map[string]bool // approvals of the turn whose card is not final
	ended   bool
}

func (s *show) isEnded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// end ends the turn's show with answer; it reports whether the answer
// was shown. When it was not (no stream is open), the show stays: the
// caller posts the answer and ends it again with no answer, which clears
// the status after the post.
func (s *show) end(ctx context.Context, answer string) bool {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return false
	}
	s.mu.Unlock()
	if !s.turn.End(ctx, answer) && answer != "" {
		return false
	}
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
	return true
}

// startShow begins the show of a turn in conv for the person who asked,
// and sets its status at once, before the model is asked. It reports
// whether the status is shown (then no "Working on it…" line is needed).
func (b *Bot) startShow(conv approval.Conversation, asker adapters.User) (*show, bool) {
	ad, err := b.adapter(b.work, conv.Platform, "")
	if err != nil {
		return nil, false
	}
	s := &show{turn: adapters.StartTurn(ad, place(conv), asker, b.log), conv: conv, waiting: map[string]bool{}}
	if old := b.shows.put(conv.Key(), s); old != nil {
		// An earlier turn of the thread still waited for a card: its
		// stream ends; its decision shows on the card.
		b.endShow(old, "")
	}
	ctx, cancel := context.WithTimeout(b.work, notifyTimeout)
	defer cancel()
	return s, s.turn.Status(ctx, adapters.StatusThinking)
}

// endShow ends s with answer on its own context (a cancelled turn's
// status must still be cleared) and forgets it.
func (b *Bot) endShow(s *show, answer string) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(b.work), notifyTimeout)
	defer cancel()
	b.shows.drop(s.conv.Key(), s)
	return s.end(ctx, answer)
}

// showLeft is called when the turn's goroutine is done: a turn that
// answered is over; one whose cards wait stays, showing it waits, until
// its decision resumes it; any other (cancelled, failed, shut down) ends
// without a word.
func (b *Bot) showLeft(s *show) {
	if s == nil {
		return
	}
	s.mu.Lock()
	waits := len(s.waiting) > 0 && !s.ended
	s.mu.Unlock()
	if !waits {
		b.endShow(s, "")
	}
}

// Resumed is where the words of a turn resumed by a decision go
// (agent.Resumer): into its show when this process still has it.
func (b *Bot) Resumed(key string) agent.Replier {
	s := b.shows.get(key)
	if s == nil {
		return b
	}
	return turnReplies{b: b, s: s}
}

var _ agent.Resumer = (*Bot)(nil)
