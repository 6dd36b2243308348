package redact

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// valueTail is how gitleaks' assignment rules end: after the value, a
// quote, a blank or a semicolon, an escaped newline, or the end of the
// text.
const valueTail = `(?:[\x60'"\s;]|\\[nr]|$)`

// reach returns, for the expression src of an assignment rule without its
// name prefix (a keyword, an assignment, a value group, valueTail), how
// many bytes at most a match spends before its value group; 0 when src is
// not so made. Such a match ends at the latest with the first newline at
// or after that many bytes from its start: its value holds no newline, and
// valueTail takes one byte of blank at most. So an anchored match can be
// looked for in the text up to that newline (included) instead of in all
// the rest of the text: the same match, and a text short enough for
// regexp's backtracker instead of its NFA. The end of the text that the
// cut makes is never reached, so its $ changes nothing.
func reach(src string) int {
	if !strings.HasSuffix(src, valueTail) {
		return 0
	}
	re, err := syntax.Parse(strings.TrimSuffix(src, valueTail), syntax.Perl)
	if err != nil || re.Op != syntax.OpConcat {
		return 0
	}
	subs := re.Sub
	n := len(subs)
	if subs[n-1].Op != syntax.OpCapture || matchesBlank(subs[n-1]) {
		return 0
	}
	before := 0
	for _, sub := range subs[:n-1] {
		w := maxWidth(sub)
		if w < 0 {
			return 0
		}
		before += w
	}
	return before
}

// maxWidth is the most bytes a match of re can take (-1: no bound) in a
// text without the runes of foldedWord: an ASCII rune takes one byte (its
// case folds are ASCII or those runes), any other four.
func maxWidth(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0
	case syntax.OpLiteral:
		w := 0
		for _, c := range re.Rune {
			w += runeWidth(c, c)
		}
		return w
	case syntax.OpCharClass:
		w := 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo == hi && strings.ContainsRune(foldedWord, lo) {
				continue // never in the text the fast way reads
			}
			w = max(w, runeWidth(lo, hi))
		}
		return w
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 4
	case syntax.OpCapture, syntax.OpQuest:
		return maxWidth(re.Sub[0])
	case syntax.OpRepeat:
		w := maxWidth(re.Sub[0])
		if re.Max < 0 || w < 0 {
			return -1
		}
		return re.Max * w
	case syntax.OpConcat, syntax.OpAlternate:
		total := 0
		for _, sub := range re.Sub {
			w := maxWidth(sub)
			if w < 0 {
				return -1
			}
			if re.Op == syntax.OpConcat {
				total += w
			} else {
				total = max(total, w)
			}
		}
		return total
	}
	return -1 // star, plus, and anything newer
}

// runeWidth is the most bytes a rune in [lo, hi] takes: one for ASCII,
// else four.
func runeWidth(lo, hi rune) int {
	if hi < utf8.RuneSelf {
		return 1
	}
	return 4
}

// blanks are the bytes \s matches.
const blanks = " \t\n\f\r"

// matchesBlank reports whether a match of re can hold a blank (\s).
func matchesBlank(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return strings.ContainsAny(string(re.Rune), blanks)
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for _, b := range blanks {
				if re.Rune[i] <= b && b <= re.Rune[i+1] {
					return true
				}
			}
		}
		return false
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	}
	for _, sub := range re.Sub {
		if matchesBlank(sub) {
			return true
		}
	}
	return false
}

// cut is where an anchored search from k in s may stop when a match
// spends at most reach bytes before its value (see reach): past the first
// blank at or after k+reach, or the end of s.
func cut(s string, k, reach int) int {
	if reach <= 0 {
		return len(s)
	}
	for i := k + reach; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\f', '\r':
			return i + 1
		}
	}
	return len(s)
}
