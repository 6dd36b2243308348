package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestConfigValidate: the gateway refuses to start where bearer tokens
// would cross the network in plain text, and names the key of every other
// mistake.
func TestConfigValidate(t *testing.T) {
	agent := map[string]AgentConfig{"ci": {TokenEnv: "T", Channel: "terminal"}}
	for _, tt := range []struct {
		name string
		cfg  Config
		want string // "" is valid
	}{
		{"off", Config{}, ""},
		{"loopback", Config{Listen: "127.0.0.1:8790", Agents: agent}, ""},
		{"localhost", Config{Listen: "localhost:8790", Agents: agent}, ""},
		{"ipv6 loopback", Config{Listen: "[::1]:8790", Agents: agent}, ""},
		{"every address without TLS", Config{Listen: ":8790", Agents: agent}, "not a loopback address"},
		{"public address without TLS", Config{Listen: "10.0.0.5:8790", Agents: agent}, "gateway.tls_cert"},
		{"public address, plaintext allowed", Config{Listen: "10.0.0.5:8790", AllowPlaintext: true, Agents: agent}, ""},
		{"public address with TLS", Config{Listen: "10.0.0.5:8790", TLSCert: "c.pem", TLSKey: "k.pem", Agents: agent}, ""},
		{"cert without key", Config{Listen: "127.0.0.1:8790", TLSCert: "c.pem", Agents: agent}, "set both or neither"},
		{"not host:port", Config{Listen: "8790", Agents: agent}, "not host:port"},
		{"no agents", Config{Listen: "127.0.0.1:8790"}, "no agent"},
		{"no token_env", Config{Listen: "127.0.0.1:8790", Agents: map[string]AgentConfig{"ci": {Channel: "terminal"}}}, "gateway.agents.ci.token_env"},
		{"bad channel", Config{Listen: "127.0.0.1:8790", Agents: map[string]AgentConfig{"ci": {TokenEnv: "T", Channel: "#ops"}}}, "gateway.agents.ci.channel"},
		{"slack channel", Config{Listen: "127.0.0.1:8790", Agents: map[string]AgentConfig{"ci": {TokenEnv: "T", Channel: "slack:C0123"}}}, ""},
		{"bad mode", Config{Listen: "127.0.0.1:8790", Agents: map[string]AgentConfig{"ci": {TokenEnv: "T", Channel: "terminal", Mode: "lax"}}}, "gateway.agents.ci.mode"},
		{"negative rate", Config{Listen: "127.0.0.1:8790", Rate: -1, Agents: agent}, "gateway.rate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
}

// TestAgentsResolve: tokens come from the environment, long enough and
// each agent's own; tools must be configured ones; a channel must be one
// this process shows.
func TestAgentsResolve(t *testing.T) {
	long := "0123456789abcdef0123"
	env := map[string]string{"A": long, "B": long + "b", "SHORT": "abc"}
	getenv := func(k string) string { return env[k] }
	tools := []string{"execute_command", "file_operations"}
	for _, tt := range []struct {
		name   string
		agents map[string]AgentConfig
		serves func(string) bool
		want   string
	}{
		{"fine", map[string]AgentConfig{"a": {TokenEnv: "A", Channel: "terminal", Tools: []string{"execute_command"}}, "b": {TokenEnv: "B", Channel: "terminal"}}, nil, ""},
		{"unset token", map[string]AgentConfig{"a": {TokenEnv: "NONE", Channel: "terminal"}}, nil, "$NONE is unset"},
		{"short token", map[string]AgentConfig{"a": {TokenEnv: "SHORT", Channel: "terminal"}}, nil, "shorter than 16"},
		{"shared token", map[string]AgentConfig{"a": {TokenEnv: "A", Channel: "terminal"}, "b": {TokenEnv: "A", Channel: "terminal"}}, nil, "same token"},
		{"unknown tool", map[string]AgentConfig{"a": {TokenEnv: "A", Channel: "terminal", Tools: []string{"execute_sql"}}}, nil, `"execute_sql" is not a configured tool`},
		{"platform not served", map[string]AgentConfig{"a": {TokenEnv: "A", Channel: "slack:C1"}}, func(p string) bool { return p == "terminal" }, "not served by this process"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Listen: "127.0.0.1:0", Agents: tt.agents}
			got, err := cfg.agents(getenv, tools, tt.serves)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %v, want one naming %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a := got["a"]; a.mode != "guarded" || !a.may("execute_command") || a.may("file_operations") {
				t.Fatalf("agent a: mode %s, may command %v, files %v", a.mode, a.may("execute_command"), a.may("file_operations"))
			}
			if !got["b"].may("file_operations") {
				t.Fatal("an agent without tools may not call every tool")
			}
		})
	}
}

// TestBucket: rate requests a minute, then none until time refills it.
func TestBucket(t *testing.T) {
	b := newBucket(2)
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for i, want := range []bool{true, true, false} {
		if got := b.take(now); got != want {
			t.Fatalf("take %d = %v, want %v", i+1, got, want)
		}
	}
	if !b.take(now.Add(30 * time.Second)) {
		t.Fatal("half a minute later a rate of 2 a minute gives one more")
	}
	if b.take(now.Add(30 * time.Second)) {
		t.Fatal("the bucket gave more than it refilled")
	}
}

// TestMapClaudeCode: Claude Code's tools as the gate's.
func TestMapClaudeCode(t *testing.T) {
	for _, tt := range []struct {
		name, tool, input string
		wantTool, args    string // args "" with wantTool "": not asked about
	}{
		{"Bash", "Bash", `{"command":"rm -rf ./tmp_*","description":"clean"}`, "execute_command", `{"command":"rm -rf ./tmp_*"}`},
		{"Write under cwd", "Write", `{"file_path":"/w/app/a/b.txt","content":"x"}`, "file_operations", `{"content":"x","operation":"write","path":"a/b.txt"}`},
		{"Write outside cwd", "Write", `{"file_path":"/etc/passwd","content":"x"}`, "file_operations", `{"content":"x","operation":"write","path":"/etc/passwd"}`},
		{"Edit", "Edit", `{"file_path":"/w/app/main.go","old_string":"a","new_string":"b"}`, "file_operations", `{"content":"b","operation":"write","path":"main.go"}`},
		{"MultiEdit", "MultiEdit", `{"file_path":"/w/app/main.go","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d"}]}`, "file_operations", `{"content":"b\nd","operation":"write","path":"main.go"}`},
		{"WebFetch", "WebFetch", `{"url":"https://example.com/x","prompt":"sum"}`, "http_request", `{"method":"GET","url":"https://example.com/x"}`},
		{"MCP tool", "mcp__grafana__query", `{"q":"up"}`, "grafana__query", `{"q":"up"}`},
		{"Read is left to Claude Code", "Read", `{"file_path":"/w/app/a"}`, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tool, args, ok, err := MapClaudeCode(PreToolUse{CWD: "/w/app", ToolName: tt.tool, ToolInput: json.RawMessage(tt.input)})
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantTool == "" {
				if ok {
					t.Fatalf("mapped to %s %s, want left alone", tool, args)
				}
				return
			}
			if !ok || tool != tt.wantTool || string(args) != tt.args {
				t.Fatalf("%s %s (ok %v), want %s %s", tool, args, ok, tt.wantTool, tt.args)
			}
		})
	}
}

// TestHookFailsClosed: whatever keeps the hook from a decision is a deny
// with the reason; a tool the gate does not judge gets no decision.
func TestHookFailsClosed(t *testing.T) {
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusUnauthorized, "unauthorized", "a valid bearer token is needed")
	}))
	defer refusing.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	bash := `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`
	for _, tt := range []struct {
		name, payload, url, token, want string
	}{
		{"not JSON", `{"tool_name":`, refusing.URL, "t", "not claude-code's PreToolUse JSON"},
		{"no URL", bash, "", "t", "COUNTERSIGN_GATEWAY_URL"},
		{"gateway down", bash, down.URL, "t", "did not answer"},
		{"token refused", bash, refusing.URL, "t", "401 unauthorized"},
		{"Read: no decision", `{"tool_name":"Read","tool_input":{"file_path":"/w/a"}}`, down.URL, "t", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := HookClaudeCode(context.Background(), strings.NewReader(tt.payload), &out, tt.url, tt.token, nil); err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if out.Len() != 0 {
					t.Fatalf("printed %s, want nothing", out.String())
				}
				return
			}
			var got hookOutput
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("not JSON: %q", out.String())
			}
			if got.Specific.Event != "PreToolUse" || got.Specific.Decision != "deny" || !strings.Contains(got.Specific.Reason, tt.want) {
				t.Fatalf("%+v, want deny naming %q", got.Specific, tt.want)
			}
		})
	}
}

// TestPatchCalls: a Codex apply_patch is one file_operations call per file
// it touches, in order; a patch that names none is refused.
func TestPatchCalls(t *testing.T) {
	for _, tt := range []struct {
		name, patch string
		want        []string
	}{
		{"add and update", "*** Begin Patch\n*** Add File: /w/app/a.txt\n+hi\n*** Update File: b.go\n@@\n-x\n+y\n*** End Patch\n", []string{
			`{"content":"+hi","operation":"write","path":"a.txt"}`,
			`{"content":"@@\n-x\n+y","operation":"write","path":"b.go"}`,
		}},
		{"delete", "*** Begin Patch\n*** Delete File: old.txt\n*** End Patch", []string{`{"operation":"delete","path":"old.txt"}`}},
		{"move", "*** Begin Patch\n*** Update File: a.go\n*** Move to: b.go\n@@\n+z\n*** End Patch", []string{
			`{"content":"","operation":"write","path":"a.go"}`,
			`{"content":"@@\n+z","operation":"write","path":"b.go"}`,
		}},
		{"no file", "*** Begin Patch\n*** End Patch", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := json.Marshal(map[string]string{"command": tt.patch})
			calls, err := Codex.calls(PreToolUse{CWD: "/w/app", ToolName: "apply_patch", ToolInput: in})
			if tt.want == nil {
				if err == nil {
					t.Fatalf("calls %v, want an error", calls)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range calls {
				if c.tool != "file_operations" {
					t.Fatalf("tool %s", c.tool)
				}
				got = append(got, string(c.args))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
