package tools_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/countersign/countersign/tools"
)

func TestCappedBuffer(t *testing.T) {
	tests := []struct {
		name      string
		limit     int
		writes    []string
		want      string
		total     int64
		truncated bool
		note      string
	}{
		{name: "under the cap", limit: 10, writes: []string{"abc", "de"}, want: "abcde", total: 5},
		{name: "exactly the cap", limit: 5, writes: []string{"abcde"}, want: "abcde", total: 5},
		{name: "over the cap", limit: 4, writes: []string{"abc", "def", "ghi"}, want: "abcd", total: 9, truncated: true,
			note: "stdout was 9 bytes; only the first 4 are shown"},
		{name: "cut inside a character", limit: 4, writes: []string{"abcé"}, want: "abc", total: 5, truncated: true},
		{name: "zero cap", limit: 0, writes: []string{"x"}, want: "", total: 1, truncated: true},
		{name: "negative cap", limit: -3, writes: []string{"x"}, want: "", total: 1, truncated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tools.NewCappedBuffer(tt.limit)
			for _, w := range tt.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v; a capped buffer never fails a writer", n, err)
				}
			}
			if b.String() != tt.want || b.Total() != tt.total || b.Truncated() != tt.truncated {
				t.Errorf("got %q total %d truncated %v", b.String(), b.Total(), b.Truncated())
			}
			if note := b.Note("stdout"); !strings.Contains(note, tt.note) || (!tt.truncated && note != "") {
				t.Errorf("note %q, want %q", note, tt.note)
			}
		})
	}
}

func TestCappedBufferConcurrent(t *testing.T) {
	b := tools.NewCappedBuffer(100)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("0123456789"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if b.Total() != 4000 || len(b.Bytes()) != 100 {
		t.Fatalf("total %d kept %d", b.Total(), len(b.Bytes()))
	}
}

func TestCapText(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		want  string
		cut   bool
	}{
		{"hello", 10, "hello", false},
		{"hello", 5, "hello", false},
		{"hello", 3, "hel", true},
		{"héllo", 2, "h", true},
		{"日本語", 4, "日", true},
		{"日本語", 6, "日本", true},
		{"x", 0, "", true},
	}
	for _, tt := range tests {
		got, cut := tools.CapText(tt.in, tt.limit)
		if got != tt.want || cut != tt.cut {
			t.Errorf("CapText(%q, %d) = %q, %v; want %q, %v", tt.in, tt.limit, got, cut, tt.want, tt.cut)
		}
	}
}

func TestLooksBinary(t *testing.T) {
	tests := []struct {
		name string
		in   string
		cut  bool
		want bool
	}{
		{name: "text", in: "hello\nworld", want: false},
		{name: "utf-8", in: "café 日本", want: false},
		{name: "NUL", in: "a\x00b", want: true},
		{name: "latin-1", in: "caf\xe9!", want: true},
		{name: "whole content ending in a lead byte", in: "caf\xe9", want: true},
		{name: "cut chunk ending inside a character", in: "caf\xc3", cut: true, want: false},
		{name: "cut chunk with a stray byte earlier", in: "\xffabc", cut: true, want: true},
		{name: "empty", in: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tools.LooksBinary([]byte(tt.in), tt.cut); got != tt.want {
				t.Errorf("LooksBinary(%q, %v) = %v", tt.in, tt.cut, got)
			}
		})
	}
}

func TestFormatCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := tools.FormatCount(n); got != want {
			t.Errorf("FormatCount(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestHexPrefixAndJoinNotes(t *testing.T) {
	if got := tools.HexPrefix([]byte{0x89, 'P', 'N', 'G'}, 3); got != "89 50 4e" {
		t.Errorf("HexPrefix = %q", got)
	}
	if got := tools.JoinNotes("", "a", "", "b"); got != "a; b" {
		t.Errorf("JoinNotes = %q", got)
	}
}

func ExampleCappedBuffer() {
	b := tools.NewCappedBuffer(5)
	fmt.Fprint(b, "hello, world")
	fmt.Println(b.String())
	fmt.Println(b.Note("stdout"))
	// Output:
	// hello
	// stdout was 12 bytes; only the first 5 are shown
}
