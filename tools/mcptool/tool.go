package mcptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/httptool"
)

// Tool is one tool of an MCP server, as the model calls it.
type Tool struct {
	srv    *server
	pins   Pinner
	fn     string // the function name
	name   string // the tool's name on its server
	desc   string
	schema json.RawMessage
	hash   string // as listed at start
	judged risk.MCPTool
	// changed is set when the tool differs from its pin at start: it is
	// offered with a neutral description and refused.
	changed bool
	// pinnedAt is 1 + the listing generation at which the pin in the
	// store was last found equal (0: not yet).
	pinnedAt atomic.Uint64
}

// maxDescription caps what the model reads of a tool's description.
const maxDescription = 2048

// newTool checks one listed tool and pins it. It returns nil and a
// warning for a tool that cannot be offered (a schema the model API
// cannot take), and a refused tool and a warning for one that changed
// since it was pinned.
func newTool(ctx context.Context, srv *server, mt *mcp.Tool, rules *risk.MCPRules, pins Pinner) (*Tool, string) {
	h, err := Hash(mt)
	if err != nil {
		return nil, fmt.Sprintf("MCP server %s: %v; the tool is not offered.", srv.name, err)
	}
	schema, err := json.Marshal(mt.InputSchema)
	if err != nil || checkSchema(schema) != nil {
		why := "not a JSON object schema"
		if err == nil {
			why = checkSchema(schema).Error()
		}
		return nil, fmt.Sprintf("MCP server %s: the input schema of its tool %q is %s; the tool is not offered.", srv.name, mt.Name, why)
	}
	t := &Tool{srv: srv, pins: pins, name: mt.Name, desc: mt.Description, schema: schema, hash: h}
	t.judged = risk.MCPTool{Server: srv.name, Tool: mt.Name, Trusted: srv.cfg.Trusted}
	if a := mt.Annotations; a != nil {
		t.judged.ReadOnlyHint, t.judged.DestructiveHint = a.ReadOnlyHint, a.DestructiveHint
	}
	t.judged.Setting, t.judged.From = rules.For(mt.Name)
	pinned, err := pins.PinMCP(ctx, srv.name, mt.Name, h)
	switch {
	case err != nil:
		t.changed = true
		return t, fmt.Sprintf("MCP server %s: the pin of its tool %s could not be checked (%v); the tool is refused until it can.", srv.name, mt.Name, err)
	case pinned != h:
		t.changed = true
		return t, fmt.Sprintf("MCP server %s changed its tool %s (description, schema or annotations) since it was pinned; "+
			"it is refused until an operator reviews it and runs `countersign mcp accept %s`, then restarts the bot.", srv.name, mt.Name, srv.name)
	}
	return t, ""
}

// checkSchema is what the registry asks of a schema: an object schema
// that does not declare risk_level.
func checkSchema(schema json.RawMessage) error {
	var top map[string]json.RawMessage
	if json.Unmarshal(schema, &top) != nil || top == nil {
		return errors.New("not a JSON object")
	}
	var typ string
	if json.Unmarshal(top["type"], &typ) != nil || typ != "object" {
		return errors.New(`not of "type": "object"`)
	}
	var props map[string]json.RawMessage
	_ = json.Unmarshal(top["properties"], &props)
	if _, ok := props[tools.RiskLevelArg]; ok {
		return fmt.Errorf("declaring %q itself, which the bot adds to every tool", tools.RiskLevelArg)
	}
	return nil
}

// Name is the function name the model calls.
func (t *Tool) Name() string { return t.fn }

// Server and Tool name the tool's server and its name there.
func (t *Tool) Server() string   { return t.srv.name }
func (t *Tool) ToolName() string { return t.name }

// Description is the server's description of the tool, capped, after a
// line saying where the tool comes from; a changed tool says only that it
// is refused (its new text is not passed on).
func (t *Tool) Description() string {
	if t.changed {
		return fmt.Sprintf("Tool %s of the MCP server %s. It changed since it was approved and is refused until an operator accepts the change.", t.name, t.srv.name)
	}
	d, _ := tools.CapText(t.desc, maxDescription)
	return fmt.Sprintf("Tool %s of the MCP server %s. %s", t.name, t.srv.name, d)
}

// Schema is the server's input schema as it gave it.
func (t *Tool) Schema() json.RawMessage {
	if t.changed {
		return json.RawMessage(`{"type":"object"}`)
	}
	return bytes.Clone(t.schema)
}

// refusedChanged is the refusal of a tool that is not what was approved.
func (t *Tool) refusedChanged(extra string) tools.Result {
	return tools.Denied(fmt.Errorf("the MCP server %s changed its tool %s (description, schema or annotations) since it was approved%s; "+
		"an operator must review it and run `countersign mcp accept %s`, then restart the bot", t.srv.name, t.name, extra, t.srv.name))
}

// Run calls the tool within the server's time limit, after checking that
// it is still what was pinned.
func (t *Tool) Run(ctx context.Context, raw json.RawMessage, _ tools.RunOptions) tools.Result {
	if t.changed {
		return t.refusedChanged("")
	}
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil || args == nil {
		return tools.InvalidArgs(errors.New("the arguments must be a JSON object"))
	}
	delete(args, tools.RiskLevelArg)

	sess, err := t.srv.session()
	if err != nil {
		return tools.NotStarted(fmt.Errorf("the MCP server %s is not available: %v", t.srv.name, err))
	}
	cctx, cancel := context.WithTimeout(ctx, t.srv.cfg.Timeout)
	defer cancel()
	if res, ok := t.checkPin(cctx, sess); !ok {
		if ctx.Err() != nil {
			return tools.NotRun(tools.StatusCancelled, "The call was stopped before it started")
		}
		return res
	}
	out, err := sess.CallTool(cctx, &mcp.CallToolParams{Name: t.name, Arguments: args})
	switch {
	case err == nil:
		return t.result(out)
	case ctx.Err() != nil:
		return tools.Failed(fmt.Errorf("the call was stopped before it finished; the MCP server %s was told to cancel it, and it may have partly run", t.srv.name))
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return tools.Failed(fmt.Errorf("the call timed out after %v (mcp.servers.%s.timeout); the server was told to cancel it, and it may have partly run", t.srv.cfg.Timeout, t.srv.name))
	}
	// A refusal of the request itself (unknown tool, arguments that do not
	// fit its schema) means the tool did not run; any other error may come
	// after it started.
	var we *jsonrpc.Error
	if errors.As(err, &we) && (we.Code == jsonrpc.CodeInvalidParams || we.Code == jsonrpc.CodeMethodNotFound) {
		return tools.InvalidArgs(fmt.Errorf("the MCP server %s refused the call: %s", t.srv.name, we.Message))
	}
	return tools.Failed(fmt.Errorf("the MCP server %s answered with an error: %v", t.srv.name, err))
}

// checkPin checks that this tool is what was listed at start and what is
// pinned, against the server's list as last listed (listing.go): a
// tools/list only when the list may have changed, and a read of the pin
// once per listing.
func (t *Tool) checkPin(ctx context.Context, sess *mcp.ClientSession) (tools.Result, bool) {
	hashes, gen, err := t.srv.listed.current(ctx, sess)
	if err != nil {
		return tools.NotStarted(fmt.Errorf("the MCP server %s could not list its tools, so the tool could not be checked: %v", t.srv.name, err)), false
	}
	h, ok := hashes[t.name]
	if !ok {
		return tools.Denied(fmt.Errorf("the MCP server %s no longer offers the tool %s", t.srv.name, t.name)), false
	}
	if h != t.hash {
		return t.refusedChanged(" (while the bot was running)"), false
	}
	if t.pinnedAt.Load() == gen+1 {
		return tools.Result{}, true
	}
	pinned, err := t.pins.PinMCP(ctx, t.srv.name, t.name, h)
	if err != nil {
		return tools.NotStarted(fmt.Errorf("the pin of the MCP tool %s/%s could not be read: %v", t.srv.name, t.name, err)), false
	}
	if pinned != h {
		return t.refusedChanged(" (its pin in the store differs)"), false
	}
	t.pinnedAt.Store(gen + 1)
	return tools.Result{}, true
}

// result turns what the server answered into the one result every tool
// gives: text in Content, structured content in Data, both capped.
func (t *Tool) result(out *mcp.CallToolResult) tools.Result {
	limit := t.srv.cfg.MaxOutputBytes
	var b strings.Builder
	for _, c := range out.Content {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(contentText(c))
	}
	res := tools.Result{Status: tools.StatusOK, Executed: true}
	text, cut := tools.CapText(b.String(), limit)
	var notes []string
	if cut {
		res.Truncated = true
		notes = append(notes, tools.TruncationNote("output", int64(b.Len()), len(text)))
	}
	if out.StructuredContent != nil {
		data, err := json.Marshal(out.StructuredContent)
		switch {
		case err != nil:
			notes = append(notes, "the structured content could not be encoded")
		case len(data) > limit:
			res.Truncated = true
			notes = append(notes, fmt.Sprintf("the structured content (%s bytes) was left out: over the limit of %s bytes", tools.FormatCount(int64(len(data))), tools.FormatCount(int64(limit))))
		default:
			res.Data = data
		}
	}
	res.Note = tools.JoinNotes(notes...)
	if out.IsError {
		res.Status = tools.StatusError
		res.Error = tools.OneLine(text, 500)
		if res.Error == "" {
			res.Error = "the tool reported an error"
		}
		return res
	}
	res.Content = text
	return res
}

// contentText is one content item as text: text as it is, anything else
// described in a line.
func contentText(c mcp.Content) string {
	switch v := c.(type) {
	case *mcp.TextContent:
		return v.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image %s, %s bytes]", v.MIMEType, tools.FormatCount(int64(len(v.Data))))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio %s, %s bytes]", v.MIMEType, tools.FormatCount(int64(len(v.Data))))
	case *mcp.ResourceLink:
		return fmt.Sprintf("[resource link %s: %s]", v.Name, v.URI)
	case *mcp.EmbeddedResource:
		if r := v.Resource; r != nil {
			if r.Text != "" {
				return fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text)
			}
			return fmt.Sprintf("[resource %s, %s bytes]", r.URI, tools.FormatCount(int64(len(r.Blob))))
		}
	}
	return "[content of an unknown kind]"
}

// Title is the card's question.
func (t *Tool) Title() string { return "Call this MCP tool?" }

// Direct: MCP tools have no direct command.
func (t *Tool) Direct() tools.Direct { return tools.Direct{} }

// Operation is the call as people see it: server and tool, the arguments
// as indented JSON with secret-looking values masked (as the HTTP card
// masks headers), and the tool's description in one line.
func (t *Tool) Operation(raw json.RawMessage) tools.Operation {
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	head := "MCP " + t.srv.name + " · " + t.name
	if err := dec.Decode(&args); err != nil || args == nil {
		return tools.Operation{Text: head + "\n" + string(raw)}
	}
	delete(args, tools.RiskLevelArg)
	masked := false
	shown := maskValue(args, &masked)
	body, err := json.MarshalIndent(shown, "", "  ")
	if err != nil {
		body = raw
	}
	text := head + "\n" + string(body)
	if d := tools.OneLine(t.desc, 160); d != "" && !t.changed {
		text += "\n(about the tool: " + d + ")"
	}
	return tools.Operation{Text: text, Masked: masked}
}

// maskValue copies v with the values of secret-looking keys replaced by
// tools.Mask and URLs' credentials masked, at any depth.
func maskValue(v any, masked *bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if httptool.SecretName(k) && e != nil {
				out[k] = tools.Mask
				*masked = true
				continue
			}
			out[k] = maskValue(e, masked)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = maskValue(e, masked)
		}
		return out
	case string:
		if strings.Contains(x, "://") {
			if s, ok := httptool.MaskURL(x); ok {
				*masked = true
				return s
			}
		}
	}
	return v
}
