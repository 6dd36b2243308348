package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBudgetConfig: llm.budget's limits are whole numbers of tokens, 0
// or none for no limit; anything else is refused at start with its key,
// whether or not a model is configured.
func TestBudgetConfig(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv(DefaultRedisURLEnv, "")
	for _, tt := range []struct {
		name, yaml string
		want       []string // empty: accepted
	}{
		{"limits", "llm:\n  budget:\n    per_turn: 50000\n    per_conversation: 200000\n    per_channel_per_day: 2000000\n", nil},
		{"zero is no limit", "llm:\n  budget:\n    per_turn: 0\n", nil},
		{"negative", "llm:\n  budget:\n    per_turn: -5\n", []string{"llm.budget.per_turn: -5 is negative", "or 0 (or leave it out) for no limit"}},
		{"every negative named", "llm:\n  budget:\n    per_conversation: -1\n    per_channel_per_day: -2\n",
			[]string{"llm.budget.per_conversation: -1 is negative", "llm.budget.per_channel_per_day: -2 is negative"}},
		{"a fraction", "llm:\n  budget:\n    per_channel_per_day: 1.5\n", []string{"llm.budget.per_channel_per_day", "1.5"}},
		{"words", "llm:\n  budget:\n    per_conversation: lots\n", []string{"llm.budget.per_conversation", "lots"}},
		{"a typo", "llm:\n  budget:\n    per_day: 10\n", []string{"llm.budget.per_day: unknown key; the keys here are per_channel_per_day, per_conversation, per_turn"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := dispatch([]string{"config", "check", "--config", path}, strings.NewReader(""), &stdout, &stderr)
			if len(tt.want) == 0 {
				if code != 0 {
					t.Fatalf("exit %d, want 0: %s", code, stderr.String())
				}
				return
			}
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr: %s", code, stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("error %q does not say %q", stderr.String(), w)
				}
			}
		})
	}
}
