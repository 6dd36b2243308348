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
	if len(args) == 0 {
		fmt.Fprintln(stderr, "countersign: the bot is not built yet; try `countersign assess --help`")
		return 2
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
		fmt.Fprintln(stderr, "countersign run: the bot is not built yet")
		return 2
	}
	fmt.Fprintf(stderr, "countersign: unknown command %q\n\n%s", args[0], usage)
	return 2
}

const usage = `Usage: countersign <command> [flags]

Commands:
  assess    judge tool calls read from standard input (see countersign assess --help)
  version   print the version
  help      print this help
`
