package adapters

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Visible returns s with every character that a screen would not show as
// itself written as an escape, so that what a person reads on a card is what
// runs: control characters (ANSI escape sequences, carriage returns,
// backspaces) as \xNN, and invisible or reordering characters (Unicode bidi
// overrides such as U+202E, zero-width spaces and joiners, other format
// characters, line and paragraph separators, spaces other than the plain
// one) as \uNNNN; a byte that is not UTF-8 as \xNN. Newlines and tabs stay
// as they are: they show as white space, which is what they are to a shell
// or a SQL parser. Every adapter renders Card.Operation through Visible.
//
// Visible reports changed when it escaped anything, so the card can say
// that what it shows is escaped.
func Visible(s string) (out string, changed bool) {
	if !needsEscape(s) {
		return s, false
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case hidden(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String(), true
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || hidden(r) {
			return true
		}
		i += size
	}
	return false
}

// hidden reports whether r does not show as itself on a screen.
func hidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
		return true
	case r == ' ':
		return false
	case r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0 || r == 0x2800:
		return true // Hangul fillers and the blank braille pattern: letters that show as nothing
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zs, r) ||
		unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) ||
		unicode.Is(unicode.Variation_Selector, r)
}
