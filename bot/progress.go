package bot

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// This file is a model turn as the thread shows it, from its start to its
// answer, in the order it happens: the turn starts (turnStarted: the
// status, or the working line), its words and its calls that need no
// card are given to turnReplies, a card breaks the turn (beforeCard,
// cardPosted and cardShown, at the end of this file, which sink.go calls
// as it posts and redraws the card), and the answer ends it (Reply,
// endShow). Words go out through send.go. Where the platform shows an agent's work
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

// quiet reports whether conv shows no calls that ran without a card
// (bot.default.quiet, or its channel's): the agent's Quiet.
func (b *Bot) quiet(conv approval.Conversation) bool {
	q := b.cfg.policy(conv.Platform, conv.Channel).Quiet
	return q != nil && *q
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

// A card's post and changes are the turn's too: the turn breaks before
// the card (its words stand above it), waits while it waits, and goes
// back to the model when its last card is final.

// beforeCard ends what a's turn shows so far (its stream, the model's
// words held back) before a's card is posted, so that the card stands
// below what the turn said before it and the rest of the turn comes
// below the card. Called by PostCard.
func (b *Bot) beforeCard(ctx context.Context, a *approval.Approval) {
	if s := b.shows.get(a.Conversation.Key()); s != nil {
		s.turn.Break(ctx)
	}
}

// cardPosted notes a new card in its turn, which now waits for it: the
// card says so, and the thread's status turns to waiting (Slack: the
// card's post cleared it; Discord: the typing stops). Called by PostCard
// once the card is up.
func (b *Bot) cardPosted(ctx context.Context, a *approval.Approval) {
	s := b.shows.get(a.Conversation.Key())
	if s == nil {
		return
	}
	s.mu.Lock()
	s.waiting[a.ID] = true
	s.mu.Unlock()
	s.turn.Posted()
	s.turn.Status(ctx, adapters.StatusWaiting)
}

// cardShown shows a card's change in its turn; called by UpdateCard
// before the card is redrawn. The card itself shows its state, so the
// turn changes only where the card cannot say it: a long run's progress
// goes to a task of the turn's stream (Slack: an append, Tier 4) instead
// of repeated chat.update of the card (Tier 3), once the run has lasted
// adapters.ProgressEvery; a card's change of state is a task only where
// the stream is open anyway; and when the turn's last card is final, the
// turn goes back to the model and the status says it thinks. For
// progress (p not nil) it reports true when the card is to be left
// alone; for a change of state, false: the card is always redrawn.
func (b *Bot) cardShown(ctx context.Context, a *approval.Approval, p *tools.Progress) bool {
	s := b.shows.get(a.Conversation.Key())
	if s == nil {
		return false
	}
	task := adapters.Task{ID: a.ID, Title: b.operation(a.Tool, a.Args), CardRef: a.MessageRef}
	if p != nil {
		if !s.turn.Streaming() {
			return false
		}
		elapsed := time.Duration(p.ElapsedMS) * time.Millisecond
		if !s.turn.Open() && elapsed < adapters.ProgressEvery {
			return true // a short run: the card says it runs, and its end comes soon
		}
		task.State = adapters.TaskInProgress
		task.Details = "running " + elapsed.Round(time.Second).String()
		if tail := adapters.Excerpt(lastLine(p.Tail)); tail != "" {
			task.Details += ": " + tail
		}
		return s.turn.Task(ctx, task)
	}
	if s.turn.Open() {
		if t, ok := taskOf(a, task); ok {
			s.turn.Task(ctx, t)
		}
	}
	if a.State.Final() {
		s.mu.Lock()
		delete(s.waiting, a.ID)
		left := len(s.waiting)
		s.mu.Unlock()
		if left == 0 {
			// The turn goes back to the model with the outcome.
			s.turn.Status(ctx, adapters.StatusThinking)
		}
	}
	return false
}

// taskOf is task in a's state, in words; false for a state no task shows.
func taskOf(a *approval.Approval, task adapters.Task) (adapters.Task, bool) {
	switch a.State {
	case approval.Pending:
		task.State, task.Details = adapters.TaskPending, "waiting for approval"
	case approval.Approved, approval.Running:
		task.State, task.Details = adapters.TaskInProgress, "approved by "+decider(a)+"; running"
	case approval.Done, approval.Failed:
		task.State, task.Details = adapters.TaskComplete, result(a).Briefly()
		if a.State == approval.Failed {
			task.State = adapters.TaskError
		}
	case approval.Cancelled:
		task.State, task.Details = adapters.TaskError, "cancelled by "+decider(a)
		if a.Reason != "" {
			task.Details += ": " + a.Reason
		}
	case approval.Expired:
		task.State, task.Details = adapters.TaskError, "expired: nobody decided in time"
	default:
		return task, false
	}
	return task, true
}

func decider(a *approval.Approval) string {
	if a.DecidedBy == nil {
		return "Countersign"
	}
	return a.DecidedBy.Display()
}

func result(a *approval.Approval) tools.Result {
	if a.Result != nil {
		return *a.Result
	}
	return tools.Result{Status: tools.StatusError, Error: fmt.Sprintf("the outcome was not recorded (%s)", a.State)}
}

// lastLine is the last line of text that holds something.
func lastLine(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
