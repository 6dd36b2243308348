package redact

import (
	"slices"
	"strings"
)

// lineOrBoundary starts an extra rule that has an after filter: the
// match begins a line or follows a character that is not part of a word.
const lineOrBoundary = `(?:^|[^A-Za-z0-9_])`

// assignMatches returns the submatch indexes of e's expression in each
// line of s, as FindAllStringSubmatchIndex over the line would, trying the
// expression anchored only where a match can start: a line's start or a
// character not part of a word, at most two bytes before the run of name
// characters that holds a hint that after accepts (every match holds
// one). The name before a hint is the expression's unbounded prefix,
// costly to run over every line; a line of JSON holds many words such as
// "key" and few assignments to them.
func (e extra) assignMatches(s, lower string) [][]int {
	var hints []int
	for _, h := range e.hints {
		for i := 0; ; {
			j := strings.Index(lower[i:], h)
			if j < 0 {
				break
			}
			if e.after(s[i+j+len(h):]) {
				hints = append(hints, i+j)
			}
			i += j + len(h)
		}
	}
	slices.Sort(hints)
	var out [][]int
	pos := 0 // no match starts before pos: the end of the last, or tried
	for _, h := range hints {
		if h < pos {
			continue
		}
		start := strings.LastIndexByte(s[:h], '\n') + 1
		end := lineEnd(s, h)
		from := h
		for from > max(start, pos) && isName(s[from-1]) {
			from--
		}
		from = max(start, pos, from-2)
		if h-from > maxTries {
			// a long name: one search from its start, which the
			// expression does in time linear in the line
			re := e.mid
			if from == start {
				re = e.re
			}
			m := re.get().FindStringSubmatchIndex(s[from:end])
			if m == nil {
				pos = end // none in the rest of this line
				continue
			}
			out = append(out, shift(m, from))
			pos = m[1]
			continue
		}
		for q := from; q <= h; q++ {
			re := e.mid
			if q == start {
				re = e.re
			} else if c := s[q]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' {
				continue // neither a line's start nor a boundary
			}
			m := re.anchored().FindStringSubmatchIndex(s[q:end])
			if m == nil {
				continue
			}
			out = append(out, shift(m, q))
			pos = m[1]
			break
		}
		pos = max(pos, h+1)
	}
	return out
}

// maxTries is how many starts before a hint assignMatches tries one by
// one; more (a name of many dots or dashes) would cost time quadratic in
// its length.
const maxTries = 64

// shift adds by to each index of m that is set, and returns m.
func shift(m []int, by int) []int {
	for g := range m {
		if m[g] >= 0 {
			m[g] += by
		}
	}
	return m
}
