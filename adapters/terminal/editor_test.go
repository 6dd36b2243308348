package terminal

import (
	"fmt"
	"io"
	"os"
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
	var kept spill
	got := cutToScreen(text, 24, kept.keep)
	if n := strings.Count(got, "\n"); n != 22 {
		t.Errorf("%d lines on a 24-line screen, want 22:\n%s", n, got)
	}
	for _, want := range []string{"line 0\n", "line 99\n", "79 lines not shown", "the whole text is in " + kept.f.Name() + ", from line 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("cut text lacks %q:\n%s", want, got)
		}
	}
	// What the note says is true: the file holds the whole text.
	t.Cleanup(func() { kept.f.Close(); os.Remove(kept.f.Name()) })
	if saved, err := os.ReadFile(kept.f.Name()); err != nil || string(saved) != text {
		t.Errorf("the file the note names holds %d bytes (%v); want the whole text", len(saved), err)
	}
	if fi, err := os.Stat(kept.f.Name()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode: %v (%v); want 0600", fi.Mode().Perm(), err)
	}
	second := cutToScreen(text, 24, kept.keep)
	if !strings.Contains(second, ", from line 101") {
		t.Errorf("a second cut text does not say where it starts:\n%s", second)
	}
	if short := "a\nb\n"; cutToScreen(short, 24, kept.keep) != short {
		t.Error("a short text was changed")
	}
	if cutToScreen(text, 0, kept.keep) != text {
		t.Error("an unknown screen size cut the text")
	}
}
