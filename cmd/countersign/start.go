package main

import (
	"context"
	"os"
)

// startWarnings are the problems run says under its banner, one line each
// (and logs at info: on a terminal the log shows warnings, and the banner
// says it already):
// backends that are down, and commands that would run as root. The bot
// starts anyway; each line says what it affects.
func (a *app) startWarnings(ctx context.Context, cfg fileConfig, euid int) []string {
	var lines []string
	for _, d := range downLines(reachAll(ctx, a.backends(cfg, os.Getenv, false))) {
		a.log.Info("a backend is down at start", "problem", d)
		lines = append(lines, d+"; what needs it fails until it is back.")
	}
	lines = append(lines, a.mcpWarnings()...) // mcp.go
	// How calls without a card are fenced (runas.go).
	if w, warn := fenceLine(a.cfg); warn {
		a.log.Warn("the kernel cannot fence calls that run without a card", "problem", w)
		lines = append(lines, w+".")
	}
	if w := rootWarning(a.cfg, euid); w != "" {
		a.log.Info("commands run as root", "fix", "set tools.execute_command.run_as")
		lines = append(lines, w)
	}
	return lines
}

// rootWarning is the warning for a bot running as root whose commands run
// as root too: a root command can read the bot's own secrets (its
// environment and memory under /proc: API keys, DSNs, tokens), however the
// process is fenced. It is not an error, so that `go run ./cmd/countersign`
// works as root out of the box (containers, CI); allow_root says it is
// meant.
func rootWarning(cfg fileConfig, euid int) string {
	c := cfg.Tools.Command
	if euid != 0 || !on(c.Enabled, true) || c.Config.RunAs != "" || c.AllowRoot {
		return ""
	}
	return "the bot runs as root and tools.execute_command.run_as is not set, so every command runs as root " +
		"and can read the bot's own secrets from /proc (API keys, DSNs, tokens). Set tools.execute_command.run_as " +
		"to an unprivileged user (e.g. nobody), or tools.execute_command.allow_root: true to run as root knowingly."
}
