package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/httptool"
	"github.com/countersign/countersign/tools/mcptool"
)

// mcpState is what the bot knows of its MCP servers: the warnings of
// their start (shown under the banner) and, for config check --connect,
// what each listed.
type mcpState struct {
	mu       sync.Mutex
	warnings []string
	listed   []string
}

// checkMCP validates the mcp section and records it, with defaults and
// secret-looking env values redacted, in the effective configuration.
func (a *app) checkMCP(c mcptool.Config) error {
	eff, err := c.WithDefaults()
	if err != nil {
		return err
	}
	shown := mcptool.Config{Servers: map[string]mcptool.ServerConfig{}}
	for name, s := range eff.Servers {
		s.Env = maps.Clone(s.Env)
		for k := range s.Env {
			if httptool.SecretName(k) {
				s.Env[k] = tools.Mask
			}
		}
		shown.Servers[name] = s
	}
	a.cfg.MCP = shown
	return nil
}

// startMCP starts the configured MCP servers and offers their tools:
// added to the registry, judged by the policy's MCP rules, pinned in the
// store. A server that cannot start is a warning under the banner.
func (a *app) startMCP(ctx context.Context, c mcptool.Config) error {
	if len(c.Servers) == 0 {
		return nil
	}
	c, err := c.WithDefaults()
	if err != nil {
		return err
	}
	opts := mcptool.Options{Log: a.log, Version: version(), Pins: a.store, Taken: func(n string) bool {
		_, ok := a.tools.Lookup(n)
		return ok
	}}
	opts = mcpAsCommands(a.cfg, opts) // runas.go
	m, warnings := mcptool.Start(ctx, c, opts)
	a.closer = append(a.closer, m.Close)
	reg, err := a.tools.With(m.Tools()...)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	a.tools = reg
	a.policy = a.policy.WithMCP(m.Policy())
	for _, line := range m.Summary() {
		a.log.Info("MCP server started", "summary", line)
	}
	// The banner names each server and how many tools it offers; the log,
	// config check --connect and mcp list name the tools.
	count := map[string]int{}
	var servers []string
	for _, t := range m.Tools() {
		srv := t.(*mcptool.Tool).Server()
		if count[srv] == 0 {
			servers = append(servers, srv)
		}
		count[srv]++
	}
	for _, srv := range servers {
		a.names = append(a.names, fmt.Sprintf("MCP %s (%d tools)", srv, count[srv]))
	}
	for _, w := range warnings {
		a.log.Warn("MCP server problem at start", "problem", w)
	}
	a.mcp.mu.Lock()
	a.mcp.warnings = append(a.mcp.warnings, warnings...)
	a.mcp.mu.Unlock()
	return nil
}

// mcpWarnings are the lines startWarnings adds under the banner.
func (a *app) mcpWarnings() []string {
	a.mcp.mu.Lock()
	defer a.mcp.mu.Unlock()
	return slices.Clone(a.mcp.warnings)
}

// mcpBackends are config check --connect's checks of the MCP servers:
// each is started, its tools listed (into a.mcp.listed, which check
// prints), and stopped.
func (a *app) mcpBackends(c mcptool.Config) []backend {
	c, err := c.WithDefaults()
	if err != nil {
		return nil
	}
	var bs []backend
	for _, name := range slices.Sorted(maps.Keys(c.Servers)) {
		one := mcptool.Config{Servers: map[string]mcptool.ServerConfig{name: c.Servers[name]}}
		bs = append(bs, backend{name: "MCP server " + name, check: func(ctx context.Context) error {
			// Its own start_timeout applies, not the backends' 5s: npx may
			// need longer to fetch a server the first time.
			m, warnings := mcptool.Start(context.WithoutCancel(ctx), one, mcpAsCommands(a.cfg, mcptool.Options{Log: a.log, Version: version()}))
			defer m.Close()
			if len(m.Summary()) == 0 && len(warnings) > 0 {
				why := strings.TrimPrefix(warnings[0], "MCP server "+name+" could not start: ")
				return errors.New(strings.TrimSuffix(why, "; its tools are not offered until the bot restarts."))
			}
			a.mcp.mu.Lock()
			a.mcp.listed = append(a.mcp.listed, m.Summary()...)
			a.mcp.listed = append(a.mcp.listed, warnings...)
			a.mcp.mu.Unlock()
			return nil
		}})
	}
	return bs
}

// printMCPListed prints what config check --connect's MCP checks listed.
func (a *app) printMCPListed(w io.Writer) {
	a.mcp.mu.Lock()
	defer a.mcp.mu.Unlock()
	lines := slices.Clone(a.mcp.listed)
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Fprintf(w, "#   %s\n", l)
	}
}

// assessWithMCP gives assess the MCP tools: those the configuration lists
// (mcp.servers.NAME.tools), or with --mcp (start) those the servers list
// when started (none is called), so that their calls are judged by the
// MCP rules. A server that cannot start is said on stderr, and its calls
// are judged as any unknown tool's.
func assessWithMCP(ctx context.Context, cfg fileConfig, p *risk.Policy, start bool, stderr io.Writer) (*risk.Policy, error) {
	c, err := cfg.MCP.WithDefaults()
	if err != nil {
		return nil, err
	}
	if !start {
		return p.WithMCP(mcptool.Declared(c, builtinTool)), nil
	}
	m, warnings := mcptool.Start(ctx, c, mcptool.Options{Log: discardLogger(), Version: version()})
	defer m.Close()
	for _, w := range warnings {
		fmt.Fprintf(stderr, "countersign assess: %s\n", w)
	}
	return p.WithMCP(m.Policy()), nil
}

const mcpHelp = `Usage: countersign mcp accept [--config FILE] SERVER
       countersign mcp list [--config FILE]

accept  starts the MCP server SERVER of the configuration (mcp.servers),
        lists its tools, and pins them as they are now in the approval
        store, in place of the old pins. Run it after reviewing a change
        the bot refused ("changed its tool …"), then restart the bot. Needs
        the Redis store: pins in memory live only as long as the bot does
        (a restart pins the tools afresh).
list    starts every configured MCP server and prints each tool: its
        function name, its hints, how a call without risk_level is judged,
        and whether it matches its pin in the store.
`

// mcpMain is ` + "`countersign mcp`" + `.
func mcpMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, mcpHelp)
		return 2
	}
	verb := args[0]
	switch verb {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, mcpHelp)
		return 0
	case "accept", "list":
	default:
		fmt.Fprintf(stderr, "countersign mcp: unknown command %q\n\n%s", verb, mcpHelp)
		return 2
	}
	fs := flag.NewFlagSet("mcp "+verb, flag.ContinueOnError)
	path := fs.String("config", "", "YAML configuration file")
	var server string
	rest := args[1:]
	if verb == "accept" {
		// The server's name may come before or after the flags.
		if len(rest) > 0 && len(rest[0]) > 0 && rest[0][0] != '-' {
			server, rest = rest[0], rest[1:]
		} else if n := len(rest); n > 0 && len(rest[n-1]) > 0 && rest[n-1][0] != '-' && (n < 2 || rest[n-2] != "--config") {
			server, rest = rest[n-1], rest[:n-1]
		}
	}
	if code, done := parseFlags(fs, rest, mcpHelp, stdout, stderr); done {
		return code
	}
	if verb == "accept" && server == "" {
		fmt.Fprintf(stderr, "countersign mcp accept: name the server, e.g. countersign mcp accept fs\n\n%s", mcpHelp)
		return 2
	}
	cfg, err := loadConfig(configPath(*path))
	if err != nil {
		fmt.Fprintf(stderr, "countersign mcp: %v\n", err)
		return 2
	}
	ctx := context.Background()
	a, err := build(ctx, cfg, env{getenv: os.Getenv, logOut: io.Discard, dial: true})
	if err != nil {
		fmt.Fprintf(stderr, "countersign mcp: %v\n", err)
		return 2
	}
	defer a.close()
	if len(a.cfg.MCP.Servers) == 0 {
		fmt.Fprintln(stderr, "countersign mcp: no MCP server is configured (mcp.servers)")
		return 1
	}
	pins := a.store
	if verb == "accept" {
		if a.redis == nil {
			fmt.Fprintf(stderr, "countersign mcp accept: the approval store is in memory, so pins live only as long as the bot runs; "+
				"restart the bot to pin %s's tools afresh, or configure store.redis_url to keep pins\n", server)
			return 1
		}
		c, _ := cfg.MCP.WithDefaults() // checked by build
		names, err := mcptool.Accept(ctx, c, server, mcptool.Options{Log: discardLogger(), Version: version()}, pins.AcceptMCP)
		if err != nil {
			fmt.Fprintf(stderr, "countersign mcp accept: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "accepted %d tools of %s as they are now: %v\nrestart the bot to offer them.\n", len(names), server, names)
		return 0
	}
	return mcpList(ctx, a, cfg, pins, stdout, stderr)
}

// mcpList is `countersign mcp list`.
func mcpList(ctx context.Context, a *app, cfg fileConfig, pins approval.MCPPinner, stdout, stderr io.Writer) int {
	c, _ := cfg.MCP.WithDefaults()
	opts := mcptool.Options{Log: discardLogger(), Version: version(), Taken: func(n string) bool {
		_, ok := a.tools.Lookup(n)
		return ok
	}}
	if a.redis != nil {
		// Compare with the store's pins without pinning anything new.
		opts.Pins = readOnlyPins{pins}
	}
	m, warnings := mcptool.Start(ctx, c, opts)
	defer m.Close()
	p := a.policy.WithMCP(m.Policy())
	for _, t := range m.Tools() {
		mt := p.MCPTools()[t.Name()]
		v := p.Assess(risk.Call{Tool: t.Name(), Args: []byte(`{}`)})
		hint := "read-only"
		switch {
		case mt.Destructive():
			hint = "destructive"
		case !mt.ReadOnlyHint:
			hint = "not destructive"
		}
		fmt.Fprintf(stdout, "%s\t%s/%s\t%s\t%s (%s)\n", t.Name(), mt.Server, mt.Tool, hint, v.Decision, v.Rule)
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "countersign mcp list: %s\n", w)
	}
	if len(warnings) > 0 {
		return 1
	}
	return 0
}

// readOnlyPins answers with the stored pin, or the given hash when none
// is stored, and stores nothing.
type readOnlyPins struct{ p approval.MCPPinner }

func (r readOnlyPins) PinMCP(ctx context.Context, server, tool, hash string) (string, error) {
	m, err := r.p.MCPPins(ctx, server)
	if err != nil {
		return "", err
	}
	if old, ok := m[tool]; ok {
		return old, nil
	}
	return hash, nil
}

// discardLogger drops the log of short-lived commands (assess, mcp).
func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// builtinTool reports whether name is one of the built-in tools, whose
// names an MCP tool never takes.
func builtinTool(name string) bool {
	return slices.Contains([]string{risk.ToolCommand, risk.ToolSQL, risk.ToolFile, risk.ToolHTTP}, name)
}
