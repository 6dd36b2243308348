package shell

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// floorValues are words that must make any program's command line a
// danger (issue 25, item 1): secrets, shells, persistence places,
// listening addresses and raw protocols.
var floorValues = []string{
	"/etc/shadow", "~/.ssh/id_rsa", "../../.env", ".aws/credentials", "/proc/self/environ",
	"/proc/1/cwd/../config.yaml", "id_ed25519", "/root/.erlang.cookie", "/proc/1/mem",
	"/bin/sh", "/usr/bin/python3", "/usr/local/bin/perl5.36", "sh -c id",
	"/etc/cron.d/x", "~/.bashrc", "/etc/systemd/system/x.service", ".git/hooks/pre-commit", "/etc/sudoers.d/x",
	"/var/spool/cron/crontabs/root", "~/.ssh/authorized_keys", "/etc/ld.so.preload",
	"0.0.0.0:4444", "tcp-listen:4444", "gopher://127.0.0.1:6379/_x", "dict://127.0.0.1:11211/stats",
}

// floorSpellings hand a value to a program: as an operand, an option's
// value after "=" or after a space, quoted.
var floorSpellings = []func(v string) string{
	func(v string) string { return quoteWord(v) },
	func(v string) string { return "--opt=" + quoteWord(v) },
	func(v string) string { return "--opt " + quoteWord(v) },
	func(v string) string { return "-v --out=" + quoteWord(v) + " x" },
	func(v string) string { return "-q -- " + quoteWord(v) },
}

// quoteWord quotes a value with a space for the shell.
func quoteWord(v string) string {
	if strings.ContainsAny(v, " ") {
		return "'" + v + "'"
	}
	return v
}

// unknownProgram turns fuzzed text into a program name no table knows.
func unknownProgram(s string) string {
	var b strings.Builder
	b.WriteString("zz")
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		}
		if b.Len() > 20 {
			break
		}
	}
	return b.String()
}

// FuzzFloorsAnywhere: a program no table knows, handed a floor value in
// any spelling, is a danger (never read-only, never lowered by the
// model), whatever fuzzed script stands before or after it.
func FuzzFloorsAnywhere(f *testing.F) {
	for _, s := range []string{"ls -la", "git status", "x=1", "cd /tmp", "echo $(uptime)"} {
		f.Add(s, "tool", uint8(0), uint8(0), false)
	}
	a := newAnalyzer(f)
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	f.Fuzz(func(t *testing.T, script, prog string, value, spelling uint8, before bool) {
		name := unknownProgram(prog)
		if strings.Contains(script, "zz") || len(script) > 400 {
			return // the fuzzed part may not define the program
		}
		line := name + " " + floorSpellings[int(spelling)%len(floorSpellings)](floorValues[int(value)%len(floorValues)])
		if _, err := parser.Parse(strings.NewReader(script), ""); err != nil {
			return
		}
		combined := script + "\n" + line
		if before {
			combined = line + "\n" + script
		}
		file, err := parser.Parse(strings.NewReader(combined), "")
		if err != nil || len(file.Stmts) == 0 {
			return
		}
		edge := file.Stmts[len(file.Stmts)-1]
		if before {
			edge = file.Stmts[0]
		}
		alone, err := parser.Parse(strings.NewReader(line), "")
		if err != nil || len(alone.Stmts) != 1 {
			t.Fatalf("floor line %q does not parse alone: %v", line, err)
		}
		if !sameShape(edge, alone.Stmts[0]) {
			return // the fuzzed part swallowed the line (a here-document, a backslash)
		}
		res := a.Analyze(combined)
		checkConsistent(t, combined, res)
		if res.ReadOnly || len(res.Danger) == 0 && len(res.Absurd) == 0 {
			t.Fatalf("Analyze(%q) = %+v, want a danger", combined, res)
		}
	})
}

// TestFloorsEverySpelling runs every floor value in every spelling once.
func TestFloorsEverySpelling(t *testing.T) {
	a := newAnalyzer(t)
	for _, v := range floorValues {
		for i, spell := range floorSpellings {
			s := "zzdeploy " + spell(v)
			if res := a.Analyze(s); res.ReadOnly || len(res.Danger) == 0 && len(res.Absurd) == 0 {
				t.Errorf("spelling %d: Analyze(%q) = %+v, want a danger", i, s, res)
			}
		}
	}
}
