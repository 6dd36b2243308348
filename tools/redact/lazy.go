package redact

import (
	"regexp"
	"sync"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// lazyRegexp is a regular expression compiled the first time it is used:
// most of gitleaks' two hundred rules never see a keyword of theirs, and
// compiled they would hold about 25 MB for the life of the process. Safe
// for concurrent use.
type lazyRegexp struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
	// at is the expression anchored at the start of the text, compiled
	// on its own first use (anchored).
	atOnce sync.Once
	at     *regexp.Regexp
}

// get returns the compiled expression. Every source in the generated table
// compiles (TestRulesCompile), so a failure here is a broken table.
func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.src) })
	return l.re
}

// anchored returns the expression anchored at the start of the text (a
// ^ of its own is then true there too).
func (l *lazyRegexp) anchored() *regexp.Regexp {
	l.atOnce.Do(func() { l.at = regexp.MustCompile(`^(?:` + l.src + `)`) })
	return l.at
}

// lazyTrie is an Aho-Corasick trie of words, built the first time it is
// used: a detector's keywords (the trie of all rules' keywords is 2.5 MB,
// 2 kB a state) and the generic rule's fifteen hundred stopwords. Safe for
// concurrent use.
type lazyTrie struct {
	words []string
	once  sync.Once
	trie  *ahocorasick.Trie
}

func (l *lazyTrie) get() *ahocorasick.Trie {
	l.once.Do(func() { l.trie = ahocorasick.NewTrieBuilder().AddStrings(l.words).Build() })
	return l.trie
}
