// Command countersign is the Countersign chat-ops bot and its command-line
// tools. main only dispatches to a subcommand; each lives in its own file.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// dispatch runs the subcommand named by args[0] and returns the exit status.
func dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || (len(args[0]) > 0 && args[0][0] == '-' && args[0] != "-h" && args[0] != "-help" && args[0] != "--help" && args[0] != "--version") {
		return runMain(args, stdin, stdout, stderr)
	}
	switch args[0] {
	case "assess":
		return assessMain(args[1:], stdin, stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "countersign", version())
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "run":
		return runMain(args[1:], stdin, stdout, stderr)
	case "config":
		return configMain(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "countersign: unknown command %q\n\n%s", args[0], usage)
	return 2
}

const usage = `Usage: countersign [command] [flags]

Commands:
  run       start the bot (the default; see countersign run --help)
  config    config check: validate and print the effective configuration;
            config example: print the documented example
  assess    judge tool calls read from standard input (see countersign assess --help)
  version   print the version
  help      print this help
`
