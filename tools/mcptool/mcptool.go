// Package mcptool offers the tools of MCP servers (Model Context Protocol)
// to the model like the built-in tools: each server of the configuration's
// mcp section is started with the bot (a program over stdio, or a
// streamable HTTP endpoint), its tools are listed, named for the model,
// pinned, and judged by risk's MCP rules (risk/mcp.go). It uses the
// official Go SDK, github.com/modelcontextprotocol/go-sdk.
//
// Names. A tool's function name is the server's name, "__", and the tool's
// name, with every character outside [A-Za-z0-9_-] replaced by "_", so that it
// is a name the chat-completions API accepts (^[a-zA-Z0-9_-]{1,64}$). A
// name longer than 64 bytes, or one that is already taken (by a built-in
// tool, or by an earlier tool in server-name order then the server's
// listing order), is cut to 55 bytes and ends in "_" and the first 8 hex
// digits of the SHA-256 of server, a NUL byte and the tool's name.
//
// Pins. A tool's description, input and output schemas, title and
// annotations are hashed (Hash) and pinned in the store when first seen.
// Every call lists the server's tools again and runs only when the tool
// is still what was pinned and what the bot listed at start; otherwise
// it is refused with a message naming it, until an operator runs
// `countersign mcp accept <server>` (Accept) and restarts the bot.
package mcptool

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// Pinner keeps the pins of tools; approval.MCPPinner is one (both
// stores implement it).
type Pinner interface {
	PinMCP(ctx context.Context, server, tool, hash string) (pinned string, err error)
}

// Options are what Start needs from the process.
type Options struct {
	// LookupEnv reads the bot's environment (env_pass, headers_env);
	// default os.LookupEnv. Environ lists it, for the LC_* variables;
	// default os.Environ().
	LookupEnv func(string) (string, bool)
	Environ   []string
	// Pins keeps the pins; nil keeps them in this process only.
	Pins Pinner
	// Taken reports whether a function name is already a tool's (the
	// built-in tools); nil means none is.
	Taken func(name string) bool
	// Log receives restarts and failures; default slog.Default().
	Log *slog.Logger
	// Version is the client version told to servers.
	Version string
	// RunAs is the user stdio servers run as: the command tool's run_as
	// as main resolved it ("" the bot's own user).
	RunAs string
	// Fence runs stdio servers fenced by the kernel (program.go); main
	// sets it unless tools.execute_command.fence.mode is off or the
	// kernel cannot fence.
	Fence bool
}

// Manager holds the running servers and their tools.
type Manager struct {
	servers []*server
	tools   []*Tool
}

// Start starts every configured server at once, lists its tools, pins
// them and names them. cfg must have been through WithDefaults. A server
// that cannot start, or whose tools cannot be listed, is a warning (one
// sentence each, naming the server and the fix) and offers no tools; so
// is a tool that changed since it was pinned (it is offered, and refused).
func Start(ctx context.Context, cfg Config, opts Options) (*Manager, []string) {
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	if opts.Pins == nil {
		opts.Pins = &memPins{m: map[string]string{}}
	}
	if opts.Taken == nil {
		opts.Taken = func(string) bool { return false }
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Version == "" {
		opts.Version = "devel"
	}
	names := slices.Sorted(maps.Keys(cfg.Servers))
	type started struct {
		srv   *server
		tools []*mcp.Tool
		err   error
	}
	out := make([]started, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		srv := newServer(name, cfg.Servers[name], opts)
		out[i].srv = srv
		wg.Go(func() {
			sess, err := srv.start(ctx)
			if err != nil {
				out[i].err = err
				return
			}
			lctx, cancel := context.WithTimeout(ctx, srv.cfg.StartTimeout)
			defer cancel()
			gen := srv.listed.changes.Load()
			out[i].tools, out[i].err = listTools(lctx, sess)
			if out[i].err != nil {
				srv.close()
				return
			}
			srv.listed.seed(gen, out[i].tools)
		})
	}
	wg.Wait()

	m := &Manager{}
	var warnings []string
	taken := map[string]bool{}
	for _, st := range out {
		if st.err != nil {
			warnings = append(warnings, fmt.Sprintf("MCP server %s could not start: %v; its tools are not offered until the bot restarts.", st.srv.name, st.err))
			continue
		}
		m.servers = append(m.servers, st.srv)
		rules, _ := risk.CompileMCPRules("mcp.servers."+st.srv.name+".policy", st.srv.cfg.Policy) // checked by WithDefaults
		for _, mt := range st.tools {
			t, warn := newTool(ctx, st.srv, mt, rules, opts.Pins)
			if warn != "" {
				warnings = append(warnings, warn)
			}
			if t == nil {
				continue
			}
			t.fn = functionName(st.srv.name, mt.Name, func(n string) bool { return taken[n] || opts.Taken(n) })
			if t.fn == "" {
				warnings = append(warnings, fmt.Sprintf("MCP server %s: no free function name for its tool %q; it is not offered.", st.srv.name, mt.Name))
				continue
			}
			taken[t.fn] = true
			m.tools = append(m.tools, t)
		}
	}
	return m, warnings
}

// Declared is what the policy needs to judge the tools the configuration
// lists (mcp.servers.<name>.tools), by function name, named as Start would
// name them; taken reports the names of the built-in tools. Nothing is
// started.
func Declared(cfg Config, taken func(string) bool) map[string]risk.MCPTool {
	out := map[string]risk.MCPTool{}
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		s := cfg.Servers[name]
		rules, err := risk.CompileMCPRules("mcp.servers."+name+".policy", s.Policy)
		if err != nil {
			continue // WithDefaults reports it
		}
		for _, t := range s.Tools {
			fn := functionName(name, t.Name, func(n string) bool { _, ok := out[n]; return ok || taken(n) })
			if fn == "" {
				continue
			}
			mt := risk.MCPTool{Server: name, Tool: t.Name, Trusted: s.Trusted,
				ReadOnlyHint: t.Annotations.ReadOnlyHint, DestructiveHint: t.Annotations.DestructiveHint}
			mt.Setting, mt.From = rules.For(t.Name)
			out[fn] = mt
		}
	}
	return out
}

// listTools lists every tool of a session, page by page.
func listTools(ctx context.Context, sess *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing its tools failed: %w", err)
		}
		out = append(out, t)
	}
	return out, nil
}

// Tools returns the tools of the servers that started, in server-name
// order then each server's listing order, for the registry.
func (m *Manager) Tools() []tools.Tool {
	out := make([]tools.Tool, len(m.tools))
	for i, t := range m.tools {
		out[i] = t
	}
	return out
}

// Policy returns what the policy needs to judge the tools, by function
// name (risk.Policy.WithMCP).
func (m *Manager) Policy() map[string]risk.MCPTool {
	out := make(map[string]risk.MCPTool, len(m.tools))
	for _, t := range m.tools {
		out[t.fn] = t.judged
	}
	return out
}

// Summary is one line per server that started: its name, how it is
// reached, and its tools' function names.
func (m *Manager) Summary() []string {
	var out []string
	for _, s := range m.servers {
		var fns []string
		for _, t := range m.tools {
			if t.srv == s {
				fns = append(fns, t.fn)
			}
		}
		out = append(out, fmt.Sprintf("MCP server %s (%s): %d tools: %s", s.name, s.cfg.how(), len(fns), strings.Join(fns, ", ")))
	}
	return out
}

// how says how a server is reached, without secrets.
func (s ServerConfig) how() string {
	if s.URL != "" {
		return "streamable HTTP " + s.URL
	}
	return "stdio " + s.Command[0]
}

// Close stops every server.
func (m *Manager) Close() error {
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Go(s.close)
	}
	wg.Wait()
	return nil
}

// Hash is the pin of a tool: the SHA-256 (hex) of its description, input
// and output schemas, title and annotations as canonical JSON (object keys
// in order). The name is the pin's key, not part of it.
func Hash(t *mcp.Tool) (string, error) {
	canon := func(v any) (any, error) {
		if v == nil {
			return nil, nil
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		var out any
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, err
		}
		return out, nil
	}
	in, err1 := canon(t.InputSchema)
	outS, err2 := canon(t.OutputSchema)
	ann, err3 := canon(t.Annotations)
	if err := cmp.Or(err1, err2, err3); err != nil {
		return "", fmt.Errorf("encode the tool %q: %w", t.Name, err)
	}
	b, err := json.Marshal(map[string]any{
		"description": t.Description, "title": t.Title,
		"inputSchema": in, "outputSchema": outS, "annotations": ann,
	})
	if err != nil {
		return "", fmt.Errorf("encode the tool %q: %w", t.Name, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Accept lists the tools of the named server as they are now and pins
// them all in place of the old pins (countersign mcp accept). It returns
// the tools' names.
func Accept(ctx context.Context, cfg Config, name string, opts Options, accept func(ctx context.Context, server string, hashes map[string]string) error) ([]string, error) {
	sc, ok := cfg.Servers[name]
	if !ok {
		known := slices.Sorted(maps.Keys(cfg.Servers))
		return nil, fmt.Errorf("there is no MCP server %q in the configuration (servers: %s)", name, strings.Join(known, ", "))
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	srv := newServer(name, sc, opts)
	sess, err := srv.start(ctx)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s could not start: %w", name, err)
	}
	defer srv.close()
	lctx, cancel := context.WithTimeout(ctx, sc.StartTimeout)
	defer cancel()
	ts, err := listTools(lctx, sess)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: %w", name, err)
	}
	hashes := map[string]string{}
	var names []string
	for _, t := range ts {
		h, err := Hash(t)
		if err != nil {
			return nil, err
		}
		hashes[t.Name] = h
		names = append(names, t.Name)
	}
	if err := accept(ctx, name, hashes); err != nil {
		return nil, err
	}
	return names, nil
}

// maxName is the longest function name the chat-completions API accepts.
const maxName = 64

var nameByte = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// functionName names a tool for the model (see the package comment), or
// returns "" when even the hashed name is taken.
func functionName(server, tool string, taken func(string) bool) string {
	base := nameByte.ReplaceAllString(server+"__"+tool, "_")
	if len(base) <= maxName && !taken(base) {
		return base
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	hashed := base[:min(len(base), maxName-9)] + "_" + hex.EncodeToString(sum[:4])
	if taken(hashed) {
		return ""
	}
	return hashed
}

// memPins keeps pins in this process when no store is given.
type memPins struct {
	mu sync.Mutex
	m  map[string]string
}

func (p *memPins) PinMCP(_ context.Context, server, tool, hash string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := server + "\x00" + tool
	if old, ok := p.m[k]; ok {
		return old, nil
	}
	p.m[k] = hash
	return hash, nil
}
