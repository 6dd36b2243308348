package sqlrisk

import (
	"strings"
	"testing"
)

// FuzzAnalyze: Analyze never panics, keeps its own invariants, and never
// calls a text read-only when a DROP TABLE rides along or when it holds
// executable-comment syntax. Hand-written seeds are in testdata/fuzz/FuzzAnalyze.
func FuzzAnalyze(f *testing.F) {
	for _, s := range benchMix {
		f.Add(s)
	}
	a, err := New("")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := a.Analyze(text)
		if got.ReadOnly && (len(got.Danger) > 0 || len(got.Unknown) > 0) {
			t.Fatalf("Analyze(%q) is read-only with reasons: %+v", text, got)
		}
		if !got.ReadOnly && len(got.Danger) == 0 && len(got.Unknown) == 0 {
			t.Fatalf("Analyze(%q) is not read-only and gives no reason", text)
		}
		if got.ReadOnly && strings.Contains(text, "/*!") {
			t.Fatalf("Analyze(%q) is read-only although it holds /*!", text)
		}
		for _, joined := range []string{text + "; DROP TABLE t", "DROP TABLE t; " + text} {
			if r := a.Analyze(joined); r.ReadOnly {
				t.Fatalf("Analyze(%q) is read-only: %+v", joined, r)
			}
		}
	})
}
