package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/gateway"
)

// startGateway serves the gateway (gateway.listen): other agents' calls
// enter the bot's gate, and their cards show through its adapters.
func startGateway(cfg gateway.Config, b *bot.Bot, log *slog.Logger) (*gateway.Server, error) {
	gw, err := gateway.New(cfg, gateway.Deps{Gate: b.Agent(), Getenv: os.Getenv, Serves: b.Serves, CardURL: b.CardURL, Log: log})
	if err != nil {
		return nil, err
	}
	if err := gw.Listen(); err != nil {
		return nil, err
	}
	log.Info("serving the gateway", "addr", gw.Addr(), "agents", len(cfg.Agents))
	return gw, nil
}

// gatewayURL is the gateway's MCP address in words, for the banner.
func gatewayURL(cfg gateway.Config, addr string) string {
	scheme := "http"
	if cfg.TLSCert != "" {
		scheme = "https"
	}
	return scheme + "://" + addr + "/mcp"
}

const hookHelp = `Usage: countersign hook claude-code | codex

Claude Code's (or Codex's) PreToolUse hook: reads the hook's JSON on standard input, asks
the Countersign gateway whether the call may go ahead (waiting while a card
waits for a person), and prints Claude Code's decision: allow, or deny with
the reason and who decided. Bash, Write, Edit, MultiEdit, WebFetch and MCP
tools are asked about (Codex: Bash, apply_patch one file at a time, MCP
tools); other tools are left to the agent's own permissions. It fails
closed: a gateway that does not answer is a deny.

Environment:
  COUNTERSIGN_GATEWAY_URL     the gateway's base URL, e.g. http://127.0.0.1:8790
  COUNTERSIGN_GATEWAY_TOKEN   this agent's bearer token (gateway.agents.<name>.token_env)

In .claude/settings.json:
  {"hooks": {"PreToolUse": [{"matcher": "Bash|Write|Edit|MultiEdit|WebFetch|mcp__.*",
    "hooks": [{"type": "command", "command": "countersign hook claude-code", "timeout": 3600}]}]}}

In ~/.codex/hooks.json, the same with "matcher": "Bash|apply_patch|mcp__.*"
and "command": "countersign hook codex".
`

// hookMain is `countersign hook claude-code`.
func hookMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	if len(args) == 0 || (args[0] != string(gateway.ClaudeCode) && args[0] != string(gateway.Codex)) {
		if code, done := parseFlags(fs, args, hookHelp, stdout, stderr); done {
			return code
		}
		fmt.Fprint(stderr, "countersign hook: name the agent: countersign hook claude-code, or countersign hook codex\n")
		return 2
	}
	if code, done := parseFlags(fs, args[1:], hookHelp, stdout, stderr); done {
		return code
	}
	ctx, stop := interruptible(stderr)
	defer stop()
	client := &http.Client{Timeout: 24 * time.Hour}
	err := gateway.Hook(ctx, gateway.Agent(args[0]), stdin, stdout, os.Getenv("COUNTERSIGN_GATEWAY_URL"), os.Getenv("COUNTERSIGN_GATEWAY_TOKEN"), client)
	if err != nil {
		fmt.Fprintf(stderr, "countersign hook: %v\n", err)
		return 1
	}
	return 0
}
