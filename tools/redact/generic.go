package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// genericPrefix is how gitleaks' generic rule starts: up to fifty name
// characters, as few as will do, before its keyword. Run by Go's regexp
// over whole lines, those fifty optional steps are most of the redactor's
// time (some 200 ns a byte); genericScan finds the same matches by trying
// the rest of the expression only where a keyword stands.
const genericPrefix = `(?i)[\w.-]{0,50}?`

// genericScan finds the matches of the generic rule's expression in a text
// exactly as FindAllStringIndex over the whole text would, without running
// the expression over the text: a match starts with fifty name characters
// at most and then a keyword, so each match is found by trying the rest of
// the expression, anchored, at a keyword (in text order), and its start is
// where the name characters before that keyword begin (no earlier than
// fifty of them, nor than the end of the previous match). Nil when the
// rule's expression does not start with genericPrefix (a gitleaks update
// changed it): then the caller runs the expression as before.
type genericScan struct {
	rest *regexp.Regexp // the expression after genericPrefix, anchored
	// reach bounds the text each try of rest reads (reach.go); 0 when
	// the expression is not of the shape that allows it.
	reach int
}

// newGenericScan compiles src without genericPrefix, anchored at the
// start; rest is nil when src lacks that prefix.
func newGenericScan(src string) genericScan {
	if !strings.HasPrefix(src, genericPrefix) {
		return genericScan{}
	}
	tail := src[len(genericPrefix):]
	return genericScan{rest: regexp.MustCompile(`(?i)^(?:` + tail + `)`), reach: reach(`(?i)` + tail)}
}

// genericScanner is, built once, the generic rule's genericScan.
var genericScanner = sync.OnceValue(func() genericScan {
	for _, r := range gitleaksRules {
		if r.id == genericRule {
			return newGenericScan(r.regex)
		}
	}
	return genericScan{}
})

// foldedWord are the two runes that (?i) adds to [\w]: ſ (folds to s) and
// the Kelvin sign K (folds to k). Text holding either goes the slow way.
const foldedWord = "\u017f\u212a"

// folds reports whether s holds a rune of foldedWord (two byte searches,
// much faster than ContainsAny's rune by rune).
func folds(s string) bool {
	return strings.Contains(s, foldedWord[:2]) || strings.Contains(s, foldedWord[2:])
}

// matches returns the [start, end) of each match in s. starts are the
// offsets where a keyword of the rule begins that assigned accepts, in
// increasing order. ok is false when the fast way cannot answer for s.
func (g genericScan) matches(s string, starts []int) (out [][2]int, ok bool) {
	if g.rest == nil || folds(s) {
		return nil, false
	}
	pos := 0
	for _, k := range starts {
		if k < pos {
			continue
		}
		m := g.rest.FindStringIndex(s[k:cut(s, k, g.reach)])
		if m == nil {
			continue
		}
		out = append(out, [2]int{nameStart(s, k, pos), k + m[1]})
		pos = k + m[1]
	}
	return out, true
}

// submatch returns the groups of the first match in s as the whole
// expression's FindStringSubmatch would (its prefix holds no group): the
// first keyword, in text order, where the rest matches makes the match.
// It calls slow when the fast way cannot answer.
func (g genericScan) submatch(s string, keywords []string, slow func(string) []string) []string {
	if g.rest == nil || folds(s) {
		return slow(s)
	}
	lower := asciiLower(s)
	for k := range len(s) {
		if !hasAnyPrefix(lower[k:], keywords) {
			continue
		}
		if m := g.rest.FindStringSubmatch(s[k:cut(s, k, g.reach)]); m != nil {
			m[0] = s[nameStart(s, k, 0) : k+len(m[0])]
			return m
		}
	}
	return nil
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// nameStart is where the run of name characters ([\w.-], at most fifty)
// before k begins, not before floor.
func nameStart(s string, k, floor int) int {
	p := k
	for n := 0; n < 50 && p > floor; n++ {
		c, size := utf8.DecodeLastRuneInString(s[floor:p])
		if !(c < utf8.RuneSelf && isName(byte(c))) {
			break
		}
		p -= size
	}
	return p
}

func isName(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// genericStarts returns, in increasing order, the offsets where a keyword
// of words begins in s (lower its ASCII lower case) that assigned accepts:
// where a match of the generic rule can have its keyword.
func genericStarts(s, lower string, words *ahocorasick.Trie) []int {
	var starts []int
	words.Walk([]byte(lower), func(end, n, _ int64) bool {
		if assigned(s[end+1:]) {
			starts = append(starts, int(end-n+1))
		}
		return true
	})
	slices.Sort(starts)
	return slices.Compact(starts)
}

// genericSpans applies the generic rule (the only rule of r.generic) to
// s, lower its ASCII lower case: candidates are the keywords that assigned
// accepts, each match is checked (entropy, allowlists) on its own lines.
func (r *Redactor) genericSpans(s, lower string, seen map[string]bool) []span {
	starts := genericStarts(s, lower, r.generic.words.get())
	if len(starts) == 0 {
		return nil
	}
	found, ok := genericScanner().matches(s, starts)
	if !ok {
		var out []span
		for _, w := range windows(s, lower, r.generic.words.get(), assigned) {
			out = append(out, r.find(r.generic, s, lower, w[0], w[1], seen)...)
		}
		return out
	}
	rule := r.generic.rules[0]
	var out []span
	for _, m := range found {
		from := strings.LastIndexByte(s[:m[0]], '\n') + 1
		to := len(s)
		if j := strings.IndexByte(s[m[1]:], '\n'); j >= 0 {
			to = m[1] + j + 1
		}
		raw := s[from:to]
		if f, ok := r.generic.check(rule, raw, newlines(raw), m[0]-from, m[1]-from); ok {
			out = append(out, r.spans(s, []finding{f}, from, to, seen)...)
		}
	}
	return out
}
