package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigErrorsAreFixable: an unknown key names its path and the key
// meant; a bad value names its path and gives an example of a good one.
func TestConfigErrorsAreFixable(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"typo in a nested key", "agent:\n  aproval_ttl: 20m\n", "agent.aproval_ttl: unknown key; did you mean approval_ttl?"},
		{"swapped letters", "agent:\n  apporval_ttl: 20m\n", "agent.apporval_ttl: unknown key; did you mean approval_ttl?"},
		{"a dash for an underscore", "agent:\n  approval-ttl: 20m\n", "did you mean approval_ttl?"},
		{"nothing close", "agent:\n  colour_scheme: dark\n", "agent.colour_scheme: unknown key; the keys here are approval_ttl, "},
		{"deep in a map", "tools:\n  execute_sql:\n    connections:\n      orders:\n        dns_env: X\n", "tools.execute_sql.connections.orders.dns_env: unknown key; did you mean dsn_env?"},
		{"inline section keys", "terminal:\n  colr: never\n", "terminal.colr: unknown key; did you mean color?"},
		{"duration in words", "agent:\n  approval_ttl: 20 minutes\n", `agent.approval_ttl: "20 minutes" is not a duration; use 20m`},
		{"duration in hours", "llm:\n  total_timeout: 2 hrs\n", "use 2h"},
		{"duration without a unit", "tools:\n  execute_command:\n    timeout: 90\n", `tools.execute_command.timeout: "90" is not a duration; use 90s`},
		{"duration in days", "agent:\n  conversation_ttl: 2 days\n", "use 48h"},
		{"a number with a unit", "tools:\n  execute_command:\n    output_limit: 64 KiB\n", `tools.execute_command.output_limit: "64 KiB" is not a whole number; use digits only, such as 65536`},
		{"a bool in words", "tools:\n  http_request:\n    enabled: sometimes\n", `tools.http_request.enabled: "sometimes" is not true or false`},
		{"a scalar for a section", "agent: fast\n", `agent: expected a section of keys`},
		{"a scalar for a list", "risk:\n  sensitive_paths: '*.secret'\n", `risk.sensitive_paths: expected a list`},
		{"a list item", "store:\n  addrs: [a:1, {x: 1}]\n", `store.addrs[1]: expected a single value`},
		{"an OTLP endpoint without a scheme", "telemetry:\n  otlp_endpoint: collector:4318\n", `telemetry.otlp_endpoint "collector:4318": want the http:// or https:// base URL`},
		{"an OTLP endpoint typo", "telemetry:\n  otlp_endpont: http://c:4318\n", `telemetry.otlp_endpont: unknown key; did you mean otlp_endpoint?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := dispatch([]string{"config", "check", "--config", path}, strings.NewReader(""), &stdout, &stderr)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr: %s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Fatalf("error %q does not say %q", stderr.String(), tt.want)
			}
			if strings.Contains(stderr.String(), "type ") && strings.Contains(stderr.String(), "Config") {
				t.Errorf("the error names a Go type: %s", stderr.String())
			}
		})
	}
}

// TestConfigCheckShowsRealDefaults: the effective configuration shows the
// value that applies wherever a default does, not an empty one.
func TestConfigCheckShowsRealDefaults(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv(DefaultRedisURLEnv, "")
	t.Setenv("USER", "carol")
	t.Chdir(t.TempDir())
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"config", "check"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got := stdout.String()
	for _, want := range []string{
		"prefix: cs\n", "audit_max_len: 100000\n", "user: carol\n", "color: auto\n", "enabled: false\n",
		"level: info\n", "format: json\n", "base_url: https://api.openai.com/v1\n",
		"timeout: 20s\n", "total_timeout: 45s\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the effective configuration lacks %q:\n%s", want, got)
		}
	}
}

// configCheck runs `config check` on yaml with env set, and returns its
// exit status and standard error.
func configCheck(t *testing.T, yaml string, env ...string) (int, string) {
	t.Helper()
	for _, k := range []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DISCORD_BOT_TOKEN", "DISCORD_PUBLIC_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", DefaultRedisURLEnv} {
		t.Setenv(k, "")
	}
	for i := 0; i+1 < len(env); i += 2 {
		t.Setenv(env[i], env[i+1])
	}
	t.Chdir(t.TempDir())
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"config", "check", "--config", path}, strings.NewReader(""), &stdout, &stderr)
	return code, stderr.String()
}

// TestConfigCheckRefusesWhatCannotWork: values that would panic, never let
// a card run, or start the terminal in place of a half-configured platform
// are refused, each naming its key and the fix; a value at its bound passes.
func TestConfigCheckRefusesWhatCannotWork(t *testing.T) {
	tests := []struct {
		name, yaml string
		env        []string
		want       string // "" means valid
	}{
		{name: "inbox lease of 1ns (panicked at start)", yaml: "bot:\n  inbox_lease: 1ns\n", want: "bot.inbox_lease: 1ns is too short"},
		{name: "inbox lease at its bound", yaml: "bot:\n  inbox_lease: 1s\n"},
		{name: "run lease of 1ns", yaml: "agent:\n  run_lease: 1ns\n", want: "agent.run_lease: 1ns is too short"},
		{name: "recovery grace of 1ms", yaml: "agent:\n  recovery_grace: 1ms\n", want: "agent.recovery_grace: 1ms is too short"},
		{name: "approval ttl of 1s", yaml: "agent:\n  approval_ttl: 1s\n", want: "agent.approval_ttl: 1s is too short"},
		{name: "dedupe window of 1s", yaml: "bot:\n  dedupe_window: 1s\n", want: "bot.dedupe_window: 1s is too short"},
		{name: "dedupe size of 3", yaml: "bot:\n  dedupe_size: 3\n", want: "bot.dedupe_size: 3 is too small"},
		{name: "negative queue size", yaml: "bot:\n  queue_size: -1\n", want: "bot.queue_size: -1 is negative"},
		{name: "a command timeout of 1ns", yaml: "tools:\n  execute_command:\n    timeout: 1ns\n", want: "tools.execute_command.timeout: 1ns is too short"},
		{name: "a model timeout of 1ms", yaml: "llm:\n  total_timeout: 1ms\n", want: "llm.total_timeout: 1ms is too short"},
		{name: "a conversation kept 1s", yaml: "agent:\n  conversation_ttl: 1s\n", want: "agent.conversation_ttl: 1s is too short"},
		{name: "a discord body cap of 10 bytes", yaml: "discord:\n  max_body_bytes: 10\n", want: "discord.max_body_bytes: 10 is too small"},
		{name: "an audit stream of 1", yaml: "store:\n  audit_max_len: 1\n", want: "store.audit_max_len: 1 is too small"},
		{name: "a reminder after 1s", yaml: "bot:\n  channels:\n    C0PROD:\n      remind_after: 1s\n", want: "bot.channels.C0PROD.remind_after: 1s is too short"},
		{name: "no reminder", yaml: "bot:\n  default:\n    remind_after: 0s\n"},
		{name: "three approvals of two people", yaml: "bot:\n  default:\n    approvers: [U1, \"user:U2\", U1]\n    approvals_required: 3\n",
			want: "bot.default.approvals_required: 3 approvals, but its approvers name only 2 people"},
		{name: "a channel's approvals over the default's people", yaml: "bot:\n  default:\n    approvers: [U1, U2]\n  channels:\n    C0PROD:\n      approvals_required: 3\n",
			want: "bot.channels.C0PROD.approvals_required: 3 approvals"},
		{name: "a rule's approvals over its people", yaml: "bot:\n  rules:\n    - name: ddl\n      match: {tool: [execute_sql]}\n      approvers: [U1]\n      approvals_required: 2\n",
			want: "bot.rules[0] (ddl).approvals_required: 2 approvals, but its approvers name only 1 person"},
		{name: "two approvals of two people", yaml: "bot:\n  default:\n    approvers: [U1, U2]\n    approvals_required: 2\n"},
		{name: "approvals of a group", yaml: "bot:\n  default:\n    approvers: [U1, \"group:oncall\"]\n    approvals_required: 5\n"},
		{name: "approvals of anyone", yaml: "bot:\n  default:\n    approvals_required: 5\n"},
		{name: "slack app token without its bot token", env: []string{"SLACK_APP_TOKEN", "xapp-1-A-1-x"},
			want: "slack: $SLACK_APP_TOKEN holds an app-level token (xapp-) but $SLACK_BOT_TOKEN, the bot token (xoxb-), is not set"},
		{name: "slack signing secret without its bot token", env: []string{"SLACK_SIGNING_SECRET", "s3cret"},
			want: "slack: $SLACK_SIGNING_SECRET holds a signing secret but $SLACK_BOT_TOKEN"},
		{name: "slack bot token without app token or secret", env: []string{"SLACK_BOT_TOKEN", "xoxb-1-2-x"},
			want: "slack.mode: http needs the app's signing secret"},
		{name: "discord public key without its token", env: []string{"DISCORD_PUBLIC_KEY", "ab12"},
			want: "discord: $DISCORD_PUBLIC_KEY holds the application's public key but $DISCORD_BOT_TOKEN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stderr := configCheck(t, tt.yaml, tt.env...)
			switch {
			case tt.want == "" && code != 0:
				t.Fatalf("exit %d, want 0: %s", code, stderr)
			case tt.want != "" && code != 1:
				t.Fatalf("exit %d, want 1: %s", code, stderr)
			case !strings.Contains(stderr, tt.want):
				t.Fatalf("the error does not say %q:\n%s", tt.want, stderr)
			}
		})
	}
}

// TestConfigCheckReportsEveryProblem: every problem is listed at once, an
// unknown key's beside the values', one a line.
func TestConfigCheckReportsEveryProblem(t *testing.T) {
	code, stderr := configCheck(t, `agent:
  aproval_ttl: 20m
  run_lease: 1ns
bot:
  inbox_lease: 1ns
  colour: blue
  default:
    approvers: [U1, U2]
    approvals_required: 3
log:
  level: loud
`, "SLACK_APP_TOKEN", "xapp-1-A-1-x")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	want := []string{
		"agent.aproval_ttl: unknown key; did you mean approval_ttl?",
		"bot.colour: unknown key",
		"agent.run_lease: 1ns is too short",
		"bot.inbox_lease: 1ns is too short",
		"bot.default.approvals_required: 3 approvals",
		`log.level: "loud" is not one of`,
		"slack: $SLACK_APP_TOKEN holds",
	}
	if !strings.Contains(stderr, fmt.Sprintf("%d problems in ", len(want))) {
		t.Errorf("the report does not count %d problems:\n%s", len(want), stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, "\n  - "+w) {
			t.Errorf("the report lacks a line %q:\n%s", w, stderr)
		}
	}
}

// TestConfigSyntaxErrorNamesTheLine: a file that is not YAML is reported
// by its line's number and text, with the usual fix in words.
func TestConfigSyntaxErrorNamesTheLine(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"indented under a value", "agent:\n  approval_ttl: 20m\n   run_lease: 2m\n", []string{`line 3 is not valid YAML`, `"   run_lease: 2m"`, "fix the indentation"}},
		{"a tab", "agent:\n\tapproval_ttl: 20m\n", []string{"line 2 is not valid YAML", "tabs"}},
		{"a key out of line", "bot:\n  default:\n    approvers: []\n   quiet: true\n", []string{"line 4 is not valid YAML", `"   quiet: true"`}},
		{"an unclosed list", "bot:\n  default:\n    approvers: [a, b\n  quiet: true\n", []string{"line 3 is not valid YAML", `"    approvers: [a, b"`, "not closed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stderr := configCheck(t, tt.yaml)
			if code != 1 {
				t.Fatalf("exit %d, want 1: %s", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("the error does not say %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, ": yaml: ") {
				t.Errorf("the parser's own words reach the operator:\n%s", stderr)
			}
		})
	}
}

// TestRunRefusesWhatConfigCheckRefuses: run validates as config check does,
// so it never starts with a value that cannot work.
func TestRunRefusesWhatConfigCheckRefuses(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv(DefaultRedisURLEnv, "")
	t.Chdir(t.TempDir())
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("bot:\n  inbox_lease: 1ns\nagent:\n  run_lease: 1ns\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), path, strings.NewReader(""), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "bot.inbox_lease") || !strings.Contains(err.Error(), "agent.run_lease") {
		t.Fatalf("run = %v; want both leases refused", err)
	}
}
