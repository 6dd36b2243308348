package mcptool

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/countersign/countersign/internal/testenv"
	"github.com/countersign/countersign/tools"
)

// BenchmarkHash: the pin of one tool with a schema of a few properties.
func BenchmarkHash(b *testing.B) {
	f := false
	t := &mcp.Tool{Name: "write_file", Description: "Create a new file or completely overwrite an existing file.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"path": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}}, "required": []any{"path", "content"}},
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &f}}
	for b.Loop() {
		if _, err := Hash(t); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEchoCall: one call of the npm everything server's echo over
// stdio through the tool (the check of its pin included: no tools/list
// unless the list changed), against the same call made directly with the
// SDK on the same session.
func BenchmarkEchoCall(b *testing.B) {
	dir := testenv.MCPDir(b)
	cfg, err := Config{Servers: map[string]ServerConfig{"everything": {Command: []string{dir + "/node_modules/.bin/mcp-server-everything"}}}}.WithDefaults()
	if err != nil {
		b.Fatal(err)
	}
	m, warns := Start(context.Background(), cfg, Options{Log: quiet()})
	defer m.Close()
	if len(warns) > 0 {
		b.Fatal(warns)
	}
	var echo *Tool
	for _, tl := range m.tools {
		if tl.name == "echo" {
			echo = tl
		}
	}
	args := json.RawMessage(`{"message":"ping"}`)
	b.Run("tool", func(b *testing.B) {
		for b.Loop() {
			if res := echo.Run(context.Background(), args, tools.RunOptions{}); res.Content != "Echo: ping" {
				b.Fatalf("echo: %+v", res)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		sess, err := echo.srv.session()
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "ping"}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
