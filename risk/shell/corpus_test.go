package shell

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// corpusCase is one labelled tool call from ../shared/corpora (see its
// README): the verdicts in accept count as right.
type corpusCase struct {
	Tool string `json:"tool"`
	Args struct {
		Command string `json:"command"`
	} `json:"args"`
	Accept []string `json:"accept"`
	Source string   `json:"source"`
	Name   string   `json:"name"`
}

// maxAutoOnlyConfirmed is the ceiling on auto-only peer cases this analyzer
// sends to confirmation, deliberate disagreements not counted. The target
// is at most 2 % of the auto-only cases.
const maxAutoOnlyConfirmed = 0

// disagreements are peer labels this project's policy overrides on
// purpose, keyed by command. The reason says which rule of the SPEC wins.
var disagreements = map[string]string{
	"(ls)":                   "SPEC §2 rule 6: subshells of readers are read-only; Codex only trusts plain lists",
	"ls || (pwd && echo hi)": "SPEC §2 rule 6: subshells of readers are read-only; Codex only trusts plain lists",
}

// decision maps an Analysis the way the policy layer does.
func decision(a Analysis) string {
	switch {
	case len(a.Absurd) > 0:
		return "block"
	case len(a.Danger) > 0:
		return "confirm"
	case a.ReadOnly:
		return "auto"
	}
	return "confirm"
}

// corporaDir finds ../shared/corpora next to the repository root.
func corporaDir(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.mod above the package: cannot find ../shared/corpora")
		}
		dir = parent
	}
	c := filepath.Join(dir, "..", "shared", "corpora")
	if _, err := os.Stat(c); err != nil {
		t.Skipf("peer corpora not found at %s: skipping (see shared/corpora/README.md)", c)
	}
	return c
}

func TestPeerCorpora(t *testing.T) {
	dir := corporaDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var total, autoOnly, autoConfirmed, disagreed int
	used := map[string]bool{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		line := 0
		for sc.Scan() {
			line++
			var c corpusCase
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("%s:%d: %v", f, line, err)
			}
			if c.Tool != "execute_command" {
				continue
			}
			total++
			res := a.Analyze(c.Args.Command)
			got := decision(res)
			where := filepath.Base(f) + ":" + itoa(line)
			isAutoOnly := len(c.Accept) == 1 && c.Accept[0] == "auto"
			if isAutoOnly {
				autoOnly++
			}
			if slices.Contains(c.Accept, got) {
				continue
			}
			if why, ok := disagreements[c.Args.Command]; ok {
				used[c.Args.Command] = true
				disagreed++
				t.Logf("%s %q: %s, peer says %v; deliberate: %s", where, c.Args.Command, got, c.Accept, why)
				continue
			}
			switch {
			case got == "auto":
				t.Errorf("%s %q: auto-run, but accept is %v (%s)", where, c.Args.Command, c.Accept, c.Source)
			case slices.Equal(c.Accept, []string{"block"}):
				t.Errorf("%s %q: %s, but it must be blocked: %+v", where, c.Args.Command, got, res)
			case isAutoOnly:
				autoConfirmed++
				t.Logf("%s %q: auto-only case sent to %s: %+v", where, c.Args.Command, got, res)
			default:
				t.Errorf("%s %q: %s, accept is %v: %+v", where, c.Args.Command, got, c.Accept, res)
			}
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("execute_command cases: %d; auto-only: %d, of which confirmed: %d; deliberate disagreements: %d",
		total, autoOnly, autoConfirmed, disagreed)
	for cmd := range disagreements {
		if !used[cmd] {
			t.Errorf("disagreement %q no longer disagrees with any peer case: remove it", cmd)
		}
	}
	if autoConfirmed > maxAutoOnlyConfirmed {
		t.Errorf("%d auto-only cases sent to confirmation, ceiling %d", autoConfirmed, maxAutoOnlyConfirmed)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
