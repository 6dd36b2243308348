package shell

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// arg is one word of a command line with its quotes removed.
type arg struct {
	// text is the word as the shell would pass it, when it is literal.
	// Expansions whose value is unknown keep their source form ("$X",
	// "$(…)"), so reasons can show them. $HOME and ${HOME} become "~".
	text string
	// dynamic is set when the word holds an expansion whose value cannot be
	// known here (a variable, a command substitution, arithmetic...).
	dynamic bool
	// glob is set when an unquoted *, ? or [ makes the word a pattern.
	glob bool
	// split is set when the word is one unquoted parameter ($X, ${X}),
	// which bash splits into several words at run time.
	split bool
}

// lit reports the word's text when it is fully known.
func (w arg) lit() (string, bool) { return w.text, !w.dynamic && !w.glob }

// isOption reports whether a known word looks like an option: -x, --name.
func (w arg) isOption() bool { return !w.dynamic && len(w.text) > 1 && w.text[0] == '-' }

// maxBraceWords bounds brace expansion ({1..1000000} stays one pattern).
const maxBraceWords = 64

// words turns parsed words into args, expanding braces ({a,b}) so that
// rm -rf /{etc,usr} is seen as two targets.
func words(ws []*syntax.Word, dst []arg) []arg {
	for _, w := range ws {
		if hasBrace(w) {
			dst = braceWords(w, dst)
			continue
		}
		dst = append(dst, word(w))
	}
	return dst
}

// braceWords appends the words a word with a brace expands to. It is apart
// from words so that the loop over BracesSeq, whose body captures dst, does
// not move every call's list to the heap.
func braceWords(w *syntax.Word, dst []arg) []arg {
	// SplitBraces rewrites the word it is given: hand it a copy, so the
	// tree that syntax.Walk goes on to visit stays as parsed.
	cp := *w
	if !syntax.SplitBraces(&cp) {
		return append(dst, word(w))
	}
	n := 0
	for bw, err := range expand.BracesSeq(nil, &cp) {
		if err != nil || n == maxBraceWords {
			dst = append(dst, arg{text: "{…}", dynamic: true})
			break
		}
		dst = append(dst, word(bw))
		n++
	}
	return dst
}

func hasBrace(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// word removes quotes from one word.
func word(w *syntax.Word) arg {
	if len(w.Parts) == 1 {
		// Fast paths: a plain unquoted word with nothing to undo, a
		// single-quoted word, a double-quoted word with no backslash and
		// no expansion. Each is its own text, as the loop below would
		// build it.
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			if plainLit(p.Value) {
				return arg{text: p.Value}
			}
		case *syntax.SglQuoted:
			if !p.Dollar {
				return arg{text: p.Value}
			}
		case *syntax.DblQuoted:
			if len(p.Parts) == 1 {
				if l, ok := p.Parts[0].(*syntax.Lit); ok && strings.IndexByte(l.Value, '\\') < 0 {
					return arg{text: l.Value}
				}
			}
		}
	}
	var b strings.Builder
	var a arg
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				// Tilde expansion: ~ and ~/x are the home directory.
				b.WriteByte('~')
				v = v[1:]
			}
			unescape(&b, v, &a, false)
		case *syntax.SglQuoted:
			if p.Dollar {
				ansiC(&b, p.Value)
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					unescape(&b, l.Value, &a, true)
					continue
				}
				expansion(&b, q, &a, i == 0 && b.Len() == 0)
			}
		default:
			expansion(&b, p, &a, i == 0)
		}
	}
	a.text = b.String()
	if len(w.Parts) == 1 {
		if p, ok := w.Parts[0].(*syntax.ParamExp); ok && isPlainParam(p) {
			a.split = true
		}
	}
	return a
}

// litSpecial marks the bytes that an unquoted literal must be rewritten
// for: escapes, glob characters and a tilde.
var litSpecial = [256]bool{'\\': true, '*': true, '?': true, '[': true, '~': true}

// plainLit reports whether an unquoted literal is its own text.
func plainLit(s string) bool {
	for i := 0; i < len(s); i++ {
		if litSpecial[s[i]] {
			return false
		}
	}
	return true
}

// expansion writes the source form of an expansion and marks the word
// dynamic, except $HOME at the start of a word, which is the home directory.
func expansion(b *strings.Builder, p syntax.WordPart, a *arg, first bool) {
	switch p := p.(type) {
	case *syntax.ParamExp:
		if p.Param != nil && p.Param.Value == "HOME" && first && homeParam(p) {
			b.WriteByte('~') // $HOME, ${HOME}, ${HOME:?}, ${HOME:-/x}: the home directory
			return
		}
		if p.Param != nil && isPlainParam(p) {
			if p.Short {
				b.WriteString("$" + p.Param.Value)
			} else {
				b.WriteString("${" + p.Param.Value + "}")
			}
		} else {
			b.WriteString("${…}")
		}
	case *syntax.CmdSubst:
		b.WriteString("$(…)")
	case *syntax.ArithmExp:
		b.WriteString("$((…))")
	case *syntax.ProcSubst:
		b.WriteString("<(…)")
	case *syntax.ExtGlob:
		b.WriteString(p.Op.String() + p.Pattern.Value + ")")
		a.glob = true
		return
	default:
		b.WriteString("…")
	}
	a.dynamic = true
}

// homeParam reports whether a $HOME expansion yields the home directory
// whenever it is set: plain, or with a default, an error or an assignment.
func homeParam(p *syntax.ParamExp) bool {
	if isPlainParam(p) {
		return true
	}
	if p.Exp == nil || p.Excl || p.Length || p.Index != nil || p.Slice != nil || p.Repl != nil {
		return false
	}
	switch p.Exp.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.ErrorUnset, syntax.ErrorUnsetOrNull,
		syntax.AssignUnset, syntax.AssignUnsetOrNull:
		return true
	}
	return false
}

func isPlainParam(p *syntax.ParamExp) bool {
	return p.Param != nil && !p.Excl && !p.Length && !p.Width && p.Index == nil &&
		p.Slice == nil && p.Repl == nil && p.Names == 0 && p.Exp == nil
}

// unescape copies s without its backslashes. Outside double quotes every
// backslash escapes the next byte; inside them only $ ` " \ and newline.
// Unquoted glob characters mark the word as a pattern.
func unescape(b *strings.Builder, s string, a *arg, dq bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			n := s[i+1]
			if !dq || strings.IndexByte("$`\"\\\n", n) >= 0 {
				i++
				if n != '\n' {
					b.WriteByte(n)
				}
				continue
			}
		}
		if !dq && (c == '*' || c == '?' || c == '[') {
			a.glob = true
		}
		b.WriteByte(c)
	}
}

// ansiC decodes the body of a $'...' string.
func ansiC(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			max := 2
			if e == 'u' {
				max = 4
			} else if e == 'U' {
				max = 8
			}
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else if utf8.ValidRune(rune(n)) {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte(e)
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
