package llm_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/agent/llm"
	"github.com/countersign/countersign/tools"
)

// fast is a configuration with tiny delays for srv.
func fast(srv *agenttest.Server) llm.Config {
	return llm.Config{
		BaseURL: srv.BaseURL(), Model: "test-model", APIKey: "sk-test", Organization: "org-test",
		Timeout: 5 * time.Second, MaxAttempts: 4, Backoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond,
	}
}

func newClient(t *testing.T, cfg llm.Config) *llm.Client {
	t.Helper()
	c, err := llm.New(cfg, nil)
	if err != nil {
		t.Fatalf("llm.New: %v", err)
	}
	return c
}

var echoSpec = tools.Spec{
	Name:        "execute_command",
	Description: "Runs a command.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`),
}

func TestCompleteSendsConversationAndReadsToolCalls(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Calls(
		agenttest.Call("call_1", "execute_command", `{"command":"ls"}`),
		agenttest.Call("call_2", "execute_command", `{"command":"df -h"}`),
	))
	c := newClient(t, fast(srv))
	req := agent.Request{
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "be brief"},
			{Role: agent.RoleUser, Content: "what is here?"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_0", Name: "execute_command", Arguments: `{"command":"pwd"}`}}},
			{Role: agent.RoleTool, ToolCallID: "call_0", Content: `{"status":"ok","executed":true}`},
		},
		Tools: []tools.Spec{echoSpec},
	}
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
		{ID: "call_1", Name: "execute_command", Arguments: `{"command":"ls"}`},
		{ID: "call_2", Name: "execute_command", Arguments: `{"command":"df -h"}`},
	}}
	if diff := cmp.Diff(want, resp.Message); diff != "" {
		t.Errorf("response message (-want +got):\n%s", diff)
	}
	if resp.FinishReason != "tool_calls" {
		t.Errorf("finish reason = %q, want tool_calls", resp.FinishReason)
	}
	if want := (agent.Usage{PromptTokens: 1, CompletionTokens: 1}); resp.Usage != want {
		t.Errorf("usage = %+v, want %+v (what the fake server reports)", resp.Usage, want)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("server got %d requests, want 1", len(reqs))
	}
	got := reqs[0]
	if got.Path != "/v1/chat/completions" || got.Model != "test-model" {
		t.Errorf("request went to %s for model %q", got.Path, got.Model)
	}
	if h := got.Header.Get("Authorization"); h != "Bearer sk-test" {
		t.Errorf("Authorization = %q", h)
	}
	if h := got.Header.Get("OpenAI-Organization"); h != "org-test" {
		t.Errorf("OpenAI-Organization = %q", h)
	}
	wantMsgs := []agenttest.WireMessage{
		{Role: "system", Content: "be brief"},
		{Role: "user", Content: "what is here?"},
		{Role: "assistant", ToolCalls: []agenttest.WireToolCall{agenttest.Call("call_0", "execute_command", `{"command":"pwd"}`)}},
		{Role: "tool", ToolCallID: "call_0", Content: `{"status":"ok","executed":true}`},
	}
	if diff := cmp.Diff(wantMsgs, got.Messages); diff != "" {
		t.Errorf("messages on the wire (-want +got):\n%s", diff)
	}
	if len(got.Tools) != 1 || got.Tools[0].Type != "function" || got.Tools[0].Function.Name != "execute_command" {
		t.Fatalf("tools on the wire = %+v", got.Tools)
	}
	if string(got.Tools[0].Function.Parameters) != string(echoSpec.Parameters) {
		t.Errorf("parameters = %s, want %s", got.Tools[0].Function.Parameters, echoSpec.Parameters)
	}
}

func TestCompleteWithoutKeySendsNoAuthorization(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Text("hi"))
	cfg := fast(srv)
	cfg.APIKey, cfg.Organization = "", ""
	resp, err := newClient(t, cfg).Complete(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hello"}}})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Message.Content != "hi" {
		t.Errorf("content = %q, want hi", resp.Message.Content)
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q, want none for a local server", h)
	}
}

func TestCompleteRetries(t *testing.T) {
	tests := []struct {
		name       string
		script     []agenttest.Reply
		maxAttempt int
		wantErr    bool
		wantStatus int // of the error
		wantCalls  int
		minElapsed time.Duration
	}{
		{
			name:       "429 with Retry-After in seconds, then success",
			script:     []agenttest.Reply{agenttest.Error(429, map[string]string{"Retry-After": "1"}), agenttest.Text("ok")},
			wantCalls:  2,
			minElapsed: time.Second,
		},
		{
			name:       "429 with retry-after-ms, then success",
			script:     []agenttest.Reply{agenttest.Error(429, map[string]string{"Retry-After-Ms": "300", "Retry-After": "100"}), agenttest.Text("ok")},
			wantCalls:  2,
			minElapsed: 300 * time.Millisecond,
		},
		{
			name:      "500 twice, then success",
			script:    []agenttest.Reply{agenttest.Error(500, nil), agenttest.Error(502, nil), agenttest.Text("ok")},
			wantCalls: 3,
		},
		{
			name:      "503 with a body that is not JSON, then success",
			script:    []agenttest.Reply{{Status: 503, Body: "<html>busy</html>"}, agenttest.Text("ok")},
			wantCalls: 2,
		},
		{
			name:      "dropped connection, then success",
			script:    []agenttest.Reply{{Hangup: true}, agenttest.Text("ok")},
			wantCalls: 2,
		},
		{
			name:       "500 until the attempts run out",
			script:     []agenttest.Reply{agenttest.Error(500, nil), agenttest.Error(500, nil), agenttest.Error(500, nil)},
			maxAttempt: 3,
			wantErr:    true,
			wantStatus: 500,
			wantCalls:  3,
		},
		{name: "400 is not retried", script: []agenttest.Reply{agenttest.Error(400, nil)}, wantErr: true, wantStatus: 400, wantCalls: 1},
		{name: "401 is not retried", script: []agenttest.Reply{agenttest.Error(401, nil)}, wantErr: true, wantStatus: 401, wantCalls: 1},
		{name: "403 is not retried", script: []agenttest.Reply{agenttest.Error(403, nil)}, wantErr: true, wantStatus: 403, wantCalls: 1},
		{name: "404 is not retried", script: []agenttest.Reply{agenttest.Error(404, nil)}, wantErr: true, wantStatus: 404, wantCalls: 1},
		{
			name:       "Retry-After beyond max_retry_after ends the retries",
			script:     []agenttest.Reply{agenttest.Error(429, map[string]string{"Retry-After": "3600"})},
			wantErr:    true,
			wantStatus: 429,
			wantCalls:  1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := agenttest.NewServer(t, tt.script...)
			cfg := fast(srv)
			if tt.maxAttempt != 0 {
				cfg.MaxAttempts = tt.maxAttempt
			}
			start := time.Now()
			resp, err := newClient(t, cfg).Complete(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}})
			elapsed := time.Since(start)
			if got := len(srv.Requests()); got != tt.wantCalls {
				t.Errorf("server got %d requests, want %d", got, tt.wantCalls)
			}
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Complete succeeded with %+v, want an error", resp)
				}
				if got := llm.StatusCode(err); got != tt.wantStatus {
					t.Errorf("StatusCode(%v) = %d, want %d", err, got, tt.wantStatus)
				}
				return
			}
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.Message.Content != "ok" {
				t.Errorf("content = %q, want ok", resp.Message.Content)
			}
			if elapsed < tt.minElapsed {
				t.Errorf("took %s, want at least %s (Retry-After honoured)", elapsed, tt.minElapsed)
			}
		})
	}
}

func TestCompleteAttemptTimeLimit(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Reply{Content: "late", Delay: 2 * time.Second}, agenttest.Text("on time"))
	cfg := fast(srv)
	cfg.Timeout = 100 * time.Millisecond
	resp, err := newClient(t, cfg).Complete(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Message.Content != "on time" {
		t.Errorf("content = %q, want the second attempt's answer", resp.Message.Content)
	}
}

func TestCompleteStopsWhenTheContextEnds(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Error(429, map[string]string{"Retry-After": "30"}))
	cfg := fast(srv)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := newClient(t, cfg).Complete(ctx, agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}); err == nil {
		t.Fatal("Complete succeeded, want the context's error")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Complete took %s after the context ended", d)
	}
}

func TestAzure(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Text("hello from azure"))
	cfg := llm.Config{
		APIType: "azure", BaseURL: srv.URL, APIKey: "azure-key", Model: "gpt-4o",
		APIVersion: "2024-10-21", Deployments: map[string]string{"gpt-4o": "prod-gpt4o"},
	}
	resp, err := newClient(t, cfg).Complete(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Message.Content != "hello from azure" {
		t.Errorf("content = %q", resp.Message.Content)
	}
	got := srv.Requests()[0]
	if got.Path != "/openai/deployments/prod-gpt4o/chat/completions" {
		t.Errorf("path = %s, want the deployment's", got.Path)
	}
	if got.Query != "api-version=2024-10-21" {
		t.Errorf("query = %s, want the configured api-version", got.Query)
	}
	if h := got.Header.Get("api-key"); h != "azure-key" {
		t.Errorf("api-key header = %q", h)
	}
	if h := got.Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q, want none with an api-key", h)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  llm.Config
		key  string // the error names it
	}{
		{"custom server without a model", llm.Config{BaseURL: "http://localhost:11434/v1"}, "llm.model"},
		{"azure without api_version", llm.Config{APIType: "azure", BaseURL: "https://x.openai.azure.com", Model: "gpt-4o"}, "llm.api_version"},
		{"azure without base_url", llm.Config{APIType: "azure", APIVersion: "2024-10-21", Model: "gpt-4o"}, "llm.base_url"},
		{"unknown api_type", llm.Config{APIType: "anthropic", APIKey: "k"}, "llm.api_type"},
		{"negative timeout", llm.Config{APIKey: "k", Timeout: -time.Second}, "llm.timeout"},
		{"negative backoff", llm.Config{APIKey: "k", Backoff: -time.Second}, "llm.backoff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := llm.New(tt.cfg, nil)
			if err == nil || !strings.Contains(err.Error(), tt.key) {
				t.Errorf("New error = %v, want one naming %s", err, tt.key)
			}
		})
	}
	if _, err := llm.New(llm.Config{APIKey: "k"}, nil); err != nil {
		t.Errorf("New with only a key: %v", err)
	}
}

func TestFromEnvAndConfigured(t *testing.T) {
	env := map[string]string{
		"OPENAI_API_KEY": "env-key", "OPENAI_BASE_URL": "http://vllm:8000/v1",
		"OPENAI_MODEL": "qwen", "OPENAI_ORG_ID": "org-env", "OPENAI_API_VERSION": "2024-10-21",
	}
	getenv := func(k string) string { return env[k] }

	got := llm.Config{Model: "from-file"}.FromEnv(getenv)
	want := llm.Config{APIKey: "env-key", BaseURL: "http://vllm:8000/v1", Model: "from-file", Organization: "org-env", APIVersion: "2024-10-21"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FromEnv (-want +got):\n%s", diff)
	}

	tests := []struct {
		name string
		cfg  llm.Config
		want bool
	}{
		{"nothing", llm.Config{Model: "gpt-4o"}, false},
		{"blank key", llm.Config{APIKey: "  "}, false},
		{"a key", llm.Config{APIKey: "k"}, true},
		{"a local server without key", llm.Config{BaseURL: "http://localhost:11434/v1"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cfg.Configured(); got != tt.want {
				t.Errorf("Configured() = %v, want %v", got, tt.want)
			}
		})
	}
	if (llm.Config{}).FromEnv(func(string) string { return "" }).Configured() {
		t.Error("an empty environment configures a model")
	}
}
