package approval

import (
	"strings"
	"testing"
)

func TestEventKey(t *testing.T) {
	long := strings.Repeat("E", 500)
	tests := []struct {
		name string
		id   string
		kept bool // the key is the id itself
	}{
		{"a Slack event id", "slack:Ev08ABCDEF12", true},
		{"at the limit", strings.Repeat("e", maxEventKey), true},
		{"one past the limit", strings.Repeat("e", maxEventKey+1), false},
		{"long", long, false},
		{"starts like a hash", "#abc", false},
	}
	seen := map[string]string{}
	for _, tc := range tests {
		got := EventKey(tc.id)
		if (got == tc.id) != tc.kept {
			t.Errorf("%s: EventKey = %.40q; kept as is = %v, want %v", tc.name, got, got == tc.id, tc.kept)
		}
		if len(got) > maxEventKey {
			t.Errorf("%s: EventKey is %d bytes, want at most %d", tc.name, len(got), maxEventKey)
		}
		if EventKey(tc.id) != got {
			t.Errorf("%s: EventKey is not deterministic", tc.name)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("%s: same key as %s", tc.name, other)
		}
		seen[got] = tc.name
	}
	if EventKey(long+"1") == EventKey(long+"2") {
		t.Error("two long ids that differ at the end have one key")
	}
}
