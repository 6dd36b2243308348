package main

import (
	"context"
	"github.com/countersign/countersign/approval"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/countersign/countersign/internal/testenv"
)

func TestRootWarning(t *testing.T) {
	yes := true
	no := false
	tests := []struct {
		name string
		cfg  func(*fileConfig)
		euid int
		warn bool
	}{
		{"root without run_as", func(*fileConfig) {}, 0, true},
		{"not root", func(*fileConfig) {}, 1000, false},
		{"root with run_as", func(c *fileConfig) { c.Tools.Command.Config.RunAs = "nobody" }, 0, false},
		{"root, allowed", func(c *fileConfig) { c.Tools.Command.AllowRoot = true }, 0, false},
		{"root, commands off", func(c *fileConfig) { c.Tools.Command.Enabled = &no }, 0, false},
		{"root, commands on", func(c *fileConfig) { c.Tools.Command.Enabled = &yes }, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg fileConfig
			tt.cfg(&cfg)
			w := rootWarning(cfg, tt.euid)
			if got := w != ""; got != tt.warn {
				t.Fatalf("warning = %q, want one: %v", w, tt.warn)
			}
			if tt.warn && (!strings.Contains(w, "tools.execute_command.run_as") || !strings.Contains(w, "/proc")) {
				t.Errorf("the warning does not say why or how: %q", w)
			}
		})
	}
}

// TestRunWarnsAsRoot: as root, run starts (it must work out of the box in
// CI and containers) and says loudly why commands as root are unsafe;
// allow_root silences it.
func TestRunWarnsAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the warning is for a bot running as root")
	}
	t.Setenv(DefaultRedisURLEnv, "")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Chdir(t.TempDir())
	for _, tt := range []struct {
		config string
		warn   bool
	}{
		{"", true},
		{writeConfig(t, "tools:\n  execute_command:\n    allow_root: true\n"), false},
	} {
		out := &syncBuffer{}
		if err := run(context.Background(), tt.config, strings.NewReader("!run echo ok\n"), out, io.Discard); err != nil {
			t.Fatalf("run: %v", err)
		}
		if got := strings.Contains(out.String(), "warning: the bot runs as root and tools.execute_command.run_as is not set"); got != tt.warn {
			t.Errorf("config %q: warning shown = %v, want %v:\n%s", tt.config, got, tt.warn, out)
		}
	}
}

// TestQuitSaysWhatBecomesOfPendingCards: at the end of the input, a card
// still waiting is said to be lost with the memory store, or kept in Redis.
func TestQuitSaysWhatBecomesOfPendingCards(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	for _, tt := range []struct {
		name, redis, want string
	}{
		{"memory", "", "1 approval is lost: the store is in memory"},
		{"redis", "redis", "1 approval stays pending in Redis"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := ""
			if tt.redis != "" {
				url = testenv.RedisURL(t)
			}
			t.Setenv(DefaultRedisURLEnv, url)
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "tmp_a"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Chdir(dir)
			// A prefix of its own, so the card left in Redis is no other test's.
			conf := writeConfig(t, "store:\n  prefix: cs-quit-"+approval.NewID()+"\n")
			out := &syncBuffer{}
			if err := run(context.Background(), conf, strings.NewReader("!run rm -rf ./tmp_*\n"), out, io.Discard); err != nil {
				t.Fatalf("run: %v", err)
			}
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
		})
	}
}
