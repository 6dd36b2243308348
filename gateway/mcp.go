package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/tools"
)

// serveMCP hands an authenticated request to its agent's own MCP
// handler: each agent has its own server and sessions, so one agent's
// token never reaches another's session.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	s.mcp[agentIn(r).name].ServeHTTP(w, r)
}

// mcpHandler is the MCP server of one agent: the tools it may call, each
// a call through the gate.
func (s *Server) mcpHandler(a *agentOf) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "countersign", Version: "1"}, &mcp.ServerOptions{
		Instructions: "Countersign judges every call before it runs. A call it judges risky waits for a person's approval in " +
			channelName(a) + "; the call then returns once it is decided: its output, or why it did not run.",
		Logger: s.log,
	})
	for _, spec := range s.specs {
		if !a.may(spec.Name) {
			continue
		}
		srv.AddTool(&mcp.Tool{
			Name:        spec.Name,
			Description: spec.Description + "\n\nCountersign judges every call: one it judges risky may wait for a person's approval in " + channelName(a) + " before it runs, and is refused if they cancel it or nobody decides in time.",
			InputSchema: spec.Parameters,
		}, s.mcpTool(a, spec.Name))
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Logger: s.log})
}

// progressEvery is how often a waiting MCP call tells a client that gave a
// progress token that it still waits, so that the client's own timeout
// (reset on progress) does not end it.
var progressEvery = 5 * time.Second

// mcpTool is the handler of one tool for agent a: admit the call; a call
// that needs a person waits for its card, sending progress while it does;
// exactly one result comes back. A client that goes away leaves the card
// as it is.
func (s *Server) mcpTool(a *agentOf, tool string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := json.RawMessage(req.Params.Arguments)
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		key := ""
		if req.Extra != nil && req.Extra.Header != nil {
			key = req.Extra.Header.Get("Idempotency-Key")
		}
		o, err := s.gate.Call(context.WithoutCancel(ctx), a.call(tool, args, "", key))
		if err != nil {
			s.log.Error("an agent's MCP call could not be admitted", "agent", a.name, "tool", tool, "error", err)
			return errorResult("The call's card could not be kept, so the operation did not run; try again."), nil
		}
		if !o.Done() {
			o, err = s.waitMCP(ctx, req, a, o)
			if err != nil {
				return nil, err
			}
		}
		return toolResult(*o.Result), nil
	}
}

// waitMCP waits for a call's result, sending progress when the client
// asked for it.
func (s *Server) waitMCP(ctx context.Context, req *mcp.CallToolRequest, a *agentOf, o agent.CallOutcome) (agent.CallOutcome, error) {
	token := req.Params.GetProgressToken()
	notify := func(o agent.CallOutcome) {
		if token == nil || req.Session == nil {
			return
		}
		msg := fmt.Sprintf("waiting for approval in %s: %d of %d", channelName(a), o.Votes, o.Need)
		if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token, Message: msg, Progress: float64(o.Votes), Total: float64(o.Need),
		}); err != nil {
			s.log.Debug("sending progress", "agent", a.name, "error", err)
		}
	}
	notify(o)
	last := o
	for {
		wctx, cancel := context.WithTimeout(ctx, progressEvery)
		got, err := s.gate.Await(wctx, a.name, o.ID, func(n agent.CallOutcome) {
			if n.Votes != last.Votes {
				notify(n)
			}
			last = n
		})
		cancel()
		if got.Done() {
			return got, nil
		}
		if ctx.Err() != nil {
			// The client went away or gave up; the card stays, and a
			// repeat with the same Idempotency-Key finds it.
			return got, ctx.Err()
		}
		if err != nil && wctx.Err() == nil {
			return got, err
		}
		notify(last)
	}
}

// toolResult is a tool result as MCP returns it: the compact JSON the
// model gets, an error when it did not run or failed.
func toolResult(r tools.Result) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: r.JSON()}},
		IsError: r.Status != tools.StatusOK,
	}
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true}
}
