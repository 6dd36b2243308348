package adapters

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode"
)

// A turn is the bot's work on one message: the model thinks, tools run,
// cards wait, and an answer comes. Two optional capabilities show a turn
// where it happens, the way the platform's own AI surfaces do:
//
//   - TurnStatus: a status on the thread while the turn works ("is
//     thinking…", "is running df -h", "is waiting for approval"), cleared
//     at the answer (Slack: assistant.threads.setStatus; Discord: the
//     typing indicator).
//   - TaskStream: the turn's answer streamed into the thread, with each
//     tool call shown as a task that moves from pending to complete (Slack:
//     chat.startStream / appendStream / stopStream; the terminal: a line
//     per change of state).
//
// Both fail soft: an error means "not shown", and the bot says the same
// thing with the messages it always posted. An adapter without a
// capability keeps today's behaviour. The bot uses them through one value
// per turn, Turn, which checks the capabilities, remembers a refusal for
// the rest of the turn, and tells the bot when to fall back.

// TaskState is the state of one task, in Slack's words.
type TaskState string

// The states of a task.
const (
	TaskPending    TaskState = "pending"
	TaskInProgress TaskState = "in_progress"
	TaskComplete   TaskState = "complete"
	TaskError      TaskState = "error"
)

// Valid reports whether s is one of the four states.
func (s TaskState) Valid() bool {
	switch s {
	case TaskPending, TaskInProgress, TaskComplete, TaskError:
		return true
	}
	return false
}

// Task is one tool call of a turn as the thread shows it.
type Task struct {
	// ID is the call's id, stable for the turn (the approval id where
	// there is a card, else the model's tool call id). A task with a new
	// ID is added; one with a known ID is updated in place.
	ID string
	// Title is the operation ("df -h", "SELECT … FROM orders"), as the
	// card shows it; adapters render it through Visible.
	Title string
	State TaskState
	// Details says the state in words: "ran without a card: read-only",
	// "waiting for approval", "blocked: writes to /etc", "running 1m20s:
	// <last line>", "exit code 0 in 12ms", "42 rows", "failed: …".
	Details string
	// CardRef is the message reference (from Post) of the task's card,
	// when it has one; the adapter links the task to it.
	CardRef string
}

// TurnStatus is an optional capability: a status line on the thread while
// a turn works.
type TurnStatus interface {
	Adapter
	// SetStatus shows text as the thread's status ("is thinking…");
	// empty text clears it. A later call replaces an earlier one. An
	// error means the status is not shown; the turn goes on.
	SetStatus(ctx context.Context, to Place, text string) error
}

// TaskStream is an optional capability: a turn's answer streamed into the
// thread, with its tool calls as tasks.
type TaskStream interface {
	Adapter
	// StartStream starts the turn's stream in the thread; asker is the
	// person whose message started the turn (Slack streams to a
	// recipient). An error means there is no stream this turn (a
	// workspace without the feature, streaming switched off: wraps
	// ErrNoStream); the bot posts messages as before.
	StartStream(ctx context.Context, to Place, asker User) (Stream, error)
}

// WholeText is an optional TaskStream capability: the adapter's Stream
// takes only whole messages in Text (the terminal prints each Text as a
// message of its own). The turn says it takes no words as they come (Text
// with no words reports false, so the model is not asked to stream), and
// words given it all the same are held until the next task or the end,
// and sent as one message.
type WholeText interface {
	TaskStream
	WholeText()
}

// Stream is one turn's stream. Its methods are called by one goroutine at
// a time, in the turn's order; an error means the stream is broken and
// what was to be shown must be posted as a message instead.
type Stream interface {
	// Text appends the model's words (markdown) as they come.
	Text(ctx context.Context, markdown string) error
	// Task adds the task, or updates the one with its ID.
	Task(ctx context.Context, t Task) error
	// Stop ends the stream; final, when set, is appended first (the
	// answer's last words). Stop after a failed call still ends it.
	Stop(ctx context.Context, final string) error
}

// ErrNoStatus says an adapter shows no status here, for a reason it
// knows and has logged once: switched off, refused by the workspace, a
// place without a thread. The bot goes on without it.
var ErrNoStatus = errors.New("a thread status is not available here")

// ErrNoStream says an adapter will not stream: the workspace refused it
// or it is switched off. The bot posts messages instead.
var ErrNoStream = errors.New("streaming is not available here")

// Turn is the bot's one handle on a turn's status and stream. Make one
// per turn with StartTurn, call its methods from the turn's goroutine
// (it is safe for concurrent use, but order matters to the reader), and
// End it once. Each method reports whether the adapter showed what it was
// given; when it did not, the bot posts its message as before. A Turn
// never returns an error: what failed is logged once, and the rest of the
// turn falls back.
type Turn struct {
	a     Adapter
	place Place
	user  User
	log   *slog.Logger

	mu       sync.Mutex
	status   TurnStatus // nil once refused
	shown    string     // the status shown now
	posted   bool       // the bot posted in the thread since: the platform may have cleared it
	streamer TaskStream // nil once refused or started
	base     TaskStream // the adapter's streams, for a stream after a Break
	whole    bool       // the stream takes whole messages only (WholeText)
	stream   Stream     // the open stream, nil when none
	broken   bool       // the stream failed: fall back for the rest of the turn
	tasks    map[string]Task
	sent     map[string]time.Time // when a task's details were last sent
	now      func() time.Time

	held      *Task       // a task that started and is not sent yet (Task)
	heldTimer *time.Timer // sends held TextEvery after it came

	pending string    // the model's words not sent yet (Text)
	said    string    // the words of the model's message so far, sent or pending
	wrote   bool      // the stream was given words of the model's
	heldAt  time.Time // when the first of the pending words came
}

// StartTurn begins a turn in place for the person who asked. It does no
// I/O: the status and the stream start on first use.
func StartTurn(a Adapter, place Place, asker User, log *slog.Logger) *Turn {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &Turn{a: a, place: place, user: asker, log: log, tasks: map[string]Task{}, sent: map[string]time.Time{}, now: time.Now}
	x := a.Extras() // declared, so that no wrapper hides them
	t.status, t.streamer, t.whole = x.Status, x.Stream, x.Stream != nil && x.WholeText
	t.base = t.streamer
	return t
}

// Status shows text as the thread's status ("is thinking…"); empty text
// clears it. It reports whether the adapter shows statuses (false: there
// is no status, and nothing else need be posted for it). Repeating the
// status shown is no call.
func (t *Turn) Status(ctx context.Context, text string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status == nil {
		return false
	}
	if text == t.shown && !t.posted {
		return true
	}
	t.posted = false
	if err := t.status.SetStatus(ctx, t.place, text); err != nil {
		level := slog.LevelWarn
		if errors.Is(err, ErrNoStatus) {
			level = slog.LevelDebug // known and said once by the adapter
		}
		t.log.Log(ctx, level, "could not show the thread's status; the turn goes on without it", "adapter", t.a.Name(), "channel", t.place.Channel, "thread", t.place.Thread, "err", err)
		t.status = nil
		return false
	}
	t.shown = text
	return true
}

// Posted tells the turn that the bot posted a message in the thread (a
// card, a notice in the thread): Slack clears a thread's status when the
// app posts there, so the next Status goes to the adapter even if its
// text is the one shown before (the adapter knows what its platform
// shows, and sends only a change).
func (t *Turn) Posted() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.posted = true
}

// Streaming reports whether the turn has (or may still open) a stream:
// while true, the bot sends tasks and words through Task and Text, and
// leaves out the "Working on it…" message and the "▸" lines.
func (t *Turn) Streaming() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.broken && (t.stream != nil || t.streamer != nil)
}

// open starts the stream on first use. t.mu is held.
func (t *Turn) open(ctx context.Context) bool {
	if t.broken {
		return false
	}
	if t.stream != nil {
		return true
	}
	if t.streamer == nil {
		return false
	}
	s, err := t.streamer.StartStream(ctx, t.place, t.user)
	t.streamer = nil
	if err != nil {
		t.fail("start", err)
		return false
	}
	t.stream = s
	return true
}

func (t *Turn) fail(what string, err error) {
	t.broken = true
	if errors.Is(err, ErrNoStream) {
		t.log.Debug("no stream this turn; posting messages", "adapter", t.a.Name(), "err", err)
		return
	}
	t.log.Warn("the turn's stream failed; posting messages for the rest of the turn", "adapter", t.a.Name(), "channel", t.place.Channel, "thread", t.place.Thread, "step", what, "err", err)
}

// TextEvery is how long the model's words are held back while they come,
// so that they cost at most one append per TextEvery (Slack: one
// chat.appendStream, a Web API call, each): they are sent with the first
// word that comes TextEvery or more after the first word held. Words held
// back go with the next task or End, so they never wait past the turn's
// next step, and a short answer goes whole with the end of the stream. A
// variable only so that a test can change it; set it before any turn
// starts.
var TextEvery = 500 * time.Millisecond

// Text appends the model's words (a delta of its message, markdown) to
// the stream, in batches of at most one per TextEvery. It reports false
// when they will not be shown (no stream, or it broke): the bot posts the
// answer as a message. An empty markdown sends nothing and reports
// whether the turn takes words as they come: it streams (or may still),
// and not a stream of whole messages (WholeText).
func (t *Turn) Text(ctx context.Context, markdown string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.broken || (t.stream == nil && t.streamer == nil) {
		return false
	}
	if markdown == "" {
		return !t.whole
	}
	if t.pending == "" {
		t.heldAt = t.now()
	}
	if t.said == "" && t.wrote && !t.whole {
		t.pending += "\n\n" // another message of the model's
	}
	t.pending += markdown
	t.said += markdown
	t.wrote = true
	if t.whole || t.now().Sub(t.heldAt) < TextEvery {
		return true
	}
	return t.flush(ctx)
}

// flush sends the words held back, after the task held back. t.mu is
// held.
func (t *Turn) flush(ctx context.Context) bool {
	if t.pending == "" {
		return true
	}
	if !t.sendHeld(ctx) {
		return false
	}
	if !t.open(ctx) {
		return false
	}
	text := t.pending
	t.pending = ""
	if err := t.stream.Text(ctx, text); err != nil {
		t.fail("text", err)
		return false
	}
	return true
}

// unsaid is what of answer (the model's whole message, trimmed) the
// stream has not been given, said being the words it was given of the
// message: the rest after them, nothing when they are all of it, or the
// whole answer on a line of its own when it is other words (a failure
// told after half an answer).
func unsaid(said, answer string) string {
	lead := strings.TrimLeftFunc(said, unicode.IsSpace)
	switch {
	case lead == "":
		return answer
	case strings.HasPrefix(answer, lead):
		return answer[len(lead):]
	case strings.TrimSpace(lead) == answer:
		return ""
	}
	return "\n\n" + answer
}

// ProgressEvery is how often a running task's details alone (its
// progress) are sent; changes of state and title are sent at once. A
// 5-minute run whose progress comes every 2 s costs 20 stream calls, not
// 150 card updates. A variable only so that a test can watch a long run
// in a short time; set it before any turn starts.
var ProgressEvery = 15 * time.Second

// Task adds or updates a task in the stream. A task that starts (new, in
// progress) is held TextEvery and then sent, unless its end came first
// and is sent instead: whether a call is shown is known when it ends. An
// update that changes nothing is no call, and a change of an in-progress
// task's details alone is sent at most every ProgressEvery (the skipped ones are not owed:
// the next change of state carries the outcome). It reports false when
// the task is not shown: the bot posts its message (the "▸" line, the
// card's progress) as before.
func (t *Turn) Task(ctx context.Context, task Task) bool {
	if task.ID == "" || !task.State.Valid() {
		t.log.Warn("a task without an id or with an unknown state was not shown", "id", task.ID, "state", task.State)
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held != nil && t.held.ID == task.ID {
		if task.State == TaskInProgress {
			*t.held = task // its progress: the latest goes when the time is up
			return true
		}
		t.dropHeld() // its end is here: sent instead
	}
	if !t.sendHeld(ctx) { // another call's start goes before this one
		return false
	}
	// The words before a task are shown before it; words after it are
	// another message of the model's.
	if !t.flush(ctx) {
		return false
	}
	t.said = ""
	if !t.open(ctx) {
		return false
	}
	if _, known := t.tasks[task.ID]; !known && task.State == TaskInProgress && !t.whole {
		// A call that starts is held TextEvery: a quick one is sent once,
		// as it ended (one append, not two; a read turn's stream starts
		// with its outcome).
		h := task
		t.held = &h
		dctx := context.WithoutCancel(ctx)
		t.heldTimer = time.AfterFunc(TextEvery, func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.held != nil && t.held.ID == h.ID {
				t.sendHeld(dctx)
			}
		})
		return true
	}
	return t.send(ctx, task)
}

// send sends task, unless it changes nothing or is progress within
// ProgressEvery. t.mu is held and the stream is open.
func (t *Turn) send(ctx context.Context, task Task) bool {
	old, known := t.tasks[task.ID]
	if known && old == task {
		return true
	}
	now := t.now()
	if known && old.State == task.State && old.Title == task.Title && old.CardRef == task.CardRef &&
		task.State == TaskInProgress && now.Sub(t.sent[task.ID]) < ProgressEvery {
		return true
	}
	if err := t.stream.Task(ctx, task); err != nil {
		t.fail("task", err)
		return false
	}
	t.tasks[task.ID] = task
	t.sent[task.ID] = now
	return true
}

// sendHeld sends the task held back, first. t.mu is held.
func (t *Turn) sendHeld(ctx context.Context) bool {
	if t.held == nil {
		return true
	}
	h := *t.held
	t.dropHeld()
	if !t.open(ctx) {
		return false
	}
	return t.send(ctx, h)
}

// dropHeld forgets the task held back. t.mu is held.
func (t *Turn) dropHeld() {
	if t.heldTimer != nil {
		t.heldTimer.Stop()
	}
	t.held, t.heldTimer = nil, nil
}

// End ends the turn: the stream stopped with the answer's last words
// (the words held back, and what of answer the model's streamed words
// (Text) did not already say) and the status cleared. It reports whether
// answer was shown. When no stream is open and answer is not empty, it
// does nothing and reports false: the bot posts answer as a message (one
// call, where starting and stopping a stream are two) and then calls End
// with no answer, which clears the status after the post (a post clears
// Slack's status itself, and the adapter knows it).
func (t *Turn) End(ctx context.Context, answer string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sendHeld(ctx) // a call that started and said no more: shown as it stands
	if (t.stream == nil || t.broken) && answer != "" {
		return false
	}
	var shown bool
	if t.stream == nil || t.broken {
		t.streamer = nil
		shown = true // no answer
	} else {
		shown = t.stop(ctx, answer)
		t.broken = true // ended: nothing more goes to it
	}
	t.base = nil
	if t.status != nil && t.shown != "" {
		if err := t.status.SetStatus(ctx, t.place, ""); err != nil {
			t.log.Warn("could not clear the thread's status", "adapter", t.a.Name(), "err", err)
		}
		t.shown = ""
	}
	t.status = nil
	return shown
}

// stop stops the open stream with the words held back and what of
// answer they did not say. t.mu is held.
func (t *Turn) stop(ctx context.Context, answer string) bool {
	final := t.pending
	if answer != "" {
		rest := unsaid(t.said, answer)
		if t.said == "" && t.wrote && rest != "" && !t.whole {
			rest = "\n\n" + rest // after the words of an earlier message
		}
		final += rest
	}
	t.pending, t.said = "", ""
	s := t.stream
	t.stream = nil
	if err := s.Stop(ctx, final); err != nil {
		t.fail("stop", err)
		return false
	}
	return true
}

// Break ends what the turn shows so far before the bot posts a message
// of its own in the thread (an approval card): the open stream is
// stopped with the words held back, or, with no stream open, the words
// held back are posted as a message. Then the card stands below
// everything the turn said before it, and what the turn says after it (a
// run's progress, the answer) comes below the card, in a new stream or
// a message. It reports false when the words could not be shown (logged).
func (t *Turn) Break(ctx context.Context) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sendHeld(ctx)
	ok := true
	switch {
	case t.stream != nil && !t.broken:
		ok = t.stop(ctx, "")
		if ok && t.base != nil {
			t.streamer, t.broken = t.base, false // a new stream after the card
		}
		t.tasks, t.sent = map[string]Task{}, map[string]time.Time{}
	case t.pending != "":
		text := strings.TrimSpace(t.pending)
		t.pending, t.said = "", ""
		if _, err := t.a.Post(ctx, t.place, Content{Text: text}); err != nil {
			t.log.Warn("could not post the model's words before a card", "adapter", t.a.Name(), "err", err)
			ok = false
		}
	}
	t.wrote = false
	t.posted = true // the card that follows clears a status (Slack)
	return ok
}

// Open reports whether the turn's stream is open now (it was started and
// has not broken or ended).
func (t *Turn) Open() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stream != nil && !t.broken
}

// StatusRunning is the status while op runs: "is running df -h", cut to
// fit a status line.
func StatusRunning(op string) string {
	return fmt.Sprintf("is running %s", Excerpt(op))
}

// Statuses the bot shows.
const (
	StatusThinking = "is thinking…"
	StatusWaiting  = "is waiting for approval"
)
