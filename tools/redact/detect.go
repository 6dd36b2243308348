package redact

import (
	"math"
	"strings"
	"unicode/utf8"
)

// detector applies rules from the generated table to text exactly as
// gitleaks' detect.Detector applies them to a fragment with no path or
// commit (DetectString, no decoding, "gitleaks:allow" ignored): a keyword
// prefilter, the rule's expression, its secret group, its entropy, then the
// global allowlists and the rule's own; last, a generic rule's finding gives
// way to another rule's on the same line that holds its secret.
// TestDetectorMatchesGitleaks holds it to gitleaks' own on a corpus. Safe
// for concurrent use: only the lazy parts change, each once.
type detector struct {
	rules  []*applied
	global []*appliedAllow
	words  *lazyTrie // every keyword of rules, lower case, once; built on first use (2.5 MB)
	// wordRules are, for each of words (by its index), the rules that
	// have it as a keyword.
	wordRules [][]int
}

// applied is a rule with its expressions, compiled when first needed.
type applied struct {
	*rule
	re    lazyRegexp
	allow []*appliedAllow
	// submatch, when set, returns the groups of re's first match in a
	// text as FindStringSubmatch would, faster (genericScan).
	submatch func(string) []string
	start    keywordStart // literal.go
}

type appliedAllow struct {
	*allowlist
	re    lazyRegexp
	words lazyTrie
	need  needed // prefilter.go
}

// finding is what the detector found: the rule, the whole match, the secret
// in it, and the line (counted from 0) where the match starts.
type finding struct {
	rule, match, secret string
	line                int
}

// newDetector prepares rules and the global allowlists; nothing is
// compiled yet.
func newDetector(rules []rule, global []allowlist) *detector {
	d := &detector{global: prepare(global)}
	var words []string
	index := map[string]int{}
	for i := range rules {
		r := &rules[i]
		d.rules = append(d.rules, &applied{rule: r, re: lazyRegexp{src: r.regex}, allow: prepare(r.allow)})
		for _, k := range r.keywords {
			w, ok := index[k]
			if !ok {
				w = len(words)
				index[k] = w
				words = append(words, k)
				d.wordRules = append(d.wordRules, nil)
			}
			d.wordRules[w] = append(d.wordRules[w], i)
		}
	}
	d.words = &lazyTrie{words: words}
	return d
}

func prepare(lists []allowlist) []*appliedAllow {
	out := make([]*appliedAllow, len(lists))
	for i := range lists {
		a := &lists[i]
		out[i] = &appliedAllow{allowlist: a, re: lazyRegexp{src: a.regex}, words: lazyTrie{words: a.stopwords}}
	}
	return out
}

// detect returns the findings of d's rules in raw; ascii is raw with its
// ASCII letters in lower case (the same offsets).
func (d *detector) detect(raw, ascii string) []finding {
	lower := ascii // what gitleaks' strings.ToLower gives, for ASCII text
	for i := 0; i < len(raw); i++ {
		if raw[i] >= utf8.RuneSelf {
			lower = strings.ToLower(raw)
			break
		}
	}
	hit := make([]bool, len(d.rules)) // the rules with a keyword in lower
	for i, r := range d.rules {
		hit[i] = len(r.keywords) == 0
	}
	d.words.get().Walk([]byte(lower), func(_, _, w int64) bool {
		for _, i := range d.wordRules[w] {
			hit[i] = true
		}
		return true
	})
	var out []finding
	var lines []int // the offsets of raw's newlines, found when first needed
	for i, r := range d.rules {
		if !hit[i] {
			continue
		}
		var matches [][]int
		if rest := r.start.get(r.rule); rest != nil {
			matches = atKeywords(rest, raw, ascii, r.keywords)
		} else {
			matches = r.re.get().FindAllStringIndex(raw, -1)
		}
		if len(matches) > 0 && lines == nil {
			lines = newlines(raw)
		}
		for _, m := range matches {
			if f, ok := d.check(r, raw, lines, m[0], m[1]); ok {
				out = append(out, f)
			}
		}
	}
	return preferSpecific(out)
}

// check turns r's match raw[start:end] into a finding, unless its secret's
// entropy is too low or an allowlist lets it through.
func (d *detector) check(r *applied, raw string, lines []int, start, end int) (finding, bool) {
	match := strings.Trim(raw[start:end], "\n")
	end = start + len(match) // as gitleaks does (its issue 1352)
	line, first := lineOf(lines, raw, start, end)
	f := finding{rule: r.id, match: match, secret: match, line: first}
	// gitleaks takes the groups from the match alone, not from raw
	find := r.submatch
	if find == nil {
		find = r.re.get().FindStringSubmatch
	}
	if groups := find(match); len(groups) >= 2 {
		if r.secretGroup > 0 {
			if len(groups) <= r.secretGroup {
				return finding{}, false
			}
			f.secret = groups[r.secretGroup]
		} else {
			for _, g := range groups[1:] {
				if g != "" {
					f.secret = g
					break
				}
			}
		}
	}
	if r.entropy != 0 && entropy(f.secret) <= r.entropy {
		return finding{}, false
	}
	for _, a := range d.global {
		if a.allows(f, line) {
			return finding{}, false
		}
	}
	for _, a := range r.allow {
		if a.allows(f, line) {
			return finding{}, false
		}
	}
	return f, true
}

// allows reports whether a lets f through; line is the text of f's lines.
func (a *appliedAllow) allows(f finding, line string) bool {
	target := f.secret
	switch a.target {
	case "match":
		target = f.match
	case "line":
		target = line
	}
	byRegex := func() bool {
		if a.regex == "" || target == "" {
			return false
		}
		if match, ok := matches(a.need.get(a.regex), target); ok {
			return match
		}
		return a.re.get().MatchString(target)
	}
	byWord := func() bool {
		return len(a.stopwords) > 0 && f.secret != "" && a.words.get().MatchFirstString(strings.ToLower(f.secret)) != nil
	}
	if !a.and {
		return byWord() || byRegex() // the cheaper first
	}
	return (a.regex == "" || byRegex()) && (len(a.stopwords) == 0 || byWord())
}

// preferSpecific drops a finding of a generic rule when another, not
// generic, rule found a secret holding its secret on the same line
// (gitleaks' detect.filter).
func preferSpecific(fs []finding) []finding {
	var out []finding
	for _, f := range fs {
		keep := true
		if strings.Contains(strings.ToLower(f.rule), "generic") {
			for _, g := range fs {
				if f.line == g.line && f.rule != g.rule && strings.Contains(g.secret, f.secret) &&
					!strings.Contains(strings.ToLower(g.rule), "generic") {
					keep = false
					break
				}
			}
		}
		if keep {
			out = append(out, f)
		}
	}
	return out
}

// newlines returns the offsets of the newlines in s.
func newlines(s string) []int {
	var out []int
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return out
		}
		out = append(out, i+j)
		i += j + 1
	}
}

// lineOf returns the text gitleaks calls a match's line (from the newline
// before it, included, to the end of its last line) and the number of the
// line where it starts, as gitleaks' detect.location counts them.
func lineOf(nl []int, raw string, start, end int) (string, int) {
	if len(nl) == 0 {
		nl = []int{len(raw)} // gitleaks' issue 1037: a default newline
	}
	prev, from, to, first, set := 0, 0, 0, 0, false
	for n, at := range nl {
		if prev <= start && start < at {
			set, first, from, to = true, n, prev, at
		}
		if prev < end && end <= at {
			to = at
		}
		prev = at
	}
	if !set {
		first = len(nl)
		i := end
		for i < len(raw) && raw[i] != '\n' && raw[i] != '\r' {
			i++
		}
		to = i
	}
	to = max(to, end)
	if from > to || to > len(raw) {
		return "", first // where gitleaks would slice out of range
	}
	return raw[from:to], first
}

// entropy is the Shannon entropy of s as gitleaks computes it: runes
// counted, divided by the length in bytes.
func entropy(s string) (e float64) {
	if s == "" {
		return 0
	}
	inv := 1.0 / float64(len(s))
	ascii := true
	var bytes [utf8.RuneSelf]int // counted without a map when s is ASCII
	for i := 0; i < len(s) && ascii; i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
		} else {
			bytes[s[i]]++
		}
	}
	if ascii {
		for _, n := range bytes {
			if n > 0 {
				p := float64(n) * inv
				e -= p * math.Log2(p)
			}
		}
		return e
	}
	counts := map[rune]int{}
	for _, c := range s {
		counts[c]++
	}
	for _, n := range counts {
		p := float64(n) * inv
		e -= p * math.Log2(p)
	}
	return e
}
