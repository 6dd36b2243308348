package mcptool

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/countersign/countersign/internal/testenv"
	"github.com/countersign/countersign/tools"
)

// TestHTTPReconnect: an HTTP server that restarts (its sessions lost) is
// connected to again, and calls work once it is.
func TestHTTPReconnect(t *testing.T) {
	old := restartMin
	restartMin = 20 * time.Millisecond
	t.Cleanup(func() { restartMin = old })
	newHandler := func() http.Handler {
		s := mcp.NewServer(&mcp.Implementation{Name: "ops", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "ping", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil
			})
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	}
	var h atomic.Value
	h.Store(newHandler())
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Load().(http.Handler).ServeHTTP(w, r) }))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	m, warns := start(t, Config{Servers: map[string]ServerConfig{"ops": {URL: hs.URL}}}, Options{})
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	ping := byName(t, m, "ops__ping")
	if res := ping.Run(context.Background(), json.RawMessage(`{}`), tools.RunOptions{}); res.Content != "pong" {
		t.Fatalf("first call: %+v", res)
	}
	h.Store(newHandler())
	hs.CloseClientConnections()
	var last tools.Result
	if !testenv.Within(10*time.Second, func() bool {
		last = ping.Run(context.Background(), json.RawMessage(`{}`), tools.RunOptions{})
		return last.Content == "pong"
	}) {
		t.Fatalf("the server was not connected to again: last result %+v", last)
	}
}

// TestRefusedArguments: arguments that do not fit the tool's schema are
// refused by the server, which reports it as a tool error (isError): the
// model reads why, as status error. It stays executed: an isError result
// cannot say whether the tool had started.
func TestRefusedArguments(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "ops", Version: "1"}, nil)
	type in struct {
		N int `json:"n"`
	}
	ran := false
	mcp.AddTool(s, &mcp.Tool{Name: "count"}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
		ran = true
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "counted"}}}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	m, warns := start(t, Config{Servers: map[string]ServerConfig{"ops": {URL: hs.URL}}}, Options{})
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	res := byName(t, m, "ops__count").Run(context.Background(), json.RawMessage(`{"n":"three"}`), tools.RunOptions{})
	if res.Status != tools.StatusError || !strings.Contains(res.Error, `want "integer"`) || ran {
		t.Errorf("arguments of the wrong type: %+v (ran %v)", res, ran)
	}
	res = byName(t, m, "ops__count").Run(context.Background(), json.RawMessage(`{"n":3,"risk_level":"low"}`), tools.RunOptions{})
	if res.Content != "counted" || !res.Executed {
		t.Errorf("a good call: %+v", res)
	}
}
