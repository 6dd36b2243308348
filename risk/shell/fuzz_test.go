package shell

import (
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// absurdTails are commands that must make any script they stand in absurd.
var absurdTails = []string{"rm -rf /", "mkfs.ext4 /dev/sda1", "dd if=/dev/zero of=/dev/sda"}

// FuzzAnalyze: Analyze never panics (its recover would hide one, so the
// reason it leaves is checked), its fields agree, and a parsable script
// with an absurd command added as a separate statement is never read-only
// and always absurd.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"ls -la", "echo $(uptime)", "cat <<EOF\nx\nEOF", "f() { ls; }", "if true; then ls; fi",
		"x=1; echo $x", "sudo ls", "bash -c 'ls'", "# comment", "exit 0", "case x in x) ;; esac",
		"echo 'unterminated", "ls \\", "a | b && c || d &", "for i in {1..3}; do echo $i; done",
	} {
		f.Add(s)
	}
	a := newAnalyzer(f)
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	f.Fuzz(func(t *testing.T, script string) {
		start := time.Now()
		res := a.Analyze(script)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("Analyze of %d bytes took %v", len(script), d)
		}
		checkConsistent(t, script, res)
		if _, err := parser.Parse(strings.NewReader(script), ""); err != nil {
			return
		}
		for _, tail := range absurdTails {
			for _, combined := range []struct {
				script string
				first  bool // the absurd command is the first top-level statement
			}{
				{script + "\n" + tail, false},
				{tail + "\n" + script, true},
				{"(" + script + "\n) ; " + tail, false},
			} {
				file, err := parser.Parse(strings.NewReader(combined.script), "")
				if err != nil || !standsAlone(file, tail, combined.first) {
					continue
				}
				res := a.Analyze(combined.script)
				checkConsistent(t, combined.script, res)
				if res.ReadOnly || len(res.Absurd) == 0 {
					t.Fatalf("Analyze(%q) = %+v, want absurd", combined.script, res)
				}
			}
		}
	})
}

// standsAlone reports whether the first or last top-level statement of
// file is exactly the command tail (so the fuzzed part did not swallow it).
func standsAlone(file *syntax.File, tail string, first bool) bool {
	if len(file.Stmts) == 0 {
		return false
	}
	s := file.Stmts[len(file.Stmts)-1]
	if first {
		s = file.Stmts[0]
	}
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || s.Negated || len(s.Redirs) > 0 || len(c.Assigns) > 0 {
		return false
	}
	// Compare the words as parsed: the printer would hide a \v glued to rm.
	fields := strings.Fields(tail)
	if len(c.Args) != len(fields) {
		return false
	}
	for i, w := range c.Args {
		if len(w.Parts) != 1 {
			return false
		}
		if l, ok := w.Parts[0].(*syntax.Lit); !ok || l.Value != fields[i] {
			return false
		}
	}
	return true
}

// checkConsistent fails when an analysis panicked or is read-only with reasons.
func checkConsistent(t *testing.T, script string, res Analysis) {
	t.Helper()
	for _, r := range res.Danger {
		if strings.HasPrefix(r, "shell analysis failed") {
			t.Fatalf("Analyze(%q) panicked: %s", script, r)
		}
	}
	if res.ReadOnly && len(res.Absurd)+len(res.Danger)+len(res.Unknown) > 0 {
		t.Fatalf("Analyze(%q) is read-only with reasons: %+v", script, res)
	}
}
