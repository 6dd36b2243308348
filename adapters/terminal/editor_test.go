package terminal

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestInterrupts: the first Ctrl-C clears the line, the second in a row
// also ends the input; any other key in between starts the count again.
func TestInterrupts(t *testing.T) {
	var events []bool
	k := &interrupts{r: strings.NewReader("ls\x03pwd\x03\x03"), on: func(quit bool) { events = append(events, quit) }}
	got, err := io.ReadAll(k)
	if err != nil {
		t.Fatal(err)
	}
	want := "ls\x05\x15pwd\x05\x15\x05\x15\x04"
	if string(got) != want {
		t.Errorf("keys = %q, want %q", got, want)
	}
	if fmt.Sprint(events) != "[false false true]" {
		t.Errorf("events = %v, want [false false true]", events)
	}
}

func TestCutToScreen(t *testing.T) {
	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	text := strings.Join(lines, "\n") + "\n"
	got := cutToScreen(text, 24)
	if n := strings.Count(got, "\n"); n != 22 {
		t.Errorf("%d lines on a 24-line screen, want 22:\n%s", n, got)
	}
	for _, want := range []string{"line 0\n", "line 99\n", "79 lines not shown", "the full text is in the tool result and the audit log"} {
		if !strings.Contains(got, want) {
			t.Errorf("cut text lacks %q:\n%s", want, got)
		}
	}
	if short := "a\nb\n"; cutToScreen(short, 24) != short {
		t.Error("a short text was changed")
	}
	if cutToScreen(text, 0) != text {
		t.Error("an unknown screen size cut the text")
	}
}
