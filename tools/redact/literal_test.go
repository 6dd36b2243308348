package redact

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestAtKeywordsMatchesRegexp holds atKeywords to FindAllStringIndex for
// every rule it serves, on the parity corpus (every rule's generated
// strings, in lines and run together) and on text where keywords stand at
// and off word boundaries.
func TestAtKeywordsMatchesRegexp(t *testing.T) {
	texts := append(parityCorpus(t), keywordTexts...)
	served := 0
	for i := range gitleaksRules {
		r := &gitleaksRules[i]
		var k keywordStart
		rest := k.get(r)
		if rest == nil {
			continue
		}
		served++
		whole := regexp.MustCompile(r.regex)
		for _, s := range texts {
			checkAtKeywords(t, r, whole, rest, s)
		}
	}
	// most rules that start with \b start with their keyword; fewer would
	// mean the syntax check no longer sees them
	if served < 40 {
		t.Errorf("atKeywords serves %d rules, want 40 or more", served)
	}
}

var keywordTexts = []string{
	"xdapi0123456789abcdef0123456789abcdef dapi0123456789abcdef0123456789abcdef-1 _dapi0123456789abcdef0123456789abcdef\n",
	"eyJhbGciOiJIUzI1NiJ9XXXX.eyJzdWIiOiIxMjM0NTY3ODkwIn0XXXX.c2lnbmF0dXJlc2lnbmF0dXJl eyJ.eyJ eyeyeyey",
	"API-ABCDEFGHIJKLMNOPQRSTUVWXYZ API-ABCDEFGHIJKLMNOPQRSTUVWX12; api-abcdefghijklmnopqrstuvwxyz",
	"s.abcdefghijklmnopqrstuvwx s.ABCDEFGHIJKLMNOPQRSTUVWX\" xs.abcdefghijklmnopqrstuvwx hvs." + strings.Repeat("a", 95) + "\n",
}

func checkAtKeywords(t *testing.T, r *rule, whole, rest *regexp.Regexp, s string) {
	t.Helper()
	got := atKeywords(rest, s, asciiLower(s), r.keywords)
	want := whole.FindAllStringIndex(s, -1)
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("rule %s on %.80q: atKeywords = %v, want %v", r.id, s, got, want)
	}
}

// FuzzAtKeywords: on any text, atKeywords finds what each rule it serves
// finds with its whole expression.
func FuzzAtKeywords(f *testing.F) {
	for _, s := range keywordTexts {
		f.Add(s)
	}
	type served struct {
		r           *rule
		whole, rest *regexp.Regexp
	}
	var rules []served
	for i := range gitleaksRules {
		r := &gitleaksRules[i]
		var k keywordStart
		if rest := k.get(r); rest != nil {
			rules = append(rules, served{r, regexp.MustCompile(r.regex), rest})
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, x := range rules {
			checkAtKeywords(t, x.r, x.whole, x.rest, s)
		}
	})
}
