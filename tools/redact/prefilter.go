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
// the target must meet by holding one of their words. A target that meets
// no branch's clauses cannot match, and the expression is not run.
// gitleaks' allowlists are large case-insensitive alternations
// ("access(?:ibility|or)|api[_.-]?(?:id|name|version)|…") that Go's regexp
// runs branch by branch at every byte. Built on first use; nil branches
// means the expression always runs.
type needed struct {
	once     sync.Once
	branches [][][]string
}

func (n *needed) get(src string) [][][]string {
	n.once.Do(func() {
		re, err := syntax.Parse(src, syntax.Perl)
		if err != nil {
			return
		}
		subs := []*syntax.Regexp{re}
		if re.Op == syntax.OpAlternate {
			subs = re.Sub
		}
		var branches [][][]string
		for _, sub := range subs {
			for sub.Op == syntax.OpCapture {
				sub = sub.Sub[0]
			}
			parts := []*syntax.Regexp{sub}
			if sub.Op == syntax.OpConcat {
				parts = sub.Sub
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
			branches = append(branches, clauses)
		}
		n.branches = branches
	})
	return n.branches
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

// cannotMatch reports whether target meets no branch of need, so that its
// expression cannot match it. Text that is not ASCII is never ruled out:
// case folding there (ſ for s) is more than lower case.
func cannotMatch(need [][][]string, target string) bool {
	if need == nil {
		return false
	}
	for i := 0; i < len(target); i++ {
		if target[i] >= utf8.RuneSelf {
			return false
		}
	}
	lower := asciiLower(target)
	for _, clauses := range need {
		met := true
		for _, words := range clauses {
			if !containsAny(lower, words) {
				met = false
				break
			}
		}
		if met {
			return false
		}
	}
	return true
}
