package redact

import (
	"strings"
	"testing"
)

// TestReachOfAssignmentRules: the generic rule and every rule that starts
// with its prefix get a bound, so their tries read short texts; the bound
// of the generic rule is what its parts add up to (keyword 10, name 20,
// blanks 3, assignment 4, quotes 5).
func TestReachOfAssignmentRules(t *testing.T) {
	n := 0
	for _, r := range gitleaksRules {
		if !strings.HasPrefix(r.regex, genericPrefix) {
			continue
		}
		n++
		if g := newGenericScan(r.regex); (g.rest == nil || g.reach == 0) && r.id != "atlassian-api-token" {
			t.Errorf("%s: no reach for %s", r.id, r.regex)
		}
	}
	if n < 90 {
		t.Errorf("%d rules start with the generic prefix, want about 95", n)
	}
	if got := genericScanner().reach; got != 42 {
		t.Errorf("generic reach = %d, want 42", got)
	}
	for _, src := range []string{`(?i)(?:key)=(.+)` + valueTail, `(?i)(?:key)\s*=([a-z]+)` + valueTail, `(?i)(?:key)=([a-z ]+)` + valueTail, `(?i)(?:key)=([a-z]+)`} {
		if got := reach(src); got != 0 {
			t.Errorf("reach(%s) = %d, want 0 (no bound)", src, got)
		}
	}
}
