package redact

import (
	"regexp"
	"strings"
	"testing"
)

// allAllowlists are the global allowlists and every rule's.
func allAllowlists() []allowlist {
	all := append([]allowlist{}, gitleaksAllow...)
	for _, r := range gitleaksRules {
		all = append(all, r.allow...)
	}
	return all
}

// prefilterTexts are targets that allowlists let through or nearly so.
var prefilterTexts = []string{
	"true", "false", "null", "aaaaaaaa", "${API_KEY}", "$TOKEN", "{{ .Values.secret }}", "/home/deploy/.config/token.txt",
	"access_id=abc", "api_version: 3", "keyVaultToStoreSecrets", "X-MS-Exchange-Organization-AuthAs", "donkey=1", "MONKEY",
	"public_key = AbCdEf0123456789", "ACCESSIBILITY", "--mount=type=secret,id=x", "import { a, b } from 'x'",
	"Key_Alias: prod", "csrf_token=abc123", "io.jsonwebtoken : jjwt", "UserSecretsId=1", "key\u212aey", "ſecret_name=x",
}

// TestPrefilterNeverHidesAMatch: an allowlist's expression run branch by
// branch behind the prefilter matches exactly the targets the whole
// expression matches.
func TestPrefilterNeverHidesAMatch(t *testing.T) {
	targets := append(prefilterTexts, parityCorpus(t)...)
	filtered := 0
	for _, a := range allAllowlists() {
		checkPrefilter(t, a.regex, targets)
		var n needed
		if a.regex != "" && n.get(a.regex) != nil {
			filtered++
		}
	}
	// the generic rule's and the global allowlists at least have one
	if filtered < 2 {
		t.Errorf("%d allowlists have a prefilter, want 2 or more", filtered)
	}
}

func checkPrefilter(t *testing.T, src string, targets []string) {
	t.Helper()
	if src == "" {
		return
	}
	var n needed
	need := n.get(src)
	re := regexp.MustCompile(src)
	for _, s := range targets {
		if got, ok := matches(need, s); ok && got != re.MatchString(s) {
			t.Errorf("branches of %.60s say %v on %.60q, the expression %v", src, got, s, !got)
		}
	}
}

func FuzzPrefilter(f *testing.F) {
	for _, s := range prefilterTexts {
		f.Add(s)
	}
	type compiled struct {
		re   *regexp.Regexp
		need []branch
	}
	var all []compiled
	for _, a := range allAllowlists() {
		if a.regex != "" {
			var n needed
			all = append(all, compiled{regexp.MustCompile(a.regex), n.get(a.regex)})
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range all {
			for _, target := range []string{s, strings.ToUpper(s)} {
				if got, ok := matches(c.need, target); ok && got != c.re.MatchString(target) {
					t.Errorf("branches of %.60s say %v on %q, the expression %v", c.re, got, target, !got)
				}
			}
		}
	})
}
