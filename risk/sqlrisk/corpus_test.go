package sqlrisk

import (
	"testing"

	"github.com/countersign/countersign/internal/corpus"
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

// TestPeerCorpora runs every execute_sql case of the peer corpora: danger
// and unknown map to confirm, read-only to auto. No case may be auto-run
// outside its accept list, no block-only case may go unblocked, and the
// auto-only cases sent to confirmation stay under the ceiling.
func TestPeerCorpora(t *testing.T) {
	cases := corpus.Load(t, "execute_sql")
	a := newAnalyzer(t)
	var total, autoOnly, autoOnlyConfirmed int
	seenDisagreement := map[string]bool{}
	for _, c := range cases {
		total++
		got := a.Analyze(c.Text)
		decision := "confirm"
		if verdictOf(got) == auto {
			decision = "auto"
		}
		if decision == "auto" && !c.Allows("auto") {
			t.Errorf("%s: %q (%s) was auto-run; accept %v", c.Where(), c.Text, c.Name, c.Accept)
		}
		if c.BlockOnly() {
			t.Errorf("%s: %q (%s) must be blocked; the SQL analyzer never blocks, got %s",
				c.Where(), c.Text, c.Name, decision)
		}
		if c.AutoOnly() {
			autoOnly++
			if decision != "auto" {
				autoOnlyConfirmed++
				listed := false
				for _, d := range disagreements {
					if d.sql == c.Text {
						listed = true
						seenDisagreement[d.sql] = true
					}
				}
				if !listed {
					t.Logf("%s: auto-only %q (%s) sent to confirm: %+v", c.Where(), c.Text, c.Name, got)
				}
			}
		}
	}
	if total == 0 {
		t.Skip("skipping: no execute_sql case in the peer corpora")
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
