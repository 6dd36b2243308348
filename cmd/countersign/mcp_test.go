package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/approval/redisstore"
	"github.com/countersign/countersign/internal/testenv"
	"github.com/countersign/countersign/tools/mcptool"
)

// inprocMCP serves one MCP server with a tool "status" over streamable HTTP.
func inprocMCP(t *testing.T, desc string) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "ops", Version: "1"}, nil)
	tool := &mcp.Tool{Name: "status", Description: desc, InputSchema: json.RawMessage(`{"type":"object"}`)}
	s.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return hs.URL
}

// TestMCPAccept: `countersign mcp accept ops` replaces the stale pin in
// Redis with the tool as it is now; `mcp list` shows it after.
func TestMCPAccept(t *testing.T) {
	url := testenv.RedisURL(t)
	t.Setenv(DefaultRedisURLEnv, url)
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("mcptest%d", time.Now().UnixNano())
	s := redisstore.New(redis.NewClient(o), redisstore.Options{Prefix: prefix, Logger: slog.New(slog.DiscardHandler)})
	defer s.Close()
	ctx := context.Background()
	if _, err := s.PinMCP(ctx, "ops", "status", "stale-hash"); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "store:\n  prefix: "+prefix+"\nmcp:\n  servers:\n    ops:\n      url: "+inprocMCP(t, "Reports the status.")+"\n")

	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"mcp", "list", "--config", cfg}, nil, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "changed its tool status") {
		t.Errorf("mcp list before accept: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := dispatch([]string{"mcp", "accept", "ops", "--config", cfg}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("mcp accept: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "accepted 1 tools of ops") {
		t.Errorf("mcp accept said: %s", stdout.String())
	}
	pins, err := s.MCPPins(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	want, err := mcptool.Hash(&mcp.Tool{Name: "status", Description: "Reports the status.", InputSchema: map[string]any{"type": "object"}})
	if err != nil {
		t.Fatal(err)
	}
	if pins["status"] != want {
		t.Errorf("pin after accept = %q, want %q", pins["status"], want)
	}
	stdout.Reset()
	stderr.Reset()
	if code := dispatch([]string{"mcp", "list", "--config", cfg}, nil, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), "ops__status\tops/status\tdestructive\tconfirm (danger)") {
		t.Errorf("mcp list after accept: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
}

// TestMCPAcceptNeedsRedis: with the store in memory, accept says why it
// cannot help and what to do.
func TestMCPAcceptNeedsRedis(t *testing.T) {
	t.Setenv(DefaultRedisURLEnv, "")
	cfg := writeConfig(t, "mcp:\n  servers:\n    ops:\n      url: http://127.0.0.1:1/mcp\n")
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"mcp", "accept", "ops", "--config", cfg}, nil, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "store is in memory") || !strings.Contains(stderr.String(), "store.redis_url") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	if code := dispatch([]string{"mcp", "accept", "--config", cfg}, nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "name the server") {
		t.Errorf("accept without a server: exit %d: %s", code, stderr.String())
	}
}

// TestAssessMCP: assess --mcp lists the configured server's tools and
// judges their calls by the MCP rules; without --mcp they are unknown
// tools, and a server that cannot start is said on stderr.
func TestAssessMCP(t *testing.T) {
	cfg := writeConfig(t, "mcp:\n  servers:\n    ops:\n      url: "+inprocMCP(t, "Reports the status.")+
		"\n      policy: {status: block}\n    gone:\n      url: http://127.0.0.1:1/mcp\n")
	in := `{"tool":"ops__status","args":{"risk_level":"low"}}` + "\n"
	got, code, stderr := runAssess(t, in, "--mcp", "--config", cfg)
	if code != 0 || len(got) != 1 || got[0].Decision != "block" || got[0].Rule != "operator" {
		t.Errorf("assess --mcp: exit %d, %+v, stderr %s", code, got, stderr)
	}
	if !strings.Contains(stderr, "MCP server gone could not start") {
		t.Errorf("stderr does not name the server that could not start: %q", stderr)
	}
	got, _, _ = runAssess(t, in, "--config", cfg)
	if len(got) != 1 || got[0].Decision != "auto" || got[0].Rule != "llm" {
		t.Errorf("assess without --mcp judges an unknown tool: %+v", got)
	}
}

// TestAssessDeclaredMCP: without --mcp, assess judges the tools a server
// lists in the configuration, starting nothing.
func TestAssessDeclaredMCP(t *testing.T) {
	cfg := writeConfig(t, `mcp:
  servers:
    fs:
      url: http://127.0.0.1:1/mcp
      trusted: true
      tools:
        - {name: read_text_file, annotations: {readOnlyHint: true}}
        - {name: write_file, annotations: {destructiveHint: true}}
`)
	in := `{"tool":"fs__read_text_file","args":{}}` + "\n" + `{"tool":"fs__write_file","args":{"risk_level":"low"}}` + "\n"
	got, code, stderr := runAssess(t, in, "--config", cfg)
	if code != 0 || len(got) != 2 || got[0].Decision != "auto" || got[0].Rule != "whitelist" ||
		got[1].Decision != "confirm" || got[1].Rule != "danger" || stderr != "" {
		t.Errorf("assess with the tools in the config: exit %d, %+v, stderr %q", code, got, stderr)
	}
}
