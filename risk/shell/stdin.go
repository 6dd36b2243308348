package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// What flows into a program on its standard input. A script reaches a
// shell, an interpreter, a database client or a scheduler through a pipe,
// a here-document or a redirection, often through middlemen (cat, tee,
// wrappers, { } groups, subshells, decoders: flow.go). Where the text can
// be known it is judged as the script it is, so echo 'rm -rf /' | sh and
// base64 -d <<< cm0gLXJmIC8K | bash are absurd; where it cannot, the
// consumer runs code nobody has seen, which is eval: a danger.

// stdinUse is how a statement reads its standard input.
type stdinUse uint8

const (
	notReading   stdinUse = iota
	shellReader           // sh, bash -s, source /dev/stdin: a script
	interpReader          // python3, perl -: a program
	dbReader              // mysql, psql, sqlite3: SQL and client commands
	atReader              // at, batch: a script run later
	cronReader            // crontab -: cron lines
	remoteReader          // ssh HOST with no command: a script for another host's shell
)

// consumer is a statement that runs what it reads.
type consumer struct {
	kind stdinUse
	name string
}

var (
	downloaders = map[string]bool{"curl": true, "wget": true, "fetch": true, "aria2c": true, "http": true, "https": true}
	// stdinWrappers run the command after their options with the same
	// standard input: sudo sh, busybox sh, env -i bash, nice python3.
	stdinWrappers = map[string]optSpec{"sudo": sudoSpec, "doas": mustSpec("-u -C"), "env": envSpec,
		"nice": mustSpec("-n"), "nohup": {}, "command": {}, "exec": execSpec, "timeout": timeoutSpec, "stdbuf": mustSpec("-i -o -e"),
		"time": timeSpec, "busybox": {}, "setsid": {}, "ionice": ioniceSpec, "chroot": chrootSpec, "runuser": mustSpec("-u -g"),
		"unbuffer": {}, "chronic": {}, "su": mustSpec("-s -g")}
)

func interpreterKnown(name string) bool {
	_, ok := interpreters[interpreterName(name)]
	return ok
}

// stdinPaths name standard input as a script file.
var stdinPaths = map[string]bool{"/dev/stdin": true, "/dev/fd/0": true, "/proc/self/fd/0": true, "-": true}

// callArgs returns the words of a plain call with the stdin wrappers in
// front of it removed (sudo -u x bash -> bash), or nil.
func callArgs(s *syntax.Stmt) []arg {
	for s != nil {
		switch c := s.Cmd.(type) {
		case *syntax.CallExpr:
			if len(c.Args) == 0 {
				return nil
			}
			return stripWrappers(words(c.Args, nil))
		case *syntax.Block:
			if len(c.Stmts) == 0 {
				return nil
			}
			s = c.Stmts[0]
		case *syntax.Subshell:
			if len(c.Stmts) == 0 {
				return nil
			}
			s = c.Stmts[0]
		default:
			return nil
		}
	}
	return nil
}

// stripWrappers drops wrappers and their options and assignments from the
// front of a command line.
func stripWrappers(argv []arg) []arg {
	for len(argv) > 0 {
		name, _, ok := commandName(argv[0])
		sp, wrap := stdinWrappers[name]
		if !ok || !wrap {
			return argv
		}
		argv = argv[1:]
		_, argv = sp.parseLeading(argv)
		for len(argv) > 0 && isAssignment(argv[0].text) {
			argv = argv[1:]
		}
		if name == "timeout" && len(argv) > 0 {
			argv = argv[1:] // the duration
		}
		if name == "chroot" && len(argv) > 0 {
			argv = argv[1:] // the new root
		}
		if name == "su" && len(argv) > 0 && !strings.HasPrefix(argv[0].text, "-") {
			// su USER with no -c reads commands for USER's shell.
			return []arg{{text: "sh"}}
		}
	}
	return argv
}

// consumerOf says whether a statement runs what it reads on standard input.
func consumerOf(s *syntax.Stmt) consumer {
	if c, ok := s.Cmd.(*syntax.CallExpr); ok && len(c.Args) > 0 {
		// Most pipes end in a reader (grep, head): the first word says
		// no consumer can be there, before every word is read.
		if name, _, ok := commandName(word(c.Args[0])); ok && !mayConsume(name) {
			return consumer{}
		}
	}
	argv := callArgs(s)
	if len(argv) == 0 {
		return consumer{}
	}
	name, _, ok := commandName(argv[0])
	if !ok {
		return consumer{}
	}
	rest := argv[1:]
	switch {
	case name == "source" || name == ".":
		if len(rest) > 0 && stdinPaths[rest[0].text] {
			return consumer{shellReader, name}
		}
	case shells[name]:
		for _, a := range rest {
			t := a.text
			if stdinPaths[t] {
				continue // bash /dev/stdin reads its script from standard input too
			}
			if !strings.HasPrefix(t, "-") || strings.Contains(t, "c") && !strings.HasPrefix(t, "--") || a.dynamic {
				return consumer{} // a script file or -c: judged by the shell handler
			}
		}
		return consumer{shellReader, name}
	case interpreterKnown(name):
		for _, a := range rest {
			t := a.text
			if t == "-" {
				continue
			}
			if !strings.HasPrefix(t, "-") || t == "-m" || strings.HasPrefix(t, "--") || a.dynamic {
				return consumer{} // a script, a module or an option this does not know
			}
		}
		return consumer{interpReader, name}
	case dbClients[name]:
		return consumer{dbReader, name}
	case name == "at" || name == "batch":
		for _, a := range rest {
			if in(a.text, "-f", "-l", "-r", "-d", "-c", "-V") {
				return consumer{}
			}
		}
		return consumer{atReader, name}
	case name == "crontab":
		opts, ops := crontabSpec.parseArgs(rest)
		for _, o := range opts {
			if !o.is('u', "") {
				return consumer{}
			}
		}
		if len(ops) == 0 || len(ops) == 1 && ops[0].text == "-" {
			return consumer{cronReader, name}
		}
	case name == "ssh":
		if _, r := sshSpec.parseLeading(rest); len(r) == 1 {
			return consumer{remoteReader, name}
		}
	}
	return consumer{}
}

// pipeline judges what one pipe hands its right side. Pipelines are
// left-associative ((a | b) | c), so each node judges its own junction,
// with what the whole left side writes.
func (j *judge) pipeline(b *syntax.BinaryCmd, depth int) {
	if j.pipeFed == nil {
		j.pipeFed = map[*syntax.Stmt]bool{}
	}
	j.pipeFed[b.Y] = true
	j.pipedToNet(b)
	c := consumerOf(b.Y)
	if c.kind == notReading || hasStdinRedirect(b.Y) {
		return
	}
	if d := downloadUpstream(b.X); d != "" && c.kind != dbReader {
		j.danger(d + " output piped into " + c.name + " runs downloaded code")
		return
	}
	j.consume(c, j.produced(b.X, flow{}), depth)
}

// stdinInput judges a here-document, here-string or < FILE given to a
// statement that runs what it reads (bash <<EOF, mysql < dump.sql).
func (j *judge) stdinInput(s *syntax.Stmt, depth int) {
	if len(s.Redirs) == 0 {
		return
	}
	in, ok := stdinOf(s)
	if !ok {
		return
	}
	if c := consumerOf(s); c.kind != notReading {
		j.consume(c, in, depth)
	}
}

// hasStdinRedirect reports whether a statement's input is its own.
func hasStdinRedirect(s *syntax.Stmt) bool {
	_, ok := stdinOf(s)
	return ok
}

// stdinOf returns what a statement's own redirections put on its standard
// input, and whether they do.
func stdinOf(s *syntax.Stmt) (flow, bool) {
	var in flow
	found := false
	for _, r := range s.Redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc == nil {
				in, found = flow{known: true}, true // an empty here-document
				continue
			}
			a := word(r.Hdoc)
			in, found = flow{text: a.text, known: !a.dynamic}, true
		case syntax.WordHdoc:
			a := word(r.Word)
			in, found = flow{text: a.text + "\n", known: !a.dynamic}, true
		case syntax.RdrIn:
			if t, ok := word(r.Word).lit(); ok && t == "/dev/null" {
				in, found = flow{known: true}, true
				continue
			}
			in, found = flow{}, true
		}
	}
	return in, found
}

// downloadUpstream returns the downloader anywhere upstream in a pipe.
func downloadUpstream(s *syntax.Stmt) string {
	if bc, ok := s.Cmd.(*syntax.BinaryCmd); ok && (bc.Op == syntax.Pipe || bc.Op == syntax.PipeAll) {
		if d := downloadUpstream(bc.X); d != "" {
			return d
		}
		return downloadUpstream(bc.Y)
	}
	if argv := callArgs(s); len(argv) > 0 {
		if name, _, _ := commandName(argv[0]); downloaders[name] {
			return name
		}
	}
	return ""
}

// consume judges text a consumer runs.
func (j *judge) consume(c consumer, in flow, depth int) {
	switch c.kind {
	case shellReader, atReader, remoteReader:
		if c.kind == atReader {
			j.danger(c.name + " schedules the script it reads")
		}
		if !in.known {
			if c.kind == remoteReader {
				j.unknown(c.name + " runs a script from its input on another host")
				return
			}
			j.danger(c.name + " runs a script it cannot see (from its input), like eval")
			return
		}
		if c.kind == shellReader {
			j.nested(in.text, depth)
			return
		}
		j.remote(func() { j.nested(in.text, depth) })
	case interpReader:
		j.danger(c.name + " runs the code piped into it or given in a here-document")
		if in.known {
			j.interpreterCode(c.name, in.text, depth)
		}
	case dbReader:
		if !in.known {
			j.danger(c.name + " runs SQL from its input, which cannot be seen here")
			return
		}
		j.sqlEscapes(c.name, in.text, depth)
	case cronReader:
		j.danger(c.name + " installs cron jobs from its input")
		if !in.known {
			return
		}
		for _, line := range strings.Split(in.text, "\n") {
			if cmd := cronCommand(line); cmd != "" {
				j.remote(func() { j.nested(cmd, depth) })
			}
		}
	}
}

// cronCommand returns the command of one crontab line: after five time
// fields or an @word; "" for comments, blank lines and assignments.
func cronCommand(line string) string {
	f := strings.Fields(line)
	switch {
	case len(f) == 0 || strings.HasPrefix(f[0], "#") || isAssignment(f[0]):
		return ""
	case strings.HasPrefix(f[0], "@") && len(f) > 1:
		return strings.Join(f[1:], " ")
	case len(f) > 5:
		return strings.Join(f[5:], " ")
	}
	return ""
}

// destructiveSQL records a danger when text sent to a database client holds
// a destructive word.
func (j *judge) destructiveSQL(name, text string) {
	up := strings.ToUpper(text)
	for _, w := range destructiveWords {
		if strings.Contains(up, w) {
			j.danger(name + " is sent " + w)
			return
		}
	}
}

// mayConsume reports whether a command named name may run what it reads
// on standard input, itself or through a wrapper.
func mayConsume(name string) bool {
	_, wrap := stdinWrappers[name]
	return wrap || shells[name] || interpreterKnown(name) || dbClients[name] ||
		in(name, "source", ".", "at", "batch", "crontab", "ssh")
}
