package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/countersign/countersign/cmd/internal/assess"
	"github.com/countersign/countersign/risk"
)

const assessHelp = `Usage: countersign assess [--config FILE] [--mode strict|guarded|smart]

Judges tool calls without running them, and without touching any server.

Input (standard input): one JSON object a line,
  {"tool": "execute_command", "args": {"command": "ls -la"}, "mode": "guarded", "channel": "C123"}
  tool     execute_command, execute_sql, file_operations, http_request, or any other name
  args     the call's arguments, including the LLM's risk_level when it gave one
  mode     optional: strict, guarded or smart, for this call only
  channel  optional: applies that channel's overrides from the config
Other fields are ignored, so the peer corpora can be piped in as they are.
Blank lines are skipped.

Output (standard output): one JSON object a line, in the order of the input,
  {"decision":"auto|confirm|block","risk":"low|medium|high",
   "rule":"absurd|preauthorized|mode|danger|llm|whitelist|default","reasons":["..."]}
with "llm_level" when the call carried a valid risk_level. A line that cannot
be read still gets an answer: "decision":"confirm" with an "error" field, and
the exit status is then 1. Exit status 2 means a bad flag or config.

The rules, the first that applies deciding:
  1 absurd         block: rm -rf /, mkfs on a disk, fork bombs, non-http(s) URLs,
                   cloud metadata and link-local addresses, paths that leave the root
  2 preauthorized  auto: operations listed in the config (exact text or "re:" pattern)
  3 mode           confirm: strict mode confirms everything else
  4 danger         confirm (high): recursive rm, kill, DROP, DELETE without WHERE,
                   secrets, ... whatever the LLM says
  5 llm            the LLM's risk_level: high/medium confirm; low runs in smart mode,
                   is ignored in guarded mode
  6 whitelist      auto: read-only commands, one plain read statement, GET/HEAD/OPTIONS,
                   file read/list/exists/stat
  7 default        confirm (medium): everything else, unknown tools included

Flags:
  --config FILE    YAML file; only its "risk:" section is read, e.g.
                     risk:
                       mode: guarded
                       tools:
                         execute_command:
                           preauthorized: ["systemctl restart nginx", "re:ls( .*)?"]
                       channels:
                         C0PROD: {mode: strict}
  --mcp            start the MCP servers of the config's "mcp:" section to list
                   their tools (none is called), so that a call of one, by its
                   function name ({"tool":"fs__write_file",...}), is judged by the
                   MCP rules (operator setting, trusted read-only hint,
                   destructive hints). Without it, the tools a server lists in
                   the config (mcp.servers.NAME.tools) are judged so, and any
                   other call is an unknown tool's
  --mode MODE      the mode of every call that does not carry its own "mode";
                   it overrides the config's global, per-tool and per-channel modes
`

// assessMain is `countersign assess`.
func assessMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("assess", flag.ContinueOnError)
	configPath := fs.String("config", "", "YAML configuration file")
	mode := fs.String("mode", "", "strict, guarded or smart")
	withMCP := fs.Bool("mcp", false, "start the configured MCP servers to list their tools")
	if code, done := parseFlags(fs, args, assessHelp, stdout, stderr); done {
		return code
	}
	m, ok := assess.ParseMode(*mode)
	if !ok {
		fmt.Fprintf(stderr, "countersign assess: --mode %q is not one of strict, guarded, smart\n", *mode)
		return 2
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "countersign assess: %v\n", err)
		return 2
	}
	policy, err := risk.New(cfg.Risk)
	if err != nil {
		fmt.Fprintf(stderr, "countersign assess: config: %v\n", err)
		return 2
	}
	if policy, err = assessWithMCP(context.Background(), cfg, policy, *withMCP, stderr); err != nil { // mcp.go
		fmt.Fprintf(stderr, "countersign assess: config: %v\n", err)
		return 2
	}
	if os.Getenv("GOGC") == "" {
		// Every call leaves short-lived parse trees behind and the live heap
		// stays small (a few batches), so a larger GC target buys about a
		// third more calls per CPU second for a few megabytes.
		debug.SetGCPercent(400)
	}
	out := bufio.NewWriterSize(stdout, 64<<10)
	unreadable, err := assess.Stream(policy, m, stdin, out)
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		fmt.Fprintf(stderr, "countersign assess: %v\n", err)
		return 1
	}
	if unreadable > 0 {
		fmt.Fprintf(stderr, "countersign assess: %d line(s) could not be read\n", unreadable)
		return 1
	}
	return 0
}
