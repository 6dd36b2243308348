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

// TestRenderLimits: every rendered message is inside Discord's limits
// (a card is a Components V2 message: no content or embeds, at most
// 4,000 characters of text and 40 components, every attachment shown by a
// file component), and an operation that does not fit is attached whole.
func TestRenderLimits(t *testing.T) {
	for name, c := range cards() {
		t.Run(name, func(t *testing.T) {
			m := render(c)
			raw, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			var wire map[string]any
			_ = json.Unmarshal(raw, &wire)
			if n := utf8.RuneCountInString(m.Content); n > maxContent {
				t.Errorf("content is %d characters, over %d", n, maxContent)
			}
			if c.Card == nil {
				if m.Flags&flagComponentsV2 != 0 {
					t.Error("a text message is flagged Components V2")
				}
				return
			}
			if m.Flags&flagComponentsV2 == 0 {
				t.Fatal("a card is not flagged IS_COMPONENTS_V2")
			}
			if _, ok := wire["content"]; ok {
				t.Error("a V2 card sends content")
			}
			if _, ok := wire["embeds"]; ok {
				t.Error("a V2 card sends embeds")
			}
			if n := textSize(m.Components); n > maxTextV2 {
				t.Errorf("text displays hold %d characters, over %d", n, maxTextV2)
			}
			if n := countComponents(m.Components); n > maxComponentsV2 {
				t.Errorf("%d components, over %d", n, maxComponentsV2)
			}
			box := m.Components[len(m.Components)-1]
			if box.Type != componentContainer || box.AccentColor == nil || *box.AccentColor != color(c.Card) {
				t.Errorf("the card's last component is not a container with the state's colour: %+v", box)
			}
			var texts []string
			files := map[string]bool{}
			for _, p := range box.Components {
				switch p.Type {
				case componentTextDisplay:
					texts = append(texts, p.Content)
					if strings.Count(p.Content, "```")%2 != 0 {
						t.Errorf("a text display leaves a code fence open: %q", p.Content)
					}
				case componentFile:
					files[strings.TrimPrefix(p.File.URL, "attachment://")] = true
				case componentRow:
					if len(p.Components) > maxRowButtons {
						t.Errorf("%d buttons in a row", len(p.Components))
					}
				}
			}
			for _, f := range m.Files {
				if !files[f.Name] {
					t.Errorf("%s is attached but no file component shows it: Discord would hide it", f.Name)
				}
			}
			op, _ := adapters.Visible(c.Card.Operation)
			all := strings.Join(texts, "\n")
			shown := strings.Contains(all, "```\n"+op+"\n```")
			attached := len(m.Files) > 0 && m.Files[0].Name == "operation.txt" && m.Files[0].Content == op
			if !shown && !attached {
				t.Errorf("the operation is neither shown whole nor attached whole")
			}
			if !shown && !strings.Contains(all, "attached in full") {
				t.Errorf("a cut operation does not say it is cut")
			}
		})
	}
}

// TestCutNeverLeavesFenceOpen: a message cut inside a code block closes
// the block, within Discord's limit, in a plain message and above a card.
func TestCutNeverLeavesFenceOpen(t *testing.T) {
	long := "The log says:\n```\n" + strings.Repeat("error: disk full on /var\n", 200) + "```\nThat is all."
	for name, c := range map[string]adapters.Content{
		"text":          {Text: long},
		"text and full": {Text: long[:1990], Full: long},
		"above a card":  {Text: long, Card: cards()["pending"].Card},
	} {
		t.Run(name, func(t *testing.T) {
			m := render(c)
			text := m.Content
			if c.Card != nil {
				text = m.Components[0].Content
			}
			if strings.Count(text, "```")%2 != 0 {
				t.Errorf("the cut message leaves a code fence open:\n…%s", lastRunes(text, 120))
			}
			if n := utf8.RuneCountInString(text); n > maxContent {
				t.Errorf("%d characters, over %d", n, maxContent)
			}
		})
	}
}

// buttonsOf are the buttons of a rendered card, wherever they sit.
func buttonsOf(cs []component) []component {
	var out []component
	for _, c := range cs {
		if c.Type == componentButton {
			out = append(out, c)
		}
		out = append(out, buttonsOf(c.Components)...)
	}
	return out
}

func TestRenderButtons(t *testing.T) {
	c := adaptertest.PendingCard("a1b2c3")
	m := render(adapters.Content{Card: &c})
	row := buttonsOf(m.Components)
	if len(row) != 2 || row[0].CustomID != "cs:a:a1b2c3" || row[0].Style != styleDanger || row[1].CustomID != "cs:c:a1b2c3" {
		t.Fatalf("buttons = %+v; want a danger Approve (high risk) and a Cancel carrying only the id", row)
	}
	c.Risk = "medium"
	if m := render(adapters.Content{Card: &c}); buttonsOf(m.Components)[0].Style != styleSuccess {
		t.Errorf("a medium-risk Approve is not the success style")
	}
	if m := render(adapters.Content{Text: "hi"}); len(m.Components) != 0 || m.Components == nil {
		t.Errorf("a text message must send an empty components list (an edit then removes buttons): %+v", m.Components)
	}
}
