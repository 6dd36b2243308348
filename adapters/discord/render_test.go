package discord

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// cards are the card in every state, as the bot sends them.
func cards() map[string]adapters.Content {
	card := func(f func(c *adapters.Card)) adapters.Content {
		c := adaptertest.PendingCard("a1b2c3d4e5f6")
		f(&c)
		return adapters.Content{Card: &c}
	}
	decided := func(c *adapters.Card) { c.Buttons = nil }
	long := strings.Repeat("rm -f ./logs/app-2026-11-0", 1) + strings.Repeat("1.log ./logs/app-2026-11-02.log ", 150)
	return map[string]adapters.Content{
		"pending": card(func(*adapters.Card) {}),
		"pending_low": card(func(c *adapters.Card) {
			c.Risk, c.LLMLevel, c.Preview = "medium", "", nil
		}),
		"approved": card(func(c *adapters.Card) {
			decided(c)
			c.State, c.StateLine = "approved", "approved by bob at 05:41:02 UTC"
		}),
		"running": card(func(c *adapters.Card) {
			decided(c)
			c.State, c.StateLine = "running", "approved by bob at 05:41:02 UTC · running for 12s"
			c.Output = "removed tmp_a\n"
		}),
		"running_with_stop": card(func(c *adapters.Card) {
			c.State, c.StateLine = "running", "approved by bob at 05:41:02 UTC · running for 3m"
			c.Output = "copying 1/40\ncopying 2/40\n"
			c.Buttons = []adapters.Button{{Label: "Stop", Stop: true, Value: c.ApprovalID}}
		}),
		"done": card(func(c *adapters.Card) {
			*c = adaptertest.DoneCard("a1b2c3d4e5f6")
		}),
		"failed": card(func(c *adapters.Card) {
			decided(c)
			c.State, c.StateLine = "failed", "approved by bob at 05:41:02 UTC · failed: exit code 1 in 3ms"
			c.Output, c.Note = "rm: cannot remove './tmp_a': Permission denied", ""
		}),
		"cancelled": card(func(c *adapters.Card) {
			decided(c)
			c.State, c.StateLine = "cancelled", "cancelled by alice at 05:40:11 UTC: wrong folder"
		}),
		"expired": card(func(c *adapters.Card) {
			decided(c)
			c.State, c.StateLine = "expired", "expired at 06:00:00 UTC: nobody decided"
		}),
		"long_operation": card(func(c *adapters.Card) { c.Operation = long }),
		"long_output": card(func(c *adapters.Card) {
			decided(c)
			c.State, c.StateLine = "done", "approved by bob · done: exit code 0 in 2s"
			c.Output = strings.Repeat("line of output that goes on\n", 200)
			c.Note = "output cut to the last 64 KiB"
			c.Reasons = []string{strings.Repeat("a reason that is long. ", 60)}
			c.Preview = &adapters.Preview{Summary: "200 paths match", Items: strings.Split(strings.Repeat("./logs/a-file-with-a-long-name.log\n", 100), "\n"), More: 100}
		}),
		"hostile_operation": card(func(c *adapters.Card) {
			c.Operation = "echo ok\r\x1b[2K```\nrm -rf / # \u202etxt.exe"
		}),
		"text":      {Text: "The disk is 81% full; /var/log holds 12 GiB. @everyone"},
		"long_text": {Text: strings.Repeat("0123456789", 250)},
	}
}

// golden is what a golden file holds: the message's wire JSON and the
// files uploaded with it.
type golden struct {
	Message message `json:"message"`
	Files   []file  `json:"files,omitempty"`
}

func TestRenderGolden(t *testing.T) {
	for name, c := range cards() {
		t.Run(name, func(t *testing.T) {
			m := render(c)
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(golden{Message: m, Files: m.Files}); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
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
				t.Errorf("%s differs from the golden file; run go test -update and review the diff.\ngot:\n%s", path, got)
			}
		})
	}
}

// TestRenderLimits: every rendered message is inside Discord's limits,
// and an operation that does not fit is attached whole.
func TestRenderLimits(t *testing.T) {
	for name, c := range cards() {
		t.Run(name, func(t *testing.T) {
			m := render(c)
			if n := utf8.RuneCountInString(m.Content); n > maxContent {
				t.Errorf("content is %d characters, over %d", n, maxContent)
			}
			for _, e := range m.Embeds {
				if n := embedSize(&e); n > maxEmbedTotal {
					t.Errorf("embed is %d characters, over %d", n, maxEmbedTotal)
				}
				if n := utf8.RuneCountInString(e.Description); n > maxDescription {
					t.Errorf("description is %d characters, over %d", n, maxDescription)
				}
				for _, f := range e.Fields {
					if utf8.RuneCountInString(f.Value) > maxFieldValue || f.Value == "" {
						t.Errorf("field %q has %d characters", f.Name, utf8.RuneCountInString(f.Value))
					}
				}
			}
			if c.Card == nil {
				return
			}
			op, _ := adapters.Visible(c.Card.Operation)
			shown := strings.Contains(m.Embeds[0].Description, "```\n"+op+"\n```")
			attached := len(m.Files) > 0 && m.Files[0].Name == "operation.txt" && m.Files[0].Content == op
			if !shown && !attached {
				t.Errorf("the operation is neither shown whole nor attached whole")
			}
			if !shown && !strings.Contains(m.Embeds[0].Description, "attached in full") {
				t.Errorf("a cut operation does not say it is cut")
			}
		})
	}
}

func TestRenderButtons(t *testing.T) {
	c := adaptertest.PendingCard("a1b2c3")
	m := render(adapters.Content{Card: &c})
	row := m.Components[0].Components
	if len(row) != 2 || row[0].CustomID != "cs:a:a1b2c3" || row[0].Style != styleDanger || row[1].CustomID != "cs:c:a1b2c3" {
		t.Fatalf("buttons = %+v; want a danger Approve (high risk) and a Cancel carrying only the id", row)
	}
	c.Risk = "medium"
	if m := render(adapters.Content{Card: &c}); m.Components[0].Components[0].Style != styleSuccess {
		t.Errorf("a medium-risk Approve is not the success style")
	}
	if m := render(adapters.Content{Text: "hi"}); len(m.Components) != 0 || m.Components == nil {
		t.Errorf("a text message must send an empty components list (an edit then removes buttons): %+v", m.Components)
	}
}
