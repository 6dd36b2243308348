package risk

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

// corpusCase is one line of ../shared/corpora/*.jsonl (see its README).
type corpusCase struct {
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Accept []Decision      `json:"accept"`
	Source string          `json:"source"`
	Orig   string          `json:"orig"`
	Name   string          `json:"name"`

	file string
	line int
	text string // the command or SQL, for messages and the disagreement table
}

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
	{file: "dbhub_sql.jsonl", text: "WITH replace AS (SELECT 1) SELECT * FROM replace", got: Confirm,
		reason: "REPLACE is a reserved word in MySQL and MariaDB, so the server rejects this text too; " +
			"SQL that does not parse is never whitelisted (SPEC §2.6)"},
}

// findCorpora returns ../shared/corpora relative to the repository root, or
// why it is not there.
func findCorpora() (dir, missing string) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err.Error()
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "no go.mod above the package directory"
		}
		dir = parent
	}
	corpora := filepath.Join(dir, "..", "shared", "corpora")
	if _, err := os.Stat(corpora); err != nil {
		return "", corpora + " is absent (the corpora live beside the repository, never in it)"
	}
	return corpora, ""
}

// corporaDir is findCorpora, skipping the test when they are absent.
func corporaDir(t testing.TB) string {
	t.Helper()
	dir, missing := findCorpora()
	if missing != "" {
		t.Skip("peer corpora not checked: " + missing)
	}
	return dir
}

// loadCorpora reads every case of every corpus file, by file name.
func loadCorpora(t testing.TB) (map[string][]corpusCase, []string) {
	t.Helper()
	dir := corporaDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Skipf("peer corpora not checked: no *.jsonl in %s", dir)
	}
	sort.Strings(files)
	out := map[string][]corpusCase{}
	var names []string
	for _, path := range files {
		name := filepath.Base(path)
		names = append(names, name)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			if len(sc.Bytes()) == 0 {
				continue
			}
			var c corpusCase
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("%s:%d: %v", name, n, err)
			}
			c.file, c.line = name, n
			var a struct {
				Command string `json:"command"`
				SQL     string `json:"sql"`
			}
			_ = json.Unmarshal(c.Args, &a)
			c.text = a.Command + a.SQL
			if len(c.Accept) == 0 {
				t.Fatalf("%s:%d: no accept list", name, n)
			}
			out[name] = append(out[name], c)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return out, names
}

// TestCorpora runs every peer case through the default policy in smart mode.
// It fails on an auto-run the peer forbids, on a block-only case that is not
// blocked, on any other verdict outside the accept list that the
// disagreement table does not explain, and when more auto-only cases are
// confirmed than maxAutoOnlyConfirmed allows.
func TestCorpora(t *testing.T) {
	corpora, names := loadCorpora(t)
	p := mustPolicy(t, Config{})
	listed := map[[2]string]disagreement{}
	for _, d := range disagreements {
		listed[[2]string{d.file, d.text}] = d
	}
	used := map[[2]string]bool{}

	var totalAutoOnly, totalConfirmed int
	for _, name := range names {
		var autoOnly, autoOnlyConfirmed, disagreed int
		for _, c := range corpora[name] {
			v := p.Assess(Call{Tool: c.Tool, Args: c.Args, Mode: Smart})
			ok := slices.Contains(c.Accept, v.Decision)
			isAutoOnly := len(c.Accept) == 1 && c.Accept[0] == Auto
			isBlockOnly := len(c.Accept) == 1 && c.Accept[0] == Block
			if isAutoOnly {
				autoOnly++
			}
			key := [2]string{c.file, c.text}
			d, deliberate := listed[key]
			switch {
			case ok:
				if deliberate {
					t.Errorf("%s:%d %q is in the disagreement table but now agrees with the peer (%s): remove it", c.file, c.line, c.text, v.Decision)
				}
			case deliberate && d.got == v.Decision:
				if !used[key] {
					t.Logf("%s:%d %q: %s, not %v as the peer says (%s): %s", c.file, c.line, c.text, v.Decision, c.Accept, c.Orig, d.reason)
				}
				used[key] = true
				disagreed++
			case v.Decision == Auto:
				// A wrong auto-run is the worst bug: only a listed, reasoned
				// disagreement excuses one.
				t.Errorf("%s:%d auto-ran %q, peer accepts only %v (%s); reasons %q", c.file, c.line, c.text, c.Accept, c.Orig, v.Reasons)
			case isAutoOnly && v.Decision == Confirm:
				autoOnlyConfirmed++
				t.Logf("%s:%d auto-only %q was confirmed: %s %q", c.file, c.line, c.text, v.Rule, v.Reasons)
			case isBlockOnly:
				t.Errorf("%s:%d block-only %q was not blocked: %s %s %q", c.file, c.line, c.text, v.Decision, v.Rule, v.Reasons)
			default:
				t.Errorf("%s:%d %q came out %s (%s %q), peer accepts %v (%s)", c.file, c.line, c.text, v.Decision, v.Rule, v.Reasons, c.Accept, c.Orig)
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
}
