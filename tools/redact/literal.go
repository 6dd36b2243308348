package redact

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
)

// wordStart is how many of gitleaks' rules start: a word boundary, then a
// literal (dapi…, ey….ey…, API-…, hvs.…). Go's regexp finds no literal
// prefix behind the boundary and runs its NFA over every byte of a
// window; atKeywords tries the rest of the expression, anchored, only
// where one of the rule's keywords starts at a word boundary.
const wordStart = `\b`

// keywordStart is, for a rule whose every match starts at a word boundary
// with one of its keywords (checked on the expression's syntax), its
// expression without the boundary, anchored. Built on first use.
type keywordStart struct {
	once sync.Once
	rest *regexp.Regexp // nil: the rule is not of that shape
}

func (k *keywordStart) get(r *rule) *regexp.Regexp {
	k.once.Do(func() {
		if !strings.HasPrefix(r.regex, wordStart) {
			return
		}
		src := r.regex[len(wordStart):]
		re, err := syntax.Parse(src, syntax.Perl)
		if err != nil {
			return
		}
		lits, ok := leading(re)
		if !ok {
			return
		}
		for _, l := range lits {
			if !hasAnyPrefix(l, r.keywords) {
				return
			}
		}
		k.rest = regexp.MustCompile(`^(?:` + src + `)`)
	})
	return k.rest
}

// leading returns the literals one of which every match of re starts with,
// in lower case, or false when re is not made so (or a literal is matched
// without regard to case and holds k or s, which fold to non-ASCII runes a
// lower-case byte search does not find).
func leading(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		l := string(re.Rune)
		if re.Flags&syntax.FoldCase != 0 && strings.ContainsAny(strings.ToLower(l), "ks") {
			return nil, false
		}
		for _, c := range l {
			if c >= 0x80 {
				return nil, false
			}
		}
		return []string{strings.ToLower(l)}, true
	case syntax.OpCapture:
		return leading(re.Sub[0])
	case syntax.OpConcat:
		if len(re.Sub) == 0 {
			return nil, false
		}
		return leading(re.Sub[0])
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			l, ok := leading(sub)
			if !ok {
				return nil, false
			}
			out = append(out, l...)
		}
		return out, true
	}
	return nil, false
}

// atKeywords returns the matches of the rule's expression in raw, lower
// its ASCII lower case, as FindAllStringIndex would: every match starts at
// a keyword with a word boundary before it, so each such place, in text
// order and after the last match, is tried with rest.
func atKeywords(rest *regexp.Regexp, raw, lower string, keywords []string) [][]int {
	var starts []int
	for _, kw := range keywords {
		for i := 0; ; {
			j := strings.Index(lower[i:], kw)
			if j < 0 {
				break
			}
			starts = append(starts, i+j)
			i += j + 1
		}
	}
	if len(starts) == 0 {
		return nil
	}
	slices.Sort(starts)
	var out [][]int
	pos := 0
	for _, k := range slices.Compact(starts) {
		if k < pos || !boundary(raw, k) {
			continue
		}
		if m := rest.FindStringIndex(raw[k:]); m != nil {
			out = append(out, []int{k, k + m[1]})
			pos = k + m[1]
		}
	}
	return out
}

// boundary reports whether \b holds at i in s (ASCII word characters).
func boundary(s string, i int) bool {
	before := i > 0 && isWord(s[i-1])
	after := i < len(s) && isWord(s[i])
	return before != after
}

func isWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}
