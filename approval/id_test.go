package approval

import (
	"encoding/json"
	"testing"
)

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewID()
		if !ValidID(id) {
			t.Fatalf("NewID() = %q, not valid", id)
		}
		if seen[id] {
			t.Fatalf("NewID() repeated %q", id)
		}
		seen[id] = true
	}
}

func TestValidID(t *testing.T) {
	tests := []struct {
		name string
		id   string
		want bool
	}{
		{"new", NewID(), true},
		{"empty", "", false},
		{"short", "abc", false},
		{"upper case", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", false},
		{"digit 1", "abcdefghijklmnopqrstuvwxy1", false},
		{"hash tag", "abcdefghijklmnopqrstuvwx{}", false},
		{"26 ok", "abcdefghijklmnopqrstuvwxyz", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ValidID(tc.id); got != tc.want {
				t.Errorf("ValidID(%q) = %v, want %v", tc.id, got, tc.want)
			}
		})
	}
}

func TestArgsHash(t *testing.T) {
	base := ArgsHash(json.RawMessage(`{"a":1,"b":"<x>"}`))
	tests := []struct {
		name string
		args string
		same bool
	}{
		{"identical", `{"a":1,"b":"<x>"}`, true},
		{"white space", "{ \"a\" : 1,\n \"b\": \"<x>\" }", true},
		{"key order", `{"b":"<x>","a":1}`, true},
		{"html escaped", `{"a":1,"b":"\u003cx\u003e"}`, true},
		{"other number", `{"a":1.0,"b":"<x>"}`, false},
		{"other value", `{"a":2,"b":"<x>"}`, false},
		{"extra key", `{"a":1,"b":"<x>","c":null}`, false},
		{"invalid", `{"a":1,"b":"<x>"`, false},
		{"trailing data", `{"a":1,"b":"<x>"} {}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ArgsHash(json.RawMessage(tc.args)) == base; got != tc.same {
				t.Errorf("ArgsHash(%s) == ArgsHash of the base: %v, want %v", tc.args, got, tc.same)
			}
		})
	}
	if len(base) != 64 {
		t.Errorf("ArgsHash length %d, want 64 hex digits", len(base))
	}
}
