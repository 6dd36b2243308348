package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Command is one simple command of a script, as approval rules name it
// (bot.rules[].match.command).
type Command struct {
	// Name is the command's name as the command table knows it: rm for
	// /bin/rm and for ./rm alike.
	Name string `json:"name"`
	// Args are the words after the name, quotes removed; a word known only
	// at run time keeps its source form ("$X").
	Args []string `json:"args,omitempty"`
}

// maxNameDepth bounds how deep sh -c and eval are read again for names.
const maxNameDepth = 3

// Commands lists every simple command of script, in the order they stand,
// so that rules can match on what runs: a wrapper and the command it runs
// are both listed (sudo systemctl restart nginx gives sudo, then systemctl
// restart nginx), and the script of sh -c, bash -c and eval is read too.
//
// ok is false when some command cannot be named here: the script (or an
// inner one) does not parse, a command's name is computed at run time
// ($CMD, $(…)), a wrapper runs a command this reading does not follow
// (xargs, parallel, ssh, watch, su -c), or the nesting is too deep. A
// caller that matches rules on names must then treat the script as "could
// run anything" (fail closed).
func (a *Analyzer) Commands(script string) (cmds []Command, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			cmds, ok = nil, false
		}
	}()
	n := namer{a: a, ok: true}
	n.script(script, 0)
	return n.cmds, n.ok
}

// namer collects the commands of one Commands call.
type namer struct {
	a    *Analyzer
	cmds []Command
	ok   bool
}

func (n *namer) script(src string, depth int) {
	if depth > maxNameDepth {
		n.ok = false
		return
	}
	f, err := n.a.parse(src)
	if err != nil {
		n.ok = false
		return
	}
	syntax.Walk(f, func(node syntax.Node) bool {
		if c, isCall := node.(*syntax.CallExpr); isCall && len(c.Args) > 0 {
			n.command(words(c.Args, nil), depth)
		}
		return true
	})
}

// followed are the wrappers whose inner command this reading cannot name:
// it is read from input, given as a remote or repeated string, or the
// wrapper's options are not parsed here.
var followed = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range wrapperNames {
		if _, strips := stdinWrappers[w]; !strips {
			m[w] = true
		}
	}
	return m
}()

// command records one command line and the commands it runs.
func (n *namer) command(argv []arg, depth int) {
	for len(argv) > 0 {
		name, _, known := commandName(argv[0])
		if !known {
			n.ok = false
			return
		}
		c := Command{Name: name}
		for _, w := range argv[1:] {
			c.Args = append(c.Args, w.text)
		}
		n.cmds = append(n.cmds, c)
		switch {
		case name == "eval":
			parts := make([]string, 0, len(argv)-1)
			for _, w := range argv[1:] {
				if w.dynamic {
					n.ok = false
					return
				}
				parts = append(parts, w.text)
			}
			n.script(strings.Join(parts, " "), depth+1)
			return
		case shells[name]:
			n.shellC(argv[1:], depth)
			return
		case followed[name]:
			n.ok = false
			return
		}
		rest := stripWrappers(argv)
		if len(rest) == len(argv) {
			return // not a wrapper
		}
		if name == "su" {
			n.ok = false // su -c 'script' or a login shell
			return
		}
		argv = rest
	}
}

// shellC reads the script of sh -c SCRIPT; a shell reading a file or its
// input runs what this reading cannot see.
func (n *namer) shellC(args []arg, depth int) {
	for i, w := range args {
		if w.dynamic {
			n.ok = false
			return
		}
		if !strings.HasPrefix(w.text, "-") || w.text == "-" || w.text == "--" {
			break
		}
		if strings.Contains(strings.TrimLeft(w.text, "-"), "c") && !strings.HasPrefix(w.text, "--") {
			if i+1 >= len(args) || args[i+1].dynamic {
				n.ok = false
				return
			}
			n.script(args[i+1].text, depth+1)
			return
		}
	}
	// bash script.sh, or bash reading standard input: what runs is not in
	// the command line.
	n.ok = false
}
