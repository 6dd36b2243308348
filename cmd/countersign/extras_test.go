package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/countersign/countersign/adapters/slack/slacktest"
)

// TestConfigCheckSaysExtras: config check says, per platform, which
// extras its adapter has and which it lacks with the fallback, as the bot
// logs at start (issue 24: a missing capability is said, never silent).
func TestConfigCheckSaysExtras(t *testing.T) {
	fake := slacktest.New(t)
	t.Setenv(EnvConfig, "")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv(DefaultRedisURLEnv, "")
	t.Setenv("SLACK_SIGNING_SECRET", "")
	t.Setenv("DISCORD_BOT_TOKEN", "")
	t.Chdir(t.TempDir())
	noStatus := filepath.Join(t.TempDir(), "countersign.yaml")
	writeFile(t, noStatus, "slack:\n  status: false\n")
	tests := []struct {
		name   string
		slack  bool
		config string
		want   string
	}{
		{"terminal", false, "", "# terminal extras: stream, by-email; lacks buttons (cards show the words to type: approve <id>, cancel <id> [reason]), forms ("},
		{"slack", true, "", "# slack extras: buttons, forms, status, stream, home, undelivered, link, permalink, by-email\n"},
		{"slack with its status off", true, noStatus, "# slack extras: buttons, forms, stream, home, undelivered, link, permalink, by-email; lacks status (what a turn does is posted as messages)\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range fake.Env() {
				if !tc.slack {
					v = ""
				}
				t.Setenv(k, v)
			}
			args := []string{"check"}
			if tc.config != "" {
				args = append(args, "--config", tc.config)
			}
			var out, errs strings.Builder
			if code := configMain(args, &out, &errs); code != 0 {
				t.Fatalf("config check = %d:\n%s%s", code, out.String(), errs.String())
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("config check does not say %q:\n%s", tc.want, out.String())
			}
		})
	}
}
