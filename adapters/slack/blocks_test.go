package slack

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func decided(c adapters.Card, state, line string) adapters.Card {
	c.State, c.StateLine, c.Buttons = state, line, nil
	return c
}

// cards are the card in every state it can show.
func cards() map[string]struct {
	card  adapters.Card
	files attached
} {
	pending := adaptertest.PendingCard("a1b2c3")
	pending.Requester = "U0ALICE"
	running := decided(pending, "running", "approved by bob at 05:41:02 UTC · running for 3s")
	running.Output = "removing tmp_a\n"
	running.Buttons = []adapters.Button{{Label: "Stop", Stop: true, Value: "a1b2c3"}}
	done := decided(pending, "done", "approved by bob at 05:41:02 UTC · done: exit code 0 in 12ms")
	done.Output = "removed tmp_a\nremoved tmp_b\n"
	failed := decided(pending, "failed", "approved by bob at 05:41:02 UTC · failed: exit code 1 in 40ms")
	failed.Output = "rm: cannot remove './tmp_a': Permission denied\n"
	failed.Note = "output cut to the last 2000 bytes"
	long := pending
	long.Operation = "psql -c \"" + strings.Repeat("DELETE FROM sessions WHERE id = 42; ", 200) + "\""
	sqlPreview := pending
	sqlPreview.Tool, sqlPreview.Operation, sqlPreview.Risk, sqlPreview.LLMLevel = "execute_sql", "DELETE FROM orders WHERE created < '2020-01-01' AND note <> '<!channel> & *bold*'", "high", ""
	sqlPreview.Preview = &adapters.Preview{Summary: "EXPLAIN: about 1,204 rows", Items: []string{"id=1 select_type=DELETE table=orders rows=1204"}}
	hostile := pending
	hostile.Operation = "rm -rf ./data\r\x1b[2Kecho hello # \u202etxt.exe"
	longOutput := decided(pending, "done", "approved by bob at 05:41:02 UTC · done: exit code 0 in 2s")
	longOutput.Output = strings.Repeat("line of output\n", 400)
	return map[string]struct {
		card  adapters.Card
		files attached
	}{
		"pending":        {card: pending},
		"approved":       {card: decided(pending, "approved", "approved by bob at 05:41:02 UTC · starting")},
		"running":        {card: running},
		"done":           {card: done},
		"failed":         {card: failed},
		"cancelled":      {card: decided(pending, "cancelled", "cancelled by alice at 05:41:02 UTC: wrong folder")},
		"expired":        {card: decided(pending, "expired", "expired at 06:00:00 UTC: nobody decided in time")},
		"long_operation": {card: long, files: attached{Operation: fileName("operation", "a1b2c3")}},
		"sql_preview":    {card: sqlPreview},
		"hostile":        {card: hostile},
		"long_output":    {card: longOutput, files: attached{Output: fileName("output", "a1b2c3")}},
	}
}

func TestCardGolden(t *testing.T) {
	for name, tc := range cards() {
		t.Run(name, func(t *testing.T) {
			got, err := json.MarshalIndent(blocks(tc.card, tc.files), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", name+".golden.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("card %s differs from %s (go test -update rewrites it):\n%s", name, path, got)
			}
		})
	}
}

// TestCardLimits: whatever a card holds, its blocks stay inside Slack's
// limits, and what is cut says so.
func TestCardLimits(t *testing.T) {
	c := adaptertest.PendingCard("a1b2c3")
	c.Title = strings.Repeat("Title ", 60)
	c.Operation = strings.Repeat("é", 5000)
	c.Requester = strings.Repeat("<!channel>", 500)
	for i := 0; i < 400; i++ {
		c.Reasons = append(c.Reasons, "a reason that goes on for quite a while, ")
	}
	c.Preview = &adapters.Preview{Summary: strings.Repeat("s", 4000), More: 7}
	for i := 0; i < 500; i++ {
		c.Preview.Items = append(c.Preview.Items, strings.Repeat("f", 100))
	}
	c.StateLine = strings.Repeat("state ", 1000)
	c.Output = strings.Repeat("o", 10000)
	c.Note = strings.Repeat("n", 5000)
	c.Buttons[0].Label = strings.Repeat("Approve ", 20)
	bs := blocks(c, attached{Operation: "operation-a1b2c3.txt"})
	if len(bs) > maxBlocks {
		t.Errorf("%d blocks, over %d", len(bs), maxBlocks)
	}
	raw, _ := json.Marshal(bs)
	var generic []map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(path+"."+k, e)
			}
		case []any:
			for _, e := range x {
				walk(path+"[]", e)
			}
		case string:
			limit := maxSection
			switch {
			case strings.Contains(path, "confirm.text"):
				limit = maxConfirmText
			case strings.Contains(path, "confirm.title"):
				limit = maxConfirmHead
			case strings.Contains(path, "confirm.confirm"), strings.Contains(path, "confirm.deny"):
				limit = maxConfirmBtn
			case strings.HasSuffix(path, "elements[].text.text") && !strings.Contains(path, "confirm"):
				limit = maxButton
			}
			if n := utf8.RuneCountInString(x); n > limit {
				t.Errorf("%s holds %d characters, over %d", path, n, limit)
			}
			if strings.Contains(x, "<!channel>") {
				t.Errorf("%s holds a raw <!channel>: it would ping everyone", path)
			}
		}
	}
	walk("blocks", generic)
	if !strings.Contains(string(raw), "operation-a1b2c3.txt") {
		t.Error("a cut operation does not name the file that holds all of it")
	}
	if !strings.Contains(string(raw), "and 487 more") {
		t.Error("preview items beyond the shown ones are not counted (want 480 unlisted + 7 more)")
	}
}

func TestExpiryInReadersTimeZone(t *testing.T) {
	c := adaptertest.PendingCard("a1b2c3")
	c.ExpiresAt = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	raw, _ := json.Marshal(blocks(c, attached{}))
	if !strings.Contains(string(raw), `\u003c!date^1795327200^{date_short_pretty} at {time}|2026-11-22 06:00 UTC\u003e`) {
		t.Errorf("the expiry is not a <!date^…> in the reader's time zone:\n%s", raw)
	}
}
