package terminal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"
)

// This file is the line editor used when standard input and output are
// both terminals: golang.org/x/term's Terminal, in raw mode, gives
// history (up and down arrows), cursor movement and editing, and
// bracketed paste (the kernel's 4 KiB canonical-mode limit does not apply
// in raw mode). x/term holds at most 4,096 characters of a line; the
// keeper (longline.go) keeps the rest of a longer one, so lines up to
// MaxLine arrive whole. Output written through it clears the prompt and
// the half-typed line, and draws them again below.

// editor is the line editor on a terminal.
type editor struct {
	fd    int
	saved *term.State
	t     *term.Terminal
	keys  *interrupts
	rows  int // the screen's height, when known
	lines int // lines read so far
}

// newEditor puts in (a terminal) in raw mode and returns an editor that
// writes to out. restore must be called to leave raw mode.
func newEditor(in, out *os.File, prompt string, onInterrupt func(quit bool)) (*editor, error) {
	fd := int(in.Fd())
	saved, err := term.MakeRaw(fd)
	if err != nil {
		return nil, err
	}
	keys := &interrupts{r: in, on: onInterrupt}
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{keys, out}, prompt)
	rows := 0
	if w, h, err := term.GetSize(int(out.Fd())); err == nil {
		_ = t.SetSize(w, h)
		rows = h
	}
	return &editor{fd: fd, saved: saved, t: t, keys: keys, rows: rows}, nil
}

// readLine reads one line, whole: the editor's part joined to what the
// keeper kept past it, or the line's length when it is over limit, or why
// it cannot be sent. io.EOF at Ctrl-D on an empty line, or at the second
// Ctrl-C in a row.
func (e *editor) readLine(limit int) (inLine, error) {
	line, err := e.t.ReadLine()
	if errors.Is(err, term.ErrPasteIndicator) {
		err = nil // a pasted line is a line like any other
	}
	if err != nil {
		return inLine{}, err
	}
	e.lines++
	e.keys.mu.Lock()
	long, ok := e.keys.keep.take(e.lines)
	e.keys.mu.Unlock()
	switch {
	case !ok && len(line) > limit:
		return inLine{over: len(line)}, nil
	case !ok:
		return inLine{text: line}, nil
	case long.refused != "":
		return inLine{refused: long.refused}, nil
	case len(line)+long.size > limit:
		return inLine{over: len(line) + long.size}, nil
	}
	return inLine{text: line + string(long.rest), long: true}, nil
}

func (e *editor) restore() { _ = term.Restore(e.fd, e.saved) }

// interrupts reads keys for x/term, whose ReadLine ends the input at
// Ctrl-C, and turns Ctrl-C into what people expect at a prompt: the first
// clears the line (Ctrl-E, Ctrl-U) and calls on(false); a second one in a
// row, with no other key between, also ends the input (Ctrl-D on the now
// empty line) and calls on(true).
type interrupts struct {
	r  io.Reader
	on func(quit bool)

	mu      sync.Mutex
	pending []byte
	armed   bool   // the last key was a Ctrl-C
	keep    keeper // what the editor holds of the line, and the rest
}

const (
	ctrlC = 3
	ctrlD = 4
	ctrlE = 5
	ctrlU = 21
)

func (k *interrupts) Read(p []byte) (int, error) {
	k.mu.Lock()
	if len(k.pending) > 0 {
		n := copy(p, k.pending)
		k.pending = k.pending[n:]
		k.mu.Unlock()
		return n, nil
	}
	k.mu.Unlock()
	buf := make([]byte, len(p))
	n, err := k.r.Read(buf)
	var out []byte
	var events []bool
	k.mu.Lock()
	for _, b := range buf[:n] {
		if b != ctrlC {
			k.armed = false
			out = append(out, k.keep.feed(b)...)
			continue
		}
		k.keep.reset()
		out = append(out, ctrlE, ctrlU)
		if k.armed {
			out = append(out, ctrlD)
			events = append(events, true)
		} else {
			events = append(events, false)
		}
		k.armed = !k.armed
	}
	m := copy(p, out)
	k.pending = append(k.pending, out[m:]...)
	k.mu.Unlock()
	for _, quit := range events {
		k.on(quit)
	}
	return m, err
}

// interruptHint is said at the first Ctrl-C.
const interruptHint = "(line cleared; Ctrl-C again to quit, /help for the commands)"

// cutToScreen cuts text longer than rows lines on the screen: the first
// and the last lines stay, and a note says how many are not shown and
// where, when the whole text was kept (where is "" when it could not be).
// rows <= 0 means no cut.
func cutToScreen(text string, rows int, where func(whole string) string) string {
	if rows <= 0 {
		return text
	}
	body := strings.TrimSuffix(text, "\n")
	lines := strings.Split(body, "\n")
	limit := max(rows-2, 6) // leave room for the prompt
	if len(lines) <= limit {
		return text
	}
	head := (limit - 1) / 2
	tail := limit - 1 - head
	hidden := len(lines) - head - tail
	note := fmt.Sprintf("  … %d lines not shown: longer than the screen …", hidden)
	if w := where(text); w != "" {
		note = fmt.Sprintf("  … %d lines not shown: longer than the screen; the whole text is in %s …", hidden, w)
	}
	out := append(append(append([]string{}, lines[:head]...), note), lines[len(lines)-tail:]...)
	return strings.Join(out, "\n") + "\n"
}

// spill keeps the whole of the texts cut to the screen in one private file
// per session, and says where each starts.
type spill struct {
	f    *os.File
	line int // lines written so far
	err  error
}

// keep appends text to the session's file (made on first use, readable by
// its owner only) and returns "<path>, from line <n>"; "" when it cannot.
func (s *spill) keep(text string) string {
	if s.err != nil {
		return ""
	}
	if s.f == nil {
		s.f, s.err = os.CreateTemp("", "countersign-output-*.txt")
		if s.err != nil {
			return ""
		}
	}
	start := s.line + 1
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if _, err := io.WriteString(s.f, text); err != nil {
		s.err = err
		return ""
	}
	s.line += strings.Count(text, "\n")
	return fmt.Sprintf("%s, from line %d", s.f.Name(), start)
}
