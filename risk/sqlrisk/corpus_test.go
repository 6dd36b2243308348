package sqlrisk

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// maxAutoOnlyConfirmed is the checked-in ceiling on peer cases labelled
// read-only ("auto" only) that the analyzer sends to confirmation. The
// disagreements below count against it.
const maxAutoOnlyConfirmed = 1

// disagreements lists peer labels this project's policy deliberately does
// not follow, with the reason.
var disagreements = []struct {
	sql    string
	reason string
}{
	{
		"WITH replace AS (SELECT 1) SELECT * FROM replace",
		"REPLACE is a reserved word in MySQL and MariaDB: the server rejects this text " +
			"(MariaDB 10.11: ERROR 1064), so the parser does too, and text that does not parse is never auto-run",
	},
}

// corpusCase is one line of ../shared/corpora/*.jsonl.
type corpusCase struct {
	Tool string `json:"tool"`
	Args struct {
		SQL string `json:"sql"`
	} `json:"args"`
	Accept []string `json:"accept"`
	Source string   `json:"source"`
	Name   string   `json:"name"`
}

// corporaDir finds ../shared/corpora next to the repository root (the folder
// holding go.mod), or skips the test.
func corporaDir(t *testing.T) string {
	t.Helper()
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
			t.Skip("skipping: no go.mod above the package, so no ../shared/corpora to read")
		}
		dir = parent
	}
	corpora := filepath.Join(dir, "..", "shared", "corpora")
	if _, err := os.Stat(corpora); err != nil {
		t.Skipf("skipping: peer corpora not found at %s (%v)", corpora, err)
	}
	return corpora
}

func readCorpus(t *testing.T, path string) []corpusCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open corpus: %v", err)
	}
	defer f.Close()
	var cases []corpusCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var c corpusCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		if c.Tool == "execute_sql" {
			cases = append(cases, c)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return cases
}

// TestPeerCorpora runs every execute_sql case of the peer corpora: danger
// and unknown map to confirm, read-only to auto. No case may be auto-run
// outside its accept list, no block-only case may go unblocked, and the
// auto-only cases sent to confirmation stay under the ceiling.
func TestPeerCorpora(t *testing.T) {
	dir := corporaDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	a := newAnalyzer(t)
	var total, autoOnly, autoOnlyConfirmed int
	seenDisagreement := map[string]bool{}
	for _, file := range files {
		for _, c := range readCorpus(t, file) {
			total++
			got := a.Analyze(c.Args.SQL)
			decision := "confirm"
			if verdictOf(got) == auto {
				decision = "auto"
			}
			if decision == "auto" && !slices.Contains(c.Accept, "auto") {
				t.Errorf("%s: %q (%s) was auto-run; accept %v", filepath.Base(file), c.Args.SQL, c.Name, c.Accept)
			}
			if len(c.Accept) == 1 && c.Accept[0] == "block" {
				t.Errorf("%s: %q (%s) must be blocked; the SQL analyzer never blocks, got %s",
					filepath.Base(file), c.Args.SQL, c.Name, decision)
			}
			if len(c.Accept) == 1 && c.Accept[0] == "auto" {
				autoOnly++
				if decision != "auto" {
					autoOnlyConfirmed++
					listed := false
					for _, d := range disagreements {
						if d.sql == c.Args.SQL {
							listed = true
							seenDisagreement[d.sql] = true
						}
					}
					if !listed {
						t.Logf("%s: auto-only %q (%s) sent to confirm: %+v", filepath.Base(file), c.Args.SQL, c.Name, got)
					}
				}
			}
		}
	}
	if total == 0 {
		t.Skipf("skipping: no execute_sql case in %s", dir)
	}
	for _, d := range disagreements {
		if !seenDisagreement[d.sql] {
			t.Errorf("disagreement %q is listed but no longer disagrees with a peer label (or its case is gone): drop it", d.sql)
		}
	}
	share := 0.0
	if autoOnly > 0 {
		share = 100 * float64(autoOnlyConfirmed) / float64(autoOnly)
	}
	t.Logf("%d execute_sql cases; %d of %d auto-only cases sent to confirm (%.1f %%), ceiling %d; %d deliberate disagreements",
		total, autoOnlyConfirmed, autoOnly, share, maxAutoOnlyConfirmed, len(disagreements))
	if autoOnlyConfirmed > maxAutoOnlyConfirmed {
		t.Errorf("%d auto-only cases sent to confirm, over the ceiling of %d", autoOnlyConfirmed, maxAutoOnlyConfirmed)
	}
}
