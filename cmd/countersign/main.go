// Command countersign is the Countersign chat-ops bot and its command-line
// tools. main only dispatches to a subcommand; each lives in its own file.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// dispatch runs the subcommand named by args[0] and returns the exit status.
// run is the default, also when args start with one of its flags
// (countersign --config c.yaml).
func dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	name, rest := "run", args
	if len(args) > 0 && !isRunFlag(args[0]) {
		name, rest = args[0], args[1:]
	}
	switch name {
	case "run":
		return runMain(rest, stdin, stdout, stderr)
	case "assess":
		return assessMain(rest, stdin, stdout, stderr)
	case "audit":
		return auditMain(rest, stdout, stderr)
	case "config":
		return configMain(rest, stdout, stderr)
	case "mcp":
		return mcpMain(rest, stdout, stderr)
	case "hook":
		return hookMain(rest, stdin, stdout, stderr)
	case "version", "--version":
		fs := flag.NewFlagSet("version", flag.ContinueOnError)
		if code, done := parseFlags(fs, rest, versionHelp, stdout, stderr); done {
			return code
		}
		fmt.Fprintln(stdout, "countersign", version())
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "countersign: unknown command %q\n\n%s", name, usage)
	return 2
}

// isRunFlag reports whether arg, before any command, is a flag of run's:
// any flag but those countersign answers itself (help and --version).
func isRunFlag(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "--version":
		return false
	}
	return strings.HasPrefix(arg, "-")
}

const versionHelp = `Usage: countersign version

Prints the version of this build.
`

const usage = `Usage: countersign [command] [flags]

Commands:
  run       start the bot (the default; see countersign run --help)
  config    config check: validate and print the effective configuration;
            config example: print the documented example
  assess    judge tool calls read from standard input (see countersign assess --help)
  mcp       mcp accept SERVER: pin an MCP server's changed tools; mcp list
            (see countersign mcp --help)
  hook      hook claude-code, hook codex: the agent's PreToolUse hook,
            asking the gateway (see countersign hook --help)
  audit     audit tail: the latest audit events; audit export: them filtered,
            as JSON lines (see countersign audit --help)
  version   print the version
  help      print this help
`
