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
	"slices"
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

// Agent is a coding agent whose PreToolUse hook asks the gateway.
type Agent string

// The agents with a hook.
const (
	// ClaudeCode prints its decision, allow or deny, as
	// hookSpecificOutput.permissionDecision.
	ClaudeCode Agent = "claude-code"
	// Codex (0.124 and later) speaks Claude Code's hook format; its
	// apply_patch edits are asked about one file at a time, and an allowed
	// call prints nothing (Codex goes ahead on an empty answer).
	Codex Agent = "codex"
)

// call is one call the hook asks the gateway about.
type call struct {
	tool string
	args json.RawMessage
}

// calls maps a payload to the gate's calls; none: not asked about.
func (ag Agent) calls(p PreToolUse) ([]call, error) {
	if ag == Codex && p.ToolName == "apply_patch" {
		return patchCalls(p)
	}
	tool, args, ok, err := MapClaudeCode(p)
	if err != nil || !ok {
		return nil, err
	}
	return []call{{tool, args}}, nil
}

// patchCalls maps a Codex apply_patch (its patch in tool_input.command)
// to one file_operations call per file it adds, updates or deletes, each
// with that file's part of the patch as its content. A patch that names
// no file is refused: nothing could be judged.
func patchCalls(p PreToolUse) ([]call, error) {
	var in struct {
		Command string `json:"command"`
		Input   string `json:"input"`
	}
	if err := json.Unmarshal(p.ToolInput, &in); err != nil {
		return nil, fmt.Errorf("tool_input of apply_patch is not a JSON object: %w", err)
	}
	patch := in.Command
	if patch == "" {
		patch = in.Input
	}
	var out []call
	var cur map[string]any
	var body []string
	flush := func() {
		if cur != nil {
			if cur["operation"] != "delete" {
				cur["content"] = strings.Join(body, "\n")
			}
			b, _ := json.Marshal(cur)
			out = append(out, call{"file_operations", b})
		}
		cur, body = nil, nil
	}
	for line := range strings.SplitSeq(patch, "\n") {
		op, path := "", ""
		for prefix, o := range map[string]string{"*** Add File: ": "write", "*** Update File: ": "write", "*** Delete File: ": "delete"} {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				op, path = o, strings.TrimSpace(rest)
			}
		}
		switch {
		case op != "":
			flush()
			cur = map[string]any{"operation": op, "path": relPath(p.CWD, path)}
		case strings.HasPrefix(line, "*** Move to: ") && cur != nil:
			flush() // the new name is a write of its own
			cur = map[string]any{"operation": "write", "path": relPath(p.CWD, strings.TrimSpace(strings.TrimPrefix(line, "*** Move to: ")))}
		case strings.HasPrefix(line, "*** "):
			if strings.HasPrefix(line, "*** End Patch") {
				flush()
			}
		case cur != nil:
			body = append(body, line)
		}
	}
	flush()
	if len(out) == 0 {
		return nil, errors.New("the apply_patch names no file to add, update or delete")
	}
	return out, nil
}

// HookClaudeCode is Hook for Claude Code.
func HookClaudeCode(ctx context.Context, in io.Reader, out io.Writer, base, token string, client *http.Client) error {
	return Hook(ctx, ClaudeCode, in, out, base, token, client)
}

// Hook reads one PreToolUse payload of ag from in, asks the gateway at
// base (its /v1/decide) with token about each call it maps to, and writes
// the agent's decision to out: allow when every call is allowed, else a
// deny naming who decided and why. A tool the gate has no counterpart for
// gets no decision (the agent's own permissions apply). Anything that
// keeps it from an answer (an unreadable payload, a gateway that does not
// answer or refuses the token) is a deny with the reason: it fails closed.
func Hook(ctx context.Context, ag Agent, in io.Reader, out io.Writer, base, token string, client *http.Client) error {
	deny := func(why string) error {
		return writeHook(out, "deny", "Countersign: "+why)
	}
	raw, err := io.ReadAll(io.LimitReader(in, maxBody+1))
	if err != nil {
		return deny("the hook could not read its payload: " + err.Error())
	}
	var p PreToolUse
	if err := json.Unmarshal(raw, &p); err != nil {
		return deny("the hook's payload is not " + string(ag) + "'s PreToolUse JSON: " + err.Error())
	}
	calls, err := ag.calls(p)
	if err != nil {
		return deny(err.Error())
	}
	if len(calls) == 0 {
		return nil
	}
	if base == "" || token == "" {
		return deny("COUNTERSIGN_GATEWAY_URL and COUNTERSIGN_GATEWAY_TOKEN must be set for the hook to ask the gateway")
	}
	if client == nil {
		client = http.DefaultClient
	}
	var allowed []string
	for i, c := range calls {
		key := ""
		if p.ToolUseID != "" {
			// The agent asking again about the same call finds its card.
			sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d", p.SessionID, p.ToolUseID, i))
			key = string(ag) + "-" + hex.EncodeToString(sum[:12])
		}
		d, why := decide(ctx, client, base, token, key, callRequest{Tool: c.tool, Args: c.args, Reason: string(ag) + " " + p.ToolName + " in " + p.CWD})
		if why != "" {
			return deny(why)
		}
		if d.Decision == "deny" {
			reason := "Countersign: denied by " + d.DecidedBy
			if d.Reason != "" {
				reason += ": " + d.Reason
			}
			return writeHook(out, "deny", reason)
		}
		allowed = append(allowed, d.DecidedBy)
	}
	if ag == Codex {
		return nil // Codex goes ahead on an empty answer
	}
	return writeHook(out, "allow", "Countersign: allowed by "+strings.Join(slices.Compact(allowed), ", "))
}

// decide asks /v1/decide about one call; why says what kept it from a
// decision.
func decide(ctx context.Context, client *http.Client, base, token, key string, body callRequest) (Decision, string) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(base, "/")+"/v1/decide", bytes.NewReader(b))
	if err != nil {
		return Decision{}, "COUNTERSIGN_GATEWAY_URL is not a URL: " + err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Decision{}, "the gateway did not answer (" + err.Error() + "), so the call is refused"
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if resp.StatusCode != http.StatusOK {
		var e apiError
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return Decision{}, fmt.Sprintf("the gateway refused to decide (%d %s): %s", resp.StatusCode, e.Code, e.Error)
		}
		return Decision{}, fmt.Sprintf("the gateway answered %s without a decision", resp.Status)
	}
	var d Decision
	if err := json.Unmarshal(data, &d); err != nil || (d.Decision != "allow" && d.Decision != "deny") {
		return Decision{}, "the gateway's answer is not a decision"
	}
	return d, ""
}

func writeHook(out io.Writer, decision, reason string) error {
	b, err := json.Marshal(hookOutput{Specific: hookSpecific{Event: "PreToolUse", Decision: decision, Reason: reason}})
	if err != nil {
		return errors.New("encode the hook's decision")
	}
	_, err = out.Write(append(b, '\n'))
	return err
}
