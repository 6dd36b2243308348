package redact

import (
	"strings"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// This file is where a detector looks: the lines of a text that hold one
// of its keywords, read by the detector of the specific rules (redact.go)
// and, when its anchored scan gives up, by the generic rule's
// (generic.go).

// windows returns the byte ranges of s a detector must see: each line
// holding one of its rules' keywords (and, when keep is set, where keep
// accepts what follows the keyword), with the line after it (a YAML value
// may sit under its key), and a private key's block from its header to
// its end. Adjacent ranges are joined.
func windows(s, lower string, words *ahocorasick.Trie, keep func(rest string) bool) [][2]int {
	var out [][2]int
	add := func(start, end int) {
		if n := len(out); n > 0 && start <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], end)
			return
		}
		out = append(out, [2]int{start, end})
	}
	lineEnd := func(i int) int { // past the newline ending the line at i
		if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
			return i + j + 1
		}
		return len(s)
	}
	covered := 0
	words.Walk([]byte(lower), func(end, n, _ int64) bool {
		at := int(end)
		if keep != nil && !keep(s[at+1:]) {
			return true
		}
		stop := lineEnd(lineEnd(at))
		if strings.HasPrefix(lower[at-int(n)+1:], "-----begin") {
			if e := strings.Index(lower[at:], "-----end"); e >= 0 {
				stop = max(stop, lineEnd(at+e))
			} else {
				stop = len(s)
			}
		}
		if stop <= covered {
			return true // inside a window already, with the line after it
		}
		add(strings.LastIndexByte(s[:at], '\n')+1, stop)
		covered = stop
		return true
	})
	return out
}
