package main

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// helpCommands is every subcommand, as typed. TestEveryCommandAnswersHelp
// checks that it lists every command the usage names.
var helpCommands = [][]string{
	{"run"}, {"assess"}, {"config"}, {"config", "check"}, {"config", "example"}, {"version"}, {"help"},
	{"audit"}, {"audit", "tail"}, {"audit", "export"},
	{"mcp"}, {"mcp", "accept"}, {"mcp", "list"},
	{"hook"}, {"hook", "claude-code"}, {"hook", "codex"},
}

// TestEveryCommandAnswersHelp: --help, -h and -help after any subcommand
// print its usage on standard output and exit 0, without doing anything
// else (run does not start, example does not print the example).
func TestEveryCommandAnswersHelp(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv(DefaultRedisURLEnv, "redis://127.0.0.1:1/0") // run would fail if it started
	listed := regexp.MustCompile(`(?m)^  ([a-z]+)\s`).FindAllStringSubmatch(usage[strings.Index(usage, "Commands:"):], -1)
	for _, m := range listed {
		if !slices.ContainsFunc(helpCommands, func(c []string) bool { return c[0] == m[1] }) {
			t.Errorf("the usage names %q, which helpCommands does not test", m[1])
		}
	}
	for _, cmd := range helpCommands {
		for _, flag := range []string{"--help", "-h", "-help"} {
			args := append(slices.Clone(cmd), flag)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				code := dispatch(args, strings.NewReader(""), &stdout, &stderr)
				if code != 0 {
					t.Errorf("exit %d, want 0; stderr: %s", code, stderr.String())
				}
				if !strings.HasPrefix(stdout.String(), "Usage: countersign") {
					t.Errorf("standard output does not start with the usage:\n%.300s", stdout.String())
				}
				if stderr.Len() > 0 {
					t.Errorf("standard error: %s", stderr.String())
				}
			})
		}
	}
}
