package terminal

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"golang.org/x/term"
)

// editorOn is the prompt's line editor (x/term behind the keeper) reading
// input as a terminal would send it.
func editorOn(input string) *editor {
	keys := &interrupts{r: strings.NewReader(input), on: func(bool) {}}
	var out bytes.Buffer
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{keys, &out}, "> ")
	return &editor{t: t, keys: keys}
}

// readAll reads every line the editor gives until the end of input.
func readAll(t *testing.T, ed *editor) []inLine {
	t.Helper()
	var got []inLine
	for {
		l, err := ed.readLine(MaxLine)
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l)
	}
}

// A pasted or typed line of 6,000 characters reaches the bot whole:
// x/term alone keeps its first 4,096 and drops the rest without a word,
// which turned "!run echo <4,069 chars> && rm -rf ./data/cache/tmp" into a
// card for "rm -rf ./data".
func TestLongLineArrivesWhole(t *testing.T) {
	command := "!run echo " + strings.Repeat("x", 4069) + " && rm -rf ./data/cache/tmp"
	six := "!run echo " + strings.Repeat("é", 2995) // 6,000 bytes, 3,000 characters of two bytes
	six += strings.Repeat("y", 6000-len(six))
	for _, tc := range []struct {
		name, input string
		want        []string
	}{
		{"pasted", "\x1b[200~" + command + "\x1b[201~\r", []string{command}},
		{"typed", command + "\r", []string{command}},
		{"pasted, multi-byte, then a short line", "\x1b[200~" + six + "\x1b[201~\r\npwd\r", []string{six, "pwd"}},
		{"two long lines in one paste", "\x1b[200~" + command + "\r" + six + "\x1b[201~\r", []string{command, six}},
		{"typed, with backspaces past the editor's part", command + "\x7f\x7f\x7fmp\r", []string{command[:len(command)-3] + "mp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := readAll(t, editorOn(tc.input))
			if len(got) != len(tc.want) {
				t.Fatalf("%d lines, want %d", len(got), len(tc.want))
			}
			for i, l := range got {
				if l.text != tc.want[i] || !l.sendable() {
					t.Errorf("line %d: %d bytes (over %d, refused %q), want %d bytes, whole; ends %q", i+1, len(l.text), l.over, l.refused, len(tc.want[i]), tail(l.text))
				}
			}
		})
	}
}

// A long line whose cursor was moved cannot be put together exactly: it is
// refused with a message, never cut; and one over MaxLine is refused with
// its size.
func TestLongLineRefusedNeverCut(t *testing.T) {
	command := "!run echo " + strings.Repeat("x", 4069) + " && rm -rf ./data/cache/tmp"
	got := readAll(t, editorOn("ab\x1b[D"+command+"\rpwd\r"))
	if len(got) != 2 || got[0].refused == "" || got[0].text != "" || got[1].text != "pwd" {
		t.Fatalf("lines = %+v; want the long edited line refused, then pwd", got)
	}
	if !strings.Contains(got[0].refused, "was not sent") {
		t.Errorf("refusal %q", got[0].refused)
	}
	huge := strings.Repeat("z", MaxLine+10)
	got = readAll(t, editorOn("\x1b[200~"+huge+"\x1b[201~\r"))
	if len(got) != 1 || got[0].over != MaxLine+10 || got[0].text != "" {
		t.Fatalf("a line over MaxLine: %d lines, over %d; want it refused with its size", len(got), got[0].over)
	}
}

func tail(s string) string {
	if len(s) > 30 {
		return s[len(s)-30:]
	}
	return s
}
