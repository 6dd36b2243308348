package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
)

// This file is `countersign hook claude-code`: Claude Code's PreToolUse
// hook asks the gateway's /v1/decide about each call it is about to make,
// and runs the tool itself when the answer is allow.

// PreToolUse is the part of Claude Code's PreToolUse hook payload the hook
// reads.
type PreToolUse struct {
	SessionID string          `json:"session_id"`
	CWD       string          `json:"cwd"`
	Event     string          `json:"hook_event_name"`
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
}

// hookOutput is what a PreToolUse hook prints for Claude Code.
type hookOutput struct {
	Specific hookSpecific `json:"hookSpecificOutput"`
}

type hookSpecific struct {
	Event    string `json:"hookEventName"`
	Decision string `json:"permissionDecision"` // allow | deny
	Reason   string `json:"permissionDecisionReason"`
}

// MapClaudeCode maps a Claude Code tool call to the gate's tool and
// arguments: Bash → execute_command, Write, Edit and MultiEdit →
// file_operations (a write; a path under cwd made relative to it),
// WebFetch → http_request (GET), mcp__<server>__<tool> → the MCP tool
// <server>__<tool>. ok is false for a tool the gate has no counterpart
// for (Read, Grep, …): Claude Code's own permissions decide those.
func MapClaudeCode(p PreToolUse) (tool string, args json.RawMessage, ok bool, err error) {
	var in map[string]any
	if len(p.ToolInput) > 0 {
		if err := json.Unmarshal(p.ToolInput, &in); err != nil {
			return "", nil, false, fmt.Errorf("tool_input of %s is not a JSON object: %w", p.ToolName, err)
		}
	}
	str := func(k string) string { s, _ := in[k].(string); return s }
	var out map[string]any
	switch {
	case p.ToolName == "Bash":
		tool, out = "execute_command", map[string]any{"command": str("command")}
	case p.ToolName == "Write":
		tool, out = "file_operations", map[string]any{"operation": "write", "path": relPath(p.CWD, str("file_path")), "content": str("content")}
	case p.ToolName == "Edit":
		tool, out = "file_operations", map[string]any{"operation": "write", "path": relPath(p.CWD, str("file_path")), "content": str("new_string")}
	case p.ToolName == "MultiEdit":
		var parts []string
		if edits, _ := in["edits"].([]any); edits != nil {
			for _, e := range edits {
				if m, _ := e.(map[string]any); m != nil {
					s, _ := m["new_string"].(string)
					parts = append(parts, s)
				}
			}
		}
		tool, out = "file_operations", map[string]any{"operation": "write", "path": relPath(p.CWD, str("file_path")), "content": strings.Join(parts, "\n")}
	case p.ToolName == "WebFetch":
		tool, out = "http_request", map[string]any{"method": "GET", "url": str("url")}
	case strings.HasPrefix(p.ToolName, "mcp__"):
		tool = strings.TrimPrefix(p.ToolName, "mcp__")
		args = p.ToolInput
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		return tool, args, true, nil
	default:
		return "", nil, false, nil
	}
	b, err := json.Marshal(out)
	return tool, b, err == nil, err
}

// relPath is path relative to cwd when it lies under it, else path as
// given (a path outside the tools' root is judged as one).
func relPath(cwd, path string) string {
	if cwd == "" || !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(cwd, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return path
	}
	return rel
}

// HookClaudeCode reads one PreToolUse payload from in, asks the gateway
// at base (its /v1/decide) with token, and writes Claude Code's decision
// to out. A tool the gate has no counterpart for gets no decision (Claude
// Code's own permissions apply). Anything that keeps it from an answer —
// an unreadable payload, a gateway that does not answer or refuses the
// token — is a deny with the reason: it fails closed.
func HookClaudeCode(ctx context.Context, in io.Reader, out io.Writer, base, token string, client *http.Client) error {
	deny := func(why string) error {
		return writeHook(out, "deny", "Countersign: "+why)
	}
	raw, err := io.ReadAll(io.LimitReader(in, maxBody+1))
	if err != nil {
		return deny("the hook could not read its payload: " + err.Error())
	}
	var p PreToolUse
	if err := json.Unmarshal(raw, &p); err != nil {
		return deny("the hook's payload is not Claude Code's PreToolUse JSON: " + err.Error())
	}
	tool, args, ok, err := MapClaudeCode(p)
	if err != nil {
		return deny(err.Error())
	}
	if !ok {
		return nil
	}
	if base == "" || token == "" {
		return deny("COUNTERSIGN_GATEWAY_URL and COUNTERSIGN_GATEWAY_TOKEN must be set for the hook to ask the gateway")
	}
	body, _ := json.Marshal(callRequest{Tool: tool, Args: args, Reason: "Claude Code " + p.ToolName + " in " + p.CWD})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(base, "/")+"/v1/decide", bytes.NewReader(body))
	if err != nil {
		return deny("COUNTERSIGN_GATEWAY_URL is not a URL: " + err.Error())
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if p.ToolUseID != "" {
		// Claude Code asking again about the same call finds its card.
		sum := sha256.Sum256([]byte(p.SessionID + "\x00" + p.ToolUseID))
		req.Header.Set("Idempotency-Key", "claude-code-"+hex.EncodeToString(sum[:12]))
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return deny("the gateway did not answer (" + err.Error() + "), so the call is refused")
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if resp.StatusCode != http.StatusOK {
		var e apiError
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return deny(fmt.Sprintf("the gateway refused to decide (%d %s): %s", resp.StatusCode, e.Code, e.Error))
		}
		return deny(fmt.Sprintf("the gateway answered %s without a decision", resp.Status))
	}
	var d Decision
	if err := json.Unmarshal(data, &d); err != nil || (d.Decision != "allow" && d.Decision != "deny") {
		return deny("the gateway's answer is not a decision")
	}
	reason := "Countersign: " + d.Decision + "ed by " + d.DecidedBy
	if d.Decision == "deny" {
		reason = "Countersign: denied by " + d.DecidedBy
	}
	if d.Reason != "" {
		reason += ": " + d.Reason
	}
	return writeHook(out, d.Decision, reason)
}

func writeHook(out io.Writer, decision, reason string) error {
	b, err := json.Marshal(hookOutput{Specific: hookSpecific{Event: "PreToolUse", Decision: decision, Reason: reason}})
	if err != nil {
		return errors.New("encode the hook's decision")
	}
	_, err = out.Write(append(b, '\n'))
	return err
}
