// Package terminal is the chat adapter for a terminal: it reads lines from
// an io.Reader and writes messages and approval cards to an io.Writer. It is
// the default adapter (go run ./cmd/countersign), the quickest way to watch
// an approval happen, and a scripting interface: with piped input, lines are
// processed in order and Run returns at the end of input.
//
// There are no buttons: a card shows the exact words to type ("approve
// <id>", "cancel <id> [reason]"), and such a line becomes a decision event.
// The identity can be switched with "/as <name>" so that a second person can
// approve in the same session. There is one conversation: channel
// "terminal", thread "main".
package terminal

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/countersign/countersign/adapters"
)

// The one conversation of a terminal session.
const (
	Channel = "terminal"
	Thread  = "main"
)

// Options configure a terminal session; the zero value is ready to use.
type Options struct {
	// User is the identity at start; default $USER, else the OS user name,
	// else "you".
	User string `yaml:"user"`
	// Color is "auto" (the default: colour when the output is a terminal
	// and NO_COLOR is unset), "always" or "never".
	Color string `yaml:"color"`
	// Pace, when positive, holds each message back until the bot has
	// answered the message before it (posted something, sent a notice, or
	// moved a card to another state), or Pace has passed. The bot turns
	// away messages past its per-conversation queue (bot.queue_size), so
	// piped input must not outrun it; with Pace it never does while the
	// bot answers within Pace. Zero hands lines over as they come. Set by
	// the program, not the configuration file.
	Pace time.Duration `yaml:"-"`
	// Leaving, when set, is called when the person quits with Ctrl-C
	// twice at the prompt, so that the program can quit at once on the
	// next interrupt while the work in flight finishes.
	Leaving func() `yaml:"-"`
}

// Validate reports a bad option, naming it.
func (o Options) Validate() error {
	switch o.Color {
	case "", "auto", "always", "never":
	default:
		return fmt.Errorf("terminal.color: %q is not one of auto, always, never", o.Color)
	}
	if o.User != "" && !validName(o.User) {
		return fmt.Errorf("terminal.user: %q is not a single word", o.User)
	}
	return nil
}

// WithDefaults returns o with its empty options filled as New fills them:
// the user resolved, the colour "auto".
func (o Options) WithDefaults() Options {
	o.User = defaultUser(o.User)
	if o.Color == "" {
		o.Color = "auto"
	}
	return o
}

// Terminal is the terminal adapter.
type Terminal struct {
	in     io.Reader
	out    io.Writer
	color  bool
	prompt bool // a prompt line is shown (input and output are terminals)

	mu       sync.Mutex // guards everything below and writes to out
	user     string
	seq      int // message refs
	ids      *adapters.EventIDs
	rendered map[string]string // ref → what it shows now
	states   map[string]string // ref → card state shown ("" for a message)
	kept     []string          // the refs in rendered, oldest first
	prompted bool              // the prompt is on screen, waiting for input

	ed         *editor // the line editor, while Run reads from a terminal
	spilled    spill   // the whole of what was cut to the screen
	pace       time.Duration
	leaving    func()
	awaiting   bool          // a message was handed over and not answered yet
	awaitUntil time.Time     // ... and the next one waits until then at most
	answered   chan struct{} // a token when an awaited answer came
}

var _ adapters.Adapter = (*Terminal)(nil)

// New returns a terminal adapter reading lines from in and writing to out.
// Options that fail Validate fall back to their defaults.
func New(in io.Reader, out io.Writer, opts Options) *Terminal {
	t := &Terminal{
		in:       in,
		out:      out,
		user:     defaultUser(opts.User),
		rendered: map[string]string{},
		states:   map[string]string{},
		ids:      adapters.NewEventIDs(),
		pace:     opts.Pace,
		leaving:  opts.Leaving,
		answered: make(chan struct{}, 1),
	}
	switch opts.Color {
	case "always":
		t.color = true
	case "never":
	default:
		t.color = os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" && isTerminal(out)
	}
	t.prompt = isTerminal(in) && isTerminal(out)
	return t
}

func defaultUser(name string) string {
	if validName(name) {
		return name
	}
	if n := os.Getenv("USER"); validName(n) {
		return n
	}
	if u, err := user.Current(); err == nil && validName(u.Username) {
		return u.Username
	}
	return "you"
}

// isTerminal reports whether f is a character device (a terminal), without
// golang.org/x/term.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok {
		return false
	}
	st, err := file.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// Name returns "terminal".
func (t *Terminal) Name() string { return "terminal" }

// Extras are the terminal's one extra: a turn's calls and answer as lines,
// a stream that prints each Text as a message of its own (WholeText: a
// turn gives it the model's answer whole, not its words as they come). It
// has no buttons (cards show the words to type), no status, no inbox, and
// loses no send. It finds a person by e-mail by the name before the @.
func (t *Terminal) Extras() adapters.Extras {
	return adapters.Extras{Stream: t, WholeText: true, ByEmail: t}
}

// User returns the identity lines are typed as now.
func (t *Terminal) User() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.user
}

const help = `Type a request in plain words, or a direct command:
  !run <command>           run a shell command
  !sql <statement>         run one SQL statement
  !http <METHOD> <url>     make an HTTP request
  !file <operation> <path> read, list, stat, write, delete ... a file
  !pending                 list the approvals waiting here
  !help                    what the bot can do
Decide on a card by typing the words it shows:
  approve <id>             approve and run it
  cancel <id> [reason]     cancel it; the reason goes back to the model
Terminal commands:
  /as <name>               speak as someone else (a second person can approve)
  /whoami                  who you are now
  /help                    this help
  /quit                    leave (also: end of input)`

// command runs a terminal command ("/as bob") and reports whether to quit.
func (t *Terminal) command(line string) (quit bool) {
	verb, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch verb {
	case "/help":
		t.print(help)
	case "/as":
		if !validName(arg) {
			t.print("usage: /as <name>  (one word, e.g. /as bob)")
			return false
		}
		t.mu.Lock()
		t.user = arg
		t.mu.Unlock()
		t.mu.Lock()
		if t.ed != nil {
			t.ed.t.SetPrompt(t.promptText())
		}
		t.mu.Unlock()
		t.print("you are now " + t.paint(bold, arg))
	case "/whoami":
		t.print("you are " + t.paint(bold, t.User()))
	case "/quit", "/exit":
		return true
	default:
		t.print("unknown command " + verb + "; /help lists them")
	}
	return false
}

// maxKept is how many posted messages the terminal remembers, for
// Update; past it the oldest finished card (else the oldest message) is
// forgotten, and an update of it is ErrGone: the bot posts it again.
const maxKept = 128

// Post prints a message or a card and returns its reference.
func (t *Terminal) Post(_ context.Context, _ adapters.Place, c adapters.Content) (string, error) {
	text := t.render(c)
	t.mu.Lock()
	t.seq++
	ref := "m" + strconv.Itoa(t.seq)
	state := ""
	if c.Card != nil {
		state = c.Card.State
	}
	t.keepLocked(ref, text, state)
	t.answerLocked()
	t.mu.Unlock()
	return ref, t.print(text)
}

// keepLocked remembers what ref shows, forgetting the oldest finished
// card, else the oldest message, past maxKept. t.mu is held.
func (t *Terminal) keepLocked(ref, text, state string) {
	if _, ok := t.rendered[ref]; !ok {
		t.kept = append(t.kept, ref)
	}
	t.rendered[ref] = text
	t.states[ref] = state
	if len(t.kept) <= maxKept {
		return
	}
	drop := 0
	for i, r := range t.kept {
		if final(t.states[r]) {
			drop = i
			break
		}
	}
	r := t.kept[drop]
	t.kept = append(t.kept[:drop], t.kept[drop+1:]...)
	delete(t.rendered, r)
	delete(t.states, r)
}

// final reports whether a card in state will not change again.
func final(state string) bool {
	switch state {
	case "done", "failed", "cancelled", "expired":
		return true
	}
	return false
}

// Update prints the new version of a message. A terminal cannot redraw what
// has scrolled by, so the new version is printed below; an unchanged message
// prints nothing, and a running card's progress prints one line. A message
// the terminal no longer remembers is ErrGone.
func (t *Terminal) Update(_ context.Context, _ adapters.Place, ref string, c adapters.Content) error {
	text := t.render(c)
	t.mu.Lock()
	old, known := t.rendered[ref]
	if !known {
		t.mu.Unlock()
		return fmt.Errorf("update message %s: %w", ref, adapters.ErrGone)
	}
	if old == text {
		t.mu.Unlock()
		return nil
	}
	was := t.states[ref]
	state := ""
	progressOnly := false
	if c.Card != nil {
		state = c.Card.State
		progressOnly = state == "running" && (was == "running" || was == "approved")
	}
	t.keepLocked(ref, text, state)
	if state != was || c.Card == nil {
		t.answerLocked()
	}
	t.mu.Unlock()
	switch {
	case progressOnly:
		return t.print(t.progressLine(c.Card))
	case c.Card != nil && c.Card.State == "pending":
		// Still waiting, but changed (a new preview): the whole card
		// again, since a decision rests on it.
		return t.print(text)
	case c.Card != nil:
		// The whole card is on the screen above: print what changed.
		return t.print(t.renderChange(c))
	}
	return t.print(text)
}

// Notify prints a notice addressed to one person. Everyone at the terminal
// can read it; it is marked as meant for user only.
func (t *Terminal) Notify(_ context.Context, n adapters.Notice) error {
	t.mu.Lock()
	t.answerLocked()
	t.mu.Unlock()
	return t.print(t.paint(dim, "(to "+n.User.Display()+" only)") + " " + n.Text)
}

func (t *Terminal) render(c adapters.Content) string {
	var parts []string
	if c.Text != "" {
		parts = append(parts, renderText(c.Text, t.paint))
	}
	if c.Card != nil {
		parts = append(parts, renderCard(*c.Card, t.paint))
	}
	return strings.Join(parts, "\n")
}

// renderChange is the short form of an updated card: its head, the
// operation, the state, the output and any decision still open.
func (t *Terminal) renderChange(c adapters.Content) string {
	short := *c.Card
	// The title stays: once something happened, it says what (ran,
	// failed, stopped, cancelled, expired, replaced).
	short.Requester, short.Conversation = "", ""
	short.Reasons, short.LLMLevel, short.Preview = nil, "", nil
	text := renderCard(short, t.paint)
	if c.Text != "" {
		text = renderText(c.Text, t.paint) + "\n" + text
	}
	return text
}

func (t *Terminal) progressLine(c *adapters.Card) string {
	last := lastLine(c.Output)
	s := "  [" + c.ApprovalID + "] " + c.StateLine
	if last != "" {
		s += ": " + last
	}
	return t.paint(dim, s)
}

// print writes text as whole lines, clearing and redrawing the prompt
// around it on a terminal.
func (t *Terminal) print(text string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if t.ed != nil {
		// The editor clears the prompt and the half-typed line, writes,
		// and draws them again.
		if _, err := t.ed.t.Write([]byte(cutToScreen(text, t.ed.rows, t.spilled.keep))); err != nil {
			return fmt.Errorf("write to terminal: %w", err)
		}
		return nil
	}
	var b strings.Builder
	if t.prompt && t.prompted {
		b.WriteString("\r\x1b[K")
	}
	b.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		b.WriteByte('\n')
	}
	if t.prompt && t.prompted {
		b.WriteString(t.promptText())
	}
	if _, err := io.WriteString(t.out, b.String()); err != nil {
		return fmt.Errorf("write to terminal: %w", err)
	}
	return nil
}

func (t *Terminal) promptText() string { return t.paint(bold, t.user+"> ") }

func (t *Terminal) showPrompt() {
	if !t.prompt {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ed != nil {
		return // the editor draws it
	}
	t.prompted = true
	_, _ = io.WriteString(t.out, t.promptText())
}

func (t *Terminal) endPrompt() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.prompt && t.prompted {
		_, _ = io.WriteString(t.out, "\n")
	}
	t.prompted = false
}

// lastLine is the last line of s, cut to fit a progress line.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	const limit = 120 // bytes
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut-- // never split a character
		}
		s = s[:cut] + "…"
	}
	return s
}
