package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// genericTexts are texts that hold the generic rule's keywords in the
// shapes that make its prefix matter: long names before a keyword, two
// keywords in one name, values that run on, assignments across lines,
// the two runes (?i) folds into \w, and matches next to one another.
var genericTexts = []string{
	"api_key=Zx81kQ03mPq7vLr2",
	"x.api_token_secret_key = 'AbCdEf0123456789xyz'\n",
	strings.Repeat("a", 60) + "token=AbCdEf0123456789xyz\n",
	strings.Repeat("b.", 30) + "_password: \"Q2x8vLr2kQ03mPq7\"",
	"token:\n  c2VjcmV0LXZhbHVlLXRoYXQtcnVucy1vbi1hbmQtb24tYW5kLW9uLWFuZC1vbg\nnext",
	"auth = abc\nkey=0123456789abcdefXYZ key2=ZYXfedcba9876543210\n",
	"secret=AbCdEf0123456789xyz;token=ZYXfedcba9876543210,",
	"ſecret=AbCdEf0123456789xyz and \u212aey=AbCdEf0123456789xyz\n",
	"credentials || 'Zx81kQ03mPq7vLr2' \\n",
	"my-access ?= Zx81kQ03mPq7vLr2kQ03mPq7vLr2===\tnext",
	"passwd :::= AbCdEf0123456789xyz",
	`{"api_key":"ops_x","access_level":"read","token_expires_at":"2027-01-01T00:00:00Z"}`,
	"API_KEY=AbCdEf0123456789xyz aPi_key=AbCdEf0123456789xyz\n",
	"key\f=AbCdEf0123456789xyz\n",
	"app 1000 2.1 /usr/bin/java -Dauth.server.url=https://sso.internal/auth -Dapi.key.header=X-Api-Key -jar billing.jar\n" +
		"deploy 1002 /usr/local/bin/node server.js --token-ttl=3600 --session-secret-file=/run/secrets/session\n",
	"TOKEN_TTL=3600_1\nSECRET_NAME=billing-db-creds_1\nACCESS_LOG=/var/log/app/access.log_1\nKEY_ROTATION_DAYS=90_1\n",
	"  data:\n    token: ZXlKaGJHY2lPaUpTVXpJMU5pSXNJbXRwWkNJNklpSjkuZXlKcGMzTWlPaUpyZFdKbA==\n  kind: Secret\n",
	// values and blanks around the point where reach cuts a try
	"token" + strings.Repeat(" ", 19) + "\t'\"=" + strings.Repeat("\n", 5) + strings.Repeat("Zx81kQ03mPq7vLr2", 12),
	"auth-key = " + strings.Repeat("aB3", 70) + "\\n",
	"credential:::=\t\t" + strings.Repeat("q1W2e3R4", 30) + " tail",
	"secret" + strings.Repeat("_x", 10) + "\r\n\"=" + strings.Repeat("A9z8", 40) + ";",
	`{"time":"t","msg":"token refresh ok","client_id":"billing-service","expires_in":3600}` + "\n" +
		`WARN auth: access denied path=/api/v1/keys/7 reason="missing scope keys:write"` + "\n",
}

// TestGenericScanMatchesRegexp holds genericScan to what the rule's whole
// expression finds with FindAllStringIndex and FindStringSubmatch, on the
// texts above, each alone and all run together.
func TestGenericScanMatchesRegexp(t *testing.T) {
	var src string
	var keywords []string
	for _, r := range gitleaksRules {
		if r.id == genericRule {
			src, keywords = r.regex, r.keywords
		}
	}
	if !strings.HasPrefix(src, genericPrefix) || genericScanner().rest == nil || genericScanner().reach == 0 {
		t.Fatalf("the generic rule no longer starts with %s: genericScan falls back to the slow way", genericPrefix)
	}
	whole := regexp.MustCompile(src)
	g := genericScanner()
	texts := append(slices.Clone(genericTexts), strings.Join(genericTexts, ""), strings.Join(genericTexts, "\n"))
	for _, s := range texts {
		checkGenericScan(t, g, whole, keywords, s)
	}
}

// genericWords is the generic rule's keyword trie, as Redact uses it.
var genericWords = sync.OnceValue(func() *ahocorasick.Trie {
	r, err := New(nil)
	if err != nil {
		panic(err)
	}
	return r.generic.words.get()
})

func checkGenericScan(t *testing.T, g genericScan, whole *regexp.Regexp, keywords []string, s string) {
	t.Helper()
	got, ok := g.matches(s, genericStarts(s, asciiLower(s), genericWords()))
	if !ok {
		if !strings.ContainsAny(s, foldedWord) {
			t.Errorf("matches(%.60q) gave up", s)
		}
		return
	}
	var want [][2]int
	for _, m := range whole.FindAllStringIndex(s, -1) {
		want = append(want, [2]int{m[0], m[1]})
	}
	if !slices.Equal(got, want) {
		t.Errorf("matches(%.60q) = %v, want %v", s, got, want)
	}
	for _, m := range want {
		match := s[m[0]:m[1]]
		if g, w := g.submatch(match, keywords, whole.FindStringSubmatch), whole.FindStringSubmatch(match); !slices.Equal(g, w) {
			t.Errorf("submatch(%q) = %q, want %q", match, g, w)
		}
	}
}

// FuzzGenericScan: on any text, genericScan finds what the expression does.
func FuzzGenericScan(f *testing.F) {
	for _, s := range genericTexts {
		f.Add(s)
	}
	var src string
	var keywords []string
	for _, r := range gitleaksRules {
		if r.id == genericRule {
			src, keywords = r.regex, r.keywords
		}
	}
	whole := regexp.MustCompile(src)
	g := genericScanner()
	f.Fuzz(func(t *testing.T, s string) {
		checkGenericScan(t, g, whole, keywords, s)
	})
}
