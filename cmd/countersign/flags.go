package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// parseFlags parses a subcommand's flags, which take no other arguments.
// --help prints help once, on standard output; a bad flag or a stray
// argument prints the problem and help on standard error. done is true when
// the subcommand should end at once, with status code.
func parseFlags(fs *flag.FlagSet, args []string, help string, stdout, stderr io.Writer) (code int, done bool) {
	fs.SetOutput(io.Discard) // the flag package would print help on every error, and twice for --help
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, help)
		return 0, true
	case err != nil:
		fmt.Fprintf(stderr, "countersign %s: %v\n\n%s", fs.Name(), err, help)
		return 2, true
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "countersign %s: unexpected argument %q\n\n%s", fs.Name(), fs.Arg(0), help)
		return 2, true
	}
	return 0, false
}

// option changes the loaded configuration as a command-line flag says.
type option func(*fileConfig)

// withRoot is --root DIR: tools.root, over the file's; "" changes nothing.
func withRoot(dir string) option {
	return func(c *fileConfig) {
		if dir != "" {
			c.Tools.Root = dir
		}
	}
}
