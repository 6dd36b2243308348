package terminal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/countersign/countersign/adapters"
)

// MaxLine is the longest input line handed to the bot, in bytes (1 MiB). A
// longer line is refused with a message that says so, and reading goes on
// with the next line: no line, however long, stops the session.
const MaxLine = 1 << 20

// maxHeld is how many read lines may wait in the terminal for the bot to
// answer the ones before; past it the terminal stops reading, so that a
// pipe holds the rest (back-pressure reaches the writer).
const maxHeld = 64

// inLine is one line of input.
type inLine struct {
	text string
	// over is the length of a line longer than MaxLine; its text is
	// dropped and it is refused.
	over int
	// refused says why a line cannot be sent whole; its text is dropped.
	refused string
	// long is set for a line longer than the prompt's editor shows.
	long bool
}

// sendable reports whether l is a line to act on (not over the limit and
// not refused).
func (l inLine) sendable() bool { return l.over == 0 && l.refused == "" }

// readLines reads r line by line into out until the end of input, a read
// error, or stop. A line longer than limit is sent with its length only.
// It returns nil at the end of input.
func readLines(r io.Reader, limit int, out chan<- inLine, stop <-chan struct{}) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		var buf []byte
		size := 0
		var err error
		for {
			var frag []byte
			frag, err = br.ReadSlice('\n')
			size += len(frag)
			if size <= limit+2 { // room for "\r\n"
				buf = append(buf, frag...)
			} else {
				buf = nil
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if size == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		content := size
		if err == nil {
			content-- // the newline
		}
		var l inLine
		if text := strings.TrimSuffix(strings.TrimSuffix(string(buf), "\n"), "\r"); buf != nil && len(text) <= limit {
			l.text = text
		} else {
			l.over = content
		}
		select {
		case out <- l:
		case <-stop:
			return nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// editLines reads lines from the line editor into out, as readLines does.
func editLines(ed *editor, limit int, out chan<- inLine, stop <-chan struct{}) error {
	for {
		l, err := ed.readLine(limit)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		select {
		case out <- l:
		case <-stop:
			return nil
		}
	}
}

// startEditor starts the line editor when input and output are both
// terminals; nil otherwise, or when raw mode cannot be set.
func (t *Terminal) startEditor() *editor {
	in, okIn := t.in.(*os.File)
	out, okOut := t.out.(*os.File)
	if !t.prompt || !okIn || !okOut {
		return nil
	}
	ed, err := newEditor(in, out, t.promptText(), t.interrupted)
	if err != nil {
		return nil
	}
	t.mu.Lock()
	t.ed = ed
	t.mu.Unlock()
	return ed
}

func (t *Terminal) stopEditor() {
	t.mu.Lock()
	ed := t.ed
	t.ed = nil
	ed.restore()
	if t.spilled.f != nil {
		_ = t.spilled.f.Close() // the file stays, as the notes said
		t.spilled.f, t.spilled.line = nil, 0
	}
	_, _ = io.WriteString(t.out, "\n") // off the prompt line the editor left
	t.mu.Unlock()
}

// interrupted is told of a Ctrl-C at the prompt: the first clears the
// line, the second in a row quits.
func (t *Terminal) interrupted(quit bool) {
	if quit {
		if t.leaving != nil {
			t.leaving()
		}
		_ = t.print(t.paint(dim, "Leaving. Work in flight finishes first; Ctrl-C again stops it at once."))
		return
	}
	_ = t.print(t.paint(dim, interruptHint))
}

// Run reads lines and hands them to h in order until the end of input
// ("/quit" ends it too) or until ctx is done. A read blocked on a terminal
// cannot be interrupted; after cancellation that reader goroutine ends with
// the process.
//
// With Options.Pace set, a message is handed over only once the bot has
// answered the one before (see Options.Pace); lines read meanwhile wait
// here, in order, and reading stops while maxHeld of them wait.
func (t *Terminal) Run(ctx context.Context, h adapters.Handler) error {
	lines := make(chan inLine)
	readErr := make(chan error, 1)
	stop := make(chan struct{})
	defer close(stop)
	if ed := t.startEditor(); ed != nil {
		defer t.stopEditor()
		go func() {
			readErr <- editLines(ed, MaxLine, lines, stop)
			close(lines)
		}()
	} else {
		go func() {
			readErr <- readLines(t.in, MaxLine, lines, stop)
			close(lines)
		}()
	}

	t.showPrompt()
	var held []inLine // lines read and not yet handled, oldest first
	eof := false
	for {
		for len(held) > 0 && !t.holdBack(held[0]) {
			l := held[0]
			held = held[1:]
			if quit := t.line(ctx, h, l); quit {
				t.endPrompt()
				return nil
			}
			if len(held) == 0 && !eof {
				t.showPrompt()
			}
		}
		if eof && len(held) == 0 {
			if err := <-readErr; err != nil {
				return fmt.Errorf("read terminal input: %w", err)
			}
			t.endPrompt()
			return nil
		}
		var in <-chan inLine
		if !eof && len(held) < maxHeld {
			in = lines
		}
		var paced <-chan time.Time
		var timer *time.Timer
		if len(held) > 0 {
			timer = time.NewTimer(t.holdLeft())
			paced = timer.C
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case l, ok := <-in:
			switch {
			case !ok:
				eof = true
			case t.prompt && urgent(l) && !slices.ContainsFunc(held, isCommand):
				// A decision or a stop typed at the prompt goes ahead of
				// messages still waiting for their turn: the bot answers
				// those at once, even while a turn is in flight.
				t.handle(ctx, h, l.text, false)
				t.showPrompt()
			default:
				held = append(held, l)
			}
		case <-t.answered:
		case <-paced:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// isEvent reports whether a line becomes an event for the bot (and not a
// terminal command, a blank line or a refusal).
func isEvent(l inLine) bool {
	s := strings.TrimSpace(l.text)
	return l.sendable() && s != "" && !strings.HasPrefix(s, "/")
}

// isCommand reports whether a line is a terminal command ("/as bob"),
// which changes how the lines after it are read.
func isCommand(l inLine) bool {
	return l.sendable() && strings.HasPrefix(strings.TrimSpace(l.text), "/")
}

// urgent reports whether a line is one the bot answers at once, out of
// the conversation's turn: a decision on a card, !stop, !cancel.
func urgent(l inLine) bool {
	if !isEvent(l) {
		return false
	}
	s := strings.TrimSpace(l.text)
	if _, ok := adapters.ParseDecision(s); ok {
		return true
	}
	verb, _, _ := strings.Cut(s, " ")
	switch strings.ToLower(verb) {
	case "!stop", "!cancel":
		return true
	}
	return false
}

// holdBack reports whether l must wait for the bot to answer the message
// handed over before it. Piped input is handled strictly in order, so that
// the output reads as a transcript. At the prompt nothing waits: a person
// types one line at a time, and !pending must answer while a long !run or a
// model turn is in flight (the bot keeps each conversation's order itself).
func (t *Terminal) holdBack(l inLine) bool {
	if t.pace <= 0 || t.prompt {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.awaiting && time.Now().Before(t.awaitUntil)
}

// holdLeft is how long the line at the head may still be held back.
func (t *Terminal) holdLeft() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return max(time.Until(t.awaitUntil), time.Millisecond)
}

// handedOver records that an event went to the bot: the next one waits for
// an answer, at most Pace.
func (t *Terminal) handedOver() {
	if t.pace <= 0 {
		return
	}
	t.mu.Lock()
	t.awaiting = true
	t.awaitUntil = time.Now().Add(t.pace)
	t.mu.Unlock()
	select {
	case <-t.answered: // an answer to an earlier line, already counted
	default:
	}
}

// answerLocked records that the bot answered (posted, noticed, or changed a
// card), releasing the next line. t.mu is held.
func (t *Terminal) answerLocked() {
	if !t.awaiting {
		return
	}
	t.awaiting = false
	select {
	case t.answered <- struct{}{}:
	default:
	}
}

// line handles one input line and reports whether the session should end.
func (t *Terminal) line(ctx context.Context, h adapters.Handler, l inLine) (quit bool) {
	t.mu.Lock()
	t.prompted = false
	t.mu.Unlock()
	if l.over > 0 {
		t.print(fmt.Sprintf("That line was %s, longer than the %s a line may be; it was not sent. "+
			"Put long text in a file under the tools root and refer to it (!file read <path>).",
			byteSize(l.over), byteSize(MaxLine)))
		return false
	}
	if l.refused != "" {
		t.print(l.refused)
		return false
	}
	line := strings.TrimSpace(l.text)
	if line == "" {
		return false
	}
	if l.long {
		t.print(t.paint(dim, fmt.Sprintf("(all %s of that line were sent; the prompt shows only its first %d characters)", byteSize(len(l.text)), editorLimit)))
	}
	if strings.HasPrefix(line, "/") {
		return t.command(line)
	}
	t.handle(ctx, h, line, true)
	return false
}

// handle hands a line to the bot as an event; a paced one holds the next
// message back until it is answered.
func (t *Terminal) handle(ctx context.Context, h adapters.Handler, line string, paced bool) {
	line = strings.TrimSpace(line)
	t.mu.Lock()
	t.prompted = false
	e := adapters.Event{
		ID:    t.ids.Next(),
		User:  adapters.User{ID: t.user, Name: t.user},
		Place: adapters.Place{Channel: Channel, Thread: Thread},
	}
	t.mu.Unlock()
	e.Text = line
	if d, ok := adapters.ParseDecision(line); ok {
		e.Decision = &d
	}
	if paced {
		t.handedOver()
	}
	h.Handle(ctx, e)
}

// byteSize says n bytes in words: "512 bytes", "4 KiB", "1.5 MiB".
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<20)), ".0") + " MiB"
	case n >= 1<<10:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<10)), ".0") + " KiB"
	}
	return fmt.Sprintf("%d bytes", n)
}
