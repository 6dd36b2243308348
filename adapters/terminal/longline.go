package terminal

import (
	"bytes"
	"unicode/utf8"
)

// This file keeps long lines whole at the prompt. golang.org/x/term's line
// editor holds at most 4,096 characters of a typed line and drops every key
// past that without a word; a paste arrives as typed keys (the prompt does
// not turn bracketed paste on), so a pasted 6,000-character command would
// reach the bot as its first 4,096 characters: another command. The keeper sits
// between the keyboard and the editor, counts what the editor holds, and
// keeps what comes past editorLimit itself, to join it to the editor's
// line when the line ends. A line whose cursor was moved (arrows, Home)
// cannot be joined safely, and is refused with a message once it grows
// past the limit: nothing is ever cut.

// editorLimit is how many characters of a line the editor is given; the
// rest of a longer line is kept aside. It is below x/term's 4,096, so a
// count that is off by a few never lets the editor drop a key.
const editorLimit = 4000

// Sequences of a bracketed paste.
var (
	pasteStart = []byte("\x1b[200~")
	pasteEnd   = []byte("\x1b[201~")
)

// keeper follows the line being typed, as the editor sees it.
type keeper struct {
	count  int    // characters the editor holds on this line (a backspace takes one)
	moved  bool   // an editing key was used: the cursor may not be at the end
	paste  bool   // inside a bracketed paste
	seq    []byte // an escape sequence not yet complete
	lastCR bool   // the last byte ended a line with \r
	long   *longLine
	line   int        // lines ended so far
	ended  []longLine // long lines ended, for the editor's reader
}

// longLine is the part of a line the editor was not given.
type longLine struct {
	line    int    // which line (1 is the first)
	rest    []byte // what came past editorLimit, up to MaxLine
	size    int    // its length, kept or not
	refused string // why the line cannot be sent whole, when it cannot
}

// reset forgets the line being typed (Ctrl-C cleared it).
func (k *keeper) reset() {
	k.count, k.moved, k.long, k.seq = 0, false, nil, nil
}

// feed takes one byte from the keyboard and returns what the editor is to
// be given for it (nothing while the byte is kept aside, or is part of an
// escape sequence not yet complete).
func (k *keeper) feed(b byte) []byte {
	if k.seq != nil || b == 0x1b {
		k.seq = append(k.seq, b)
		if !k.complete() {
			return nil
		}
		s := k.seq
		k.seq = nil
		switch {
		case bytes.Equal(s, pasteStart):
			k.paste = true
			return s
		case bytes.Equal(s, pasteEnd):
			k.paste = false
			return s
		case k.paste:
			return k.content(s) // pasted bytes, escapes included
		case k.long != nil:
			k.refuse()
			return nil
		}
		k.moved = true
		return s
	}
	if b == '\r' || b == '\n' {
		if b == '\n' && k.lastCR {
			// \r\n is one line end; the editor would see two when they
			// came in different reads.
			k.lastCR = false
			return nil
		}
		k.lastCR = b == '\r'
		k.end()
		return []byte{b}
	}
	k.lastCR = false
	if !k.paste {
		switch {
		case b == 0x7f || b == 0x08: // backspace
			if k.long != nil {
				if k.long.refused == "" && len(k.long.rest) > 0 {
					_, n := utf8.DecodeLastRune(k.long.rest)
					k.long.rest = k.long.rest[:len(k.long.rest)-n]
					k.long.size -= n
				}
				return nil
			}
			k.count = max(k.count-1, 0)
			return []byte{b}
		case b == '\t':
			return []byte{b}
		case b < 0x20:
			if k.long != nil {
				k.refuse()
				return nil
			}
			k.moved = true
			return []byte{b}
		}
	}
	return k.content([]byte{b})
}

// content passes characters of the line to the editor while it has room,
// and keeps the rest aside.
func (k *keeper) content(bs []byte) []byte {
	var out []byte
	for _, b := range bs {
		start := b&0xc0 != 0x80 // not a continuation byte
		if k.long == nil && start && k.count >= editorLimit {
			k.long = &longLine{}
			if k.moved {
				k.refuse()
			}
		}
		if k.long == nil {
			if start {
				k.count++
			}
			out = append(out, b)
			continue
		}
		k.long.size++
		if k.long.refused == "" && len(k.long.rest) < MaxLine {
			k.long.rest = append(k.long.rest, b)
		}
	}
	return out
}

func (k *keeper) refuse() {
	k.long.refused = "That line is longer than the 4,000 characters the prompt's editor holds, and the cursor was moved in it (arrows, Home or another editing key), so it cannot be put together exactly; it was not sent. Paste or type it again without editing, or pipe it in: echo '…' | countersign."
	k.long.rest = nil
}

// end records the end of a line.
func (k *keeper) end() {
	k.line++
	if k.long != nil {
		k.long.line = k.line
		k.ended = append(k.ended, *k.long)
	}
	k.count, k.moved, k.long = 0, false, nil
}

// complete reports whether k.seq is a whole escape sequence.
func (k *keeper) complete() bool {
	s := k.seq
	if k.paste {
		// Inside a paste only its end is a sequence: anything else that
		// starts with ESC is pasted text.
		return len(s) == len(pasteEnd) || !bytes.HasPrefix(pasteEnd, s)
	}
	switch {
	case len(s) < 2:
		return false
	case len(s) >= 16:
		return true
	case s[1] == '[':
		last := s[len(s)-1]
		return len(s) >= 3 && last >= 0x40 && last <= 0x7e
	case s[1] == 'O':
		return len(s) >= 3
	}
	return true // ESC and one key: Alt+key
}

// take returns the long line numbered line, when that line was long, and
// forgets the lines before it.
func (k *keeper) take(line int) (longLine, bool) {
	for len(k.ended) > 0 && k.ended[0].line < line {
		k.ended = k.ended[1:]
	}
	if len(k.ended) > 0 && k.ended[0].line == line {
		l := k.ended[0]
		k.ended = k.ended[1:]
		return l, true
	}
	return longLine{}, false
}
