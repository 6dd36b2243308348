package redact

import (
	"regexp/syntax"
	"strings"
	"sync"
	"unicode/utf8"
)

// needed is, for an allowlist's expression, what a target must hold for
// the expression to match it: for each branch of its top-level
// alternation, a list of clauses (sets of lower-case words), all of which
// the target must meet by holding one of their words. Only the branches
// whose clauses an ASCII target meets are run, each as an expression of
// its own (compiled on first use): gitleaks' allowlists are large
// case-insensitive alternations ("access(?:ibility|or)|api[_.-]?(?:id|
// name|version)|…") that Go's regexp runs branch by branch at every byte.
// Built on first use; no branches means the whole expression always runs.
type needed struct {
	once     sync.Once
	branches []branch
}

// branch is one alternative of an allowlist's expression.
type branch struct {
	clauses [][]string
	re      *lazyRegexp
}

func (n *needed) get(src string) []branch {
	n.once.Do(func() {
		re, err := syntax.Parse(src, syntax.Perl)
		if err != nil {
			return
		}
		subs := []*syntax.Regexp{re}
		if re.Op == syntax.OpAlternate {
			subs = re.Sub
		}
		var branches []branch
		for _, sub := range subs {
			inner := sub
			for inner.Op == syntax.OpCapture {
				inner = inner.Sub[0]
			}
			parts := []*syntax.Regexp{inner}
			if inner.Op == syntax.OpConcat {
				parts = inner.Sub
			}
			var clauses [][]string
			for _, p := range parts {
				if words, ok := required(p); ok {
					clauses = append(clauses, words)
				}
			}
			if len(clauses) == 0 {
				return // a branch that needs nothing: no prefilter
			}
			branches = append(branches, branch{clauses: clauses, re: &lazyRegexp{src: sub.String()}})
		}
		n.branches = branches
	})
	return n.branches
}

// matches reports whether the expression whose branches these are matches
// target, running only the branches whose clauses it meets; ok is false
// when it cannot tell (no branches, or target is not ASCII: case folding
// there, ſ for s, is more than lower case).
func matches(branches []branch, target string) (match, ok bool) {
	if branches == nil {
		return false, false
	}
	for i := 0; i < len(target); i++ {
		if target[i] >= utf8.RuneSelf {
			return false, false
		}
	}
	lower := asciiLower(target)
	for _, b := range branches {
		if b.met(lower) && b.re.get().MatchString(target) {
			return true, true
		}
	}
	return false, true
}

// met reports whether lower meets every clause of b.
func (b branch) met(lower string) bool {
	for _, words := range b.clauses {
		if !containsAny(lower, words) {
			return false
		}
	}
	return true
}

// required returns literals one of which every match of re holds, in lower
// case, or false when it cannot tell.
func required(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			if c >= utf8.RuneSelf {
				return nil, false // may fold to ASCII other than its lower case
			}
		}
		return []string{strings.ToLower(string(re.Rune))}, true
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if words, ok := required(sub); ok {
				return words, true
			}
		}
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			words, ok := required(sub)
			if !ok {
				return nil, false
			}
			out = append(out, words...)
		}
		return out, true
	}
	return nil, false
}
