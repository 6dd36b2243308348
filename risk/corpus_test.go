package risk

import (
	"testing"

	"github.com/countersign/countersign/internal/corpus"
)

// maxAutoOnlyConfirmed is the ceiling on auto-only peer cases that the
// policy sends to confirmation without a recorded reason (issue 2: at most
// 2 % of the auto-only cases).
const maxAutoOnlyConfirmed = 1

// disagreement is a peer case where the project's documented policy (the
// SPEC) deliberately gives another verdict than the peer's label.
type disagreement struct {
	file   string
	text   string
	got    Decision
	reason string
}

// disagreements lists every deliberate departure from a peer label, with the
// reason the project's policy (SPEC §2) wins. A case listed here must still
// come out as listed: if the policy changes, the table changes with it.
var disagreements = []disagreement{
	{file: "codex.jsonl", text: "(ls)", got: Auto,
		reason: "Codex refuses subshells because its word-only parser cannot look inside them; " +
			"SPEC §2.6 parses subshells and whitelists a script when every simple command in it is a reader, as here"},
	{file: "codex.jsonl", text: "ls || (pwd && echo hi)", got: Auto,
		reason: "the same parser limit in Codex; ls, pwd and echo are all readers with no redirection, " +
			"so SPEC §2.6 whitelists the list"},
	{file: "goose.jsonl", text: "mkfs.ext4 /dev/sdaa", got: Block,
		reason: "/dev/sdaa is the 27th SCSI disk; Goose's pattern knows one-letter names only, " +
			"and SPEC §2.1 blocks mkfs on a disk by every name Linux gives it (issue 11)"},
	{file: "dbhub_sql.jsonl", text: "WITH replace AS (SELECT 1) SELECT * FROM replace", got: Confirm,
		reason: "REPLACE is a reserved word in MySQL and MariaDB, so the server rejects this text too; " +
			"SQL that does not parse is never whitelisted (SPEC §2.6)"},
}

// TestCorpora runs every peer case through the default policy in smart mode.
// It fails on an auto-run the peer forbids, on a block-only case that is not
// blocked, on any other verdict outside the accept list that the
// disagreement table does not explain, and when more auto-only cases are
// confirmed than maxAutoOnlyConfirmed allows.
func TestCorpora(t *testing.T) {
	cases := corpus.Load(t, "")
	var names []string
	corpora := map[string][]corpus.Case{}
	for _, c := range cases {
		if len(corpora[c.File]) == 0 {
			names = append(names, c.File)
		}
		corpora[c.File] = append(corpora[c.File], c)
	}
	p := mustPolicy(t, Config{})
	listed := map[[2]string]disagreement{}
	for _, d := range disagreements {
		listed[[2]string{d.file, d.text}] = d
	}
	used := map[[2]string]bool{}

	var totalAutoOnly, totalConfirmed, totalSent int
	for _, name := range names {
		var autoOnly, autoOnlyConfirmed, disagreed int
		for _, c := range corpora[name] {
			v := p.Assess(Call{Tool: c.Tool, Args: c.Args, Mode: Smart})
			ok := c.Allows(string(v.Decision))
			isAutoOnly, isBlockOnly := c.AutoOnly(), c.BlockOnly()
			if isAutoOnly {
				autoOnly++
				if v.Decision != Auto {
					totalSent++ // recorded disagreements included
				}
			}
			key := [2]string{c.File, c.Text}
			d, deliberate := listed[key]
			switch {
			case ok:
				if deliberate {
					t.Errorf("%s:%d %q is in the disagreement table but now agrees with the peer (%s): remove it", c.File, c.Line, c.Text, v.Decision)
				}
			case deliberate && d.got == v.Decision:
				if !used[key] {
					t.Logf("%s:%d %q: %s, not %v as the peer says (%s): %s", c.File, c.Line, c.Text, v.Decision, c.Accept, c.Orig, d.reason)
				}
				used[key] = true
				disagreed++
			case v.Decision == Auto:
				// A wrong auto-run is the worst bug: only a listed, reasoned
				// disagreement excuses one.
				t.Errorf("%s:%d auto-ran %q, peer accepts only %v (%s); reasons %q", c.File, c.Line, c.Text, c.Accept, c.Orig, v.Reasons)
			case isAutoOnly && v.Decision == Confirm:
				autoOnlyConfirmed++
				t.Logf("%s:%d auto-only %q was confirmed: %s %q", c.File, c.Line, c.Text, v.Rule, v.Reasons)
			case isBlockOnly:
				t.Errorf("%s:%d block-only %q was not blocked: %s %s %q", c.File, c.Line, c.Text, v.Decision, v.Rule, v.Reasons)
			default:
				t.Errorf("%s:%d %q came out %s (%s %q), peer accepts %v (%s)", c.File, c.Line, c.Text, v.Decision, v.Rule, v.Reasons, c.Accept, c.Orig)
			}
		}
		totalAutoOnly += autoOnly
		totalConfirmed += autoOnlyConfirmed
		t.Logf("%-18s cases %3d, auto-only %2d, auto-only confirmed %d, deliberate disagreements %d",
			name, len(corpora[name]), autoOnly, autoOnlyConfirmed, disagreed)
	}
	for _, d := range disagreements {
		if !used[[2]string{d.file, d.text}] {
			t.Errorf("disagreement %s %q no longer occurs (or came out another way): update the table", d.file, d.text)
		}
	}
	pct := 0.0
	if totalAutoOnly > 0 {
		pct = 100 * float64(totalConfirmed) / float64(totalAutoOnly)
	}
	t.Logf("all corpora: auto-only %d, confirmed without a recorded reason %d (%.1f %%), ceiling %d",
		totalAutoOnly, totalConfirmed, pct, maxAutoOnlyConfirmed)
	if totalConfirmed > maxAutoOnlyConfirmed {
		t.Errorf("%d auto-only cases were confirmed, more than the ceiling of %d", totalConfirmed, maxAutoOnlyConfirmed)
	}
	// Issue 2's bar counts every auto-only case sent to confirmation,
	// recorded disagreements included: at most 2 %.
	t.Logf("all corpora: auto-only sent to confirmation, disagreements included: %d of %d", totalSent, totalAutoOnly)
	if totalAutoOnly > 0 && 100*totalSent > 2*totalAutoOnly {
		t.Errorf("%d of %d auto-only cases were sent to confirmation, more than 2 %%", totalSent, totalAutoOnly)
	}
}
