package shell

import (
	"testing"

	"github.com/countersign/countersign/internal/corpus"
)

// maxAutoOnlyConfirmed is the ceiling on auto-only peer cases this analyzer
// sends to confirmation, deliberate disagreements not counted. The target
// is at most 2 % of the auto-only cases.
const maxAutoOnlyConfirmed = 0

// disagreements are peer labels this project's policy overrides on
// purpose, keyed by command. The reason says which rule of the SPEC wins.
var disagreements = map[string]string{
	"(ls)":                   "SPEC §2 rule 6: subshells of readers are read-only; Codex only trusts plain lists",
	"ls || (pwd && echo hi)": "SPEC §2 rule 6: subshells of readers are read-only; Codex only trusts plain lists",
	"mkfs.ext4 /dev/sdaa":    "SPEC §2 rule 1 (issue 11): /dev/sdaa is the 27th SCSI disk; Goose's pattern knows only one letter",
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

func TestPeerCorpora(t *testing.T) {
	cases := corpus.Load(t, "execute_command")
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var autoOnly, autoConfirmed, disagreed int
	used := map[string]bool{}
	for _, c := range cases {
		res := a.Analyze(c.Text)
		got := decision(res)
		if c.AutoOnly() {
			autoOnly++
		}
		if c.Allows(got) {
			continue
		}
		if why, ok := disagreements[c.Text]; ok {
			used[c.Text] = true
			disagreed++
			t.Logf("%s %q: %s, peer says %v; deliberate: %s", c.Where(), c.Text, got, c.Accept, why)
			continue
		}
		switch {
		case got == "auto":
			t.Errorf("%s %q: auto-run, but accept is %v (%s)", c.Where(), c.Text, c.Accept, c.Source)
		case c.BlockOnly():
			t.Errorf("%s %q: %s, but it must be blocked: %+v", c.Where(), c.Text, got, res)
		case c.AutoOnly():
			autoConfirmed++
			t.Logf("%s %q: auto-only case sent to %s: %+v", c.Where(), c.Text, got, res)
		default:
			t.Errorf("%s %q: %s, accept is %v: %+v", c.Where(), c.Text, got, c.Accept, res)
		}
	}
	t.Logf("execute_command cases: %d; auto-only: %d, of which confirmed: %d; deliberate disagreements: %d",
		len(cases), autoOnly, autoConfirmed, disagreed)
	for cmd := range disagreements {
		if !used[cmd] {
			t.Errorf("disagreement %q no longer disagrees with any peer case: remove it", cmd)
		}
	}
	if autoConfirmed > maxAutoOnlyConfirmed {
		t.Errorf("%d auto-only cases sent to confirmation, ceiling %d", autoConfirmed, maxAutoOnlyConfirmed)
	}
}
