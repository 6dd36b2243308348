package main

import (
	"bytes"
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
